#include "row_kernel.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "warpforge/ops/half.hpp"

namespace warpforge::ops::rows {

using namespace dsl;
using runtime::DType;

namespace {

// The most 32-bit values one allreduce of a row kernel combines (the
// cross-entropy's online logsumexp and smoothing sum, two scaled sums).
constexpr int kReductionValues = 6;

int bytes_of(DType t) {
  return runtime::bits(t) / 8;
}

std::uint32_t log2(int v) {
  return static_cast<std::uint32_t>(std::countr_zero(static_cast<unsigned>(v)));
}

// The 16-bit encoding of `value` in a 16-bit float dtype.
std::uint16_t half_bits(DType t, float value) {
  return t == DType::bf16 ? f32_to_bf16_bits(value) : f32_to_f16_bits(value);
}

}  // namespace

Reg row_param(Kernel& k, const std::string& name, const RowShape& shape, DType dtype, int interleave) {
  return k.param_ptr(name, std::min(16, shape.vector * interleave * bytes_of(dtype)));
}

std::uint32_t word_of(DType dtype, float value) {
  if (dtype == DType::f32) return std::bit_cast<std::uint32_t>(value);
  const std::uint32_t h = half_bits(dtype, value);
  return h | (h << 16);
}

Reg RowFragment::value(int j, int e) const {
  Kernel& k = *k_;
  const Regs& w = words_[static_cast<std::size_t>(j)];
  if (dtype_ == DType::f32) return w[static_cast<std::size_t>(e)].as(f32);
  Reg word;
  Reg out = k.reg(b32);
  if (w[0].type() == b16) {  // a vector of one 16-bit element
    word = k.reg(b32);
    k.cvt(u32, u16, word, w[0]);
    if (dtype_ == DType::bf16) {
      k.shl(out, word, 16u);  // a bf16 is the upper half of its f32
      return out.as(f32);
    }
    Reg f = k.reg(f32);
    k.cvt(f32, f16, f, w[0]);
    return f;
  }
  word = w[static_cast<std::size_t>(e / 2)];
  if (dtype_ == DType::bf16) {
    if (e % 2 == 0)
      k.shl(out, word, 16u);
    else
      k.and_(out, word, 0xffff0000u);
    return out.as(f32);
  }
  Reg lo = k.reg(b16), hi = k.reg(b16), f = k.reg(f32);
  k.unpack({lo, hi}, word);
  k.cvt(f32, f16, f, e % 2 == 0 ? lo : hi);
  return f;
}

RowKernel::RowKernel(Kernel& k, const RowShape& shape, std::int64_t n, const std::string& name)
    : k_(&k),
      shape_(shape),
      n_(n),
      reduction_(k, {.warps = shape.threads / 32, .ctas = shape.ctas, .groups = shape.rows_per_cta},
                 kReductionValues, name + "_reduction") {
  // At least shape.resident_threads resident an SM (1024: registers for
  // 64 a thread), so that one group's loads are in flight while another
  // reduces.
  k.maxntid(static_cast<std::uint32_t>(shape.block()));
  k.minnctapersm(static_cast<std::uint32_t>(std::max(1, shape.resident_threads / shape.block())));
  Reg tid = k.sreg(SReg::tid_x);
  Reg t = shape.rows_per_cta > 1 ? tid & static_cast<std::uint32_t>(shape.threads - 1) : tid;
  Reg cluster = k.sreg(SReg::ctaid_x), clusters = k.sreg(SReg::nctaid_x);
  if (shape.ctas > 1) {
    cluster = cluster >> log2(shape.ctas);
    clusters = clusters >> log2(shape.ctas);
    first_vector_ = k.sreg(SReg::cluster_ctarank) * shape.threads + t;
  } else {
    first_vector_ = t;
  }
  group_ = cluster;
  groups_ = clusters;
  if (shape.rows_per_cta > 1) {
    group_ = cluster * shape.rows_per_cta + (tid >> log2(shape.threads));
    groups_ = clusters * shape.rows_per_cta;
  }
  leader_ = first_vector_ == 0u;
  const std::int64_t vectors_in_row = n / shape.vector;
  for (int j = 0; j < shape.vectors; ++j) {
    if ((j + 1) * vector_step() <= vectors_in_row)
      in_row_.emplace_back(std::nullopt);
    else
      in_row_.emplace_back(first_vector_ + static_cast<std::uint32_t>(j * vector_step()) <
                           static_cast<std::uint32_t>(vectors_in_row));
  }
}

void RowKernel::for_each_row(const Src& rows, const std::function<void(const Reg& row)>& body) {
  k_->for_range(group_, rows, groups_, body);
}

void RowKernel::for_each_row_prefetched(
    const Src& end, const Reg& rows, const RowLoads& load,
    const std::function<void(const Reg& row, const std::vector<RowFragment>&)>& body) {
  Kernel& k = *k_;
  k.if_then(group_ < end, [&] {
    Reg last = rows - 1u;
    std::vector<RowFragment> current = load(k.min(group_, last));
    k.for_range(group_, end, groups_, [&](const Reg& row) {
      std::vector<RowFragment> next = load(k.min(row + groups_, last));
      body(row, current);
      // The next row's registers become the current row's.
      for (std::size_t f = 0; f < current.size(); ++f)
        for (int j = 0; j < shape_.vectors; ++j)
          for (std::size_t w = 0; w < current[f].words(j).size(); ++w)
            k.mov(current[f].words(j)[w], next[f].words(j)[w]);
    });
  });
}

Reg RowKernel::in_row_or(int j, const Reg& value, const Src& otherwise) const {
  const auto& p = in_row(j);
  if (!p) return value;
  return k_->selp(value, otherwise, *p);
}

Reg RowKernel::element_base(const Reg* chunk) const {
  Reg vector = first_vector_;
  if (chunk) vector = *chunk * static_cast<std::uint32_t>(shape_.vectors * vector_step()) + vector;
  return vector * shape_.vector;
}

void RowKernel::for_each_chunk(const std::function<void(const Reg& chunk)>& body) {
  k_->for_range(0u, static_cast<std::uint32_t>(shape_.chunks), 1u, body);
}

std::vector<std::optional<Pred>> RowKernel::in_row_of(const Reg* chunk) const {
  if (!chunk) return in_row_;
  const std::int64_t vectors_in_row = n_ / shape_.vector;
  Reg first = *chunk * static_cast<std::uint32_t>(shape_.vectors * vector_step()) + first_vector_;
  std::vector<std::optional<Pred>> p;
  for (int j = 0; j < shape_.vectors; ++j)
    p.emplace_back(first + static_cast<std::uint32_t>(j * vector_step()) < static_cast<std::uint32_t>(vectors_in_row));
  return p;
}

Pred RowKernel::owns(const Reg& index, const Reg* chunk) const {
  // The thread's vectors start at element_base and repeat every vector_step()
  // vectors (a power of two's elements): the element is the thread's where
  // its offset from the base is below the pass's span and within a vector of
  // a multiple of the step. Unsigned: an index below the base wraps past the span.
  const auto step = static_cast<std::uint32_t>(vector_step() * shape_.vector);
  Reg relative = index - element_base(chunk);
  return relative < step * static_cast<std::uint32_t>(shape_.vectors) &&
         (relative & (step - 1)) < static_cast<std::uint32_t>(shape_.vector);
}

void RowKernel::store_element(const RowOperand& t, const Reg& row, const Reg& index, const Reg& value) const {
  Kernel& k = *k_;
  Reg offset = k.reg(u64);
  k.mul_wide(offset, index, static_cast<std::uint32_t>(bytes_of(t.dtype)));
  const Addr where = at(row_address(t, row) + offset);
  if (t.dtype == DType::f32) return k.st(Space::global, f32, where, value);
  Reg half = k.reg(b16);
  k.cvt(t.dtype == DType::bf16 ? bf16 : f16, f32, half, value, {Round::rn});
  k.st(Space::global, b16, where, half);
}

Reg RowKernel::row_address(const RowOperand& t, const Reg& row) const {
  Kernel& k = *k_;
  const std::uint64_t stride_bytes = static_cast<std::uint64_t>(t.row_stride) * bytes_of(t.dtype);
  Reg offset = k.reg(u64);
  if (stride_bytes < (std::uint64_t{1} << 32)) {
    k.mul_wide(offset, row, stride_bytes);
  } else {
    k.cvt(offset, row);
    k.mul(offset, offset, stride_bytes);
  }
  return t.base + offset;
}

Reg RowKernel::thread_address(const RowOperand& t, const Reg* row, const Reg* chunk) const {
  Reg offset = k_->reg(u64);
  k_->mul_wide(offset, first_vector_, shape_.vector * t.interleave * bytes_of(t.dtype));
  Reg address = (row && t.row_stride != 0 ? row_address(t, *row) : t.base) + offset;
  if (!chunk) return address;
  Reg pass = k_->reg(u64);
  k_->mul_wide(pass, *chunk, shape_.capacity() * t.interleave * bytes_of(t.dtype));
  return address + pass;
}

RowFragment RowKernel::load(const RowOperand& t, const Reg* row, float fill, const Reg* chunk) const {
  return load_vectors(t, row, fill, chunk, 0, shape_.vectors);
}

RowFragment RowKernel::load_vector(const RowOperand& t, const Reg* row, float fill, int j) const {
  return load_vectors(t, row, fill, nullptr, j, j + 1);
}

RowFragment RowKernel::load_vectors(const RowOperand& t, const Reg* row, float fill, const Reg* chunk, int first,
                                    int end) const {
  Kernel& k = *k_;
  const int vector_bytes = shape_.vector * t.interleave * bytes_of(t.dtype);
  const int access = std::min(16, vector_bytes);
  Reg address = thread_address(t, row, chunk);
  const auto in = in_row_of(chunk);
  std::vector<Regs> words(static_cast<std::size_t>(first));
  for (int j = first; j < end; ++j) {
    const std::int64_t at_vector = j * vector_step() * vector_bytes;
    const auto& p = in[static_cast<std::size_t>(j)];
    Regs w;
    if (vector_bytes == 2) {
      w.push_back(k.reg(b16));
      if (p) k.mov(w[0], static_cast<std::uint32_t>(word_of(t.dtype, fill) & 0xffffu));
      auto load = [&] { k.ld(Space::global, b16, w[0], at(address, at_vector)); };
      p ? k.guarded(*p, load) : load();
    } else {
      w = k.regs(b32, vector_bytes / 4);
      if (p)
        for (const Reg& r : w) k.mov(r, word_of(t.dtype, fill));
      auto load = [&] {
        for (int a = 0; a < vector_bytes / access; ++a) {
          const Regs part(w.begin() + a * access / 4, w.begin() + (a + 1) * access / 4);
          const Addr where = at(address, at_vector + a * access);
          if (part.size() == 1)
            k.ld(Space::global, b32, part[0], where);
          else
            k.ld(Space::global, b32, part, where);
        }
      };
      p ? k.guarded(*p, load) : load();
    }
    words.push_back(std::move(w));
  }
  return RowFragment(k, t.dtype, std::move(words));
}

RowFragment RowKernel::pack(DType dtype, const std::function<Reg(int j, int e)>& value, int interleave) const {
  return pack_vectors(dtype, value, interleave, 0, shape_.vectors);
}

RowFragment RowKernel::pack_vectors(DType dtype, const std::function<Reg(int j, int e)>& value, int interleave,
                                    int first, int end) const {
  const int elements = shape_.vector * interleave;
  Kernel& k = *k_;
  const Type packed = dtype == DType::bf16 ? bf16x2 : f16x2;
  const Type half = dtype == DType::bf16 ? bf16 : f16;
  std::vector<Regs> words(static_cast<std::size_t>(first));
  for (int j = first; j < end; ++j) {
    Regs w;
    if (dtype == DType::f32) {
      for (int e = 0; e < elements; ++e) w.push_back(value(j, e).as(b32));
    } else if (elements == 1) {
      w.push_back(k.reg(b16));
      k.cvt(half, f32, w[0], value(j, 0), {Round::rn});
    } else {
      for (int e = 0; e < elements; e += 2) {
        Reg lo = value(j, e), hi = value(j, e + 1);
        w.push_back(k.reg(b32));
        k.cvt_pack(packed, w.back(), hi, lo);
      }
    }
    words.push_back(std::move(w));
  }
  return RowFragment(k, dtype, std::move(words));
}

void RowKernel::store(const RowOperand& t, const Reg* row, const RowFragment& values, const Reg* chunk) const {
  store_vectors(t, row, values, chunk, 0, shape_.vectors);
}

void RowKernel::store_vector(const RowOperand& t, const Reg* row, int j, const std::function<Reg(int e)>& value) const {
  store_vectors(t, row, pack_vectors(t.dtype, [&](int, int e) { return value(e); }, t.interleave, j, j + 1), nullptr,
                j, j + 1);
}

void RowKernel::store_vectors(const RowOperand& t, const Reg* row, const RowFragment& values, const Reg* chunk,
                              int first, int end) const {
  Kernel& k = *k_;
  const int vector_bytes = shape_.vector * t.interleave * bytes_of(t.dtype);
  const int access = std::min(16, vector_bytes);
  Reg address = thread_address(t, row, chunk);
  const auto in = in_row_of(chunk);
  for (int j = first; j < end; ++j) {
    const std::int64_t at_vector = j * vector_step() * vector_bytes;
    const Regs& w = values.words(j);
    auto store = [&] {
      if (vector_bytes == 2) return k.st(Space::global, b16, at(address, at_vector), w[0]);
      for (int a = 0; a < vector_bytes / access; ++a) {
        const Regs part(w.begin() + a * access / 4, w.begin() + (a + 1) * access / 4);
        const Addr where = at(address, at_vector + a * access);
        if (part.size() == 1)
          k.st(Space::global, b32, where, part[0]);
        else
          k.st(Space::global, b32, where, part);
      }
    };
    const auto& p = in[static_cast<std::size_t>(j)];
    p ? k.guarded(*p, store) : store();
  }
}

void RowKernel::allreduce(const Regs& values, const tile::Combine& combine) {
  reduction_.allreduce(values, combine);
}

void RowKernel::allreduce_in_cta(const Regs& values, const tile::Combine& combine) {
  reduction_.allreduce_in_cta(values, combine);
}

void RowKernel::allreduce_across_ctas(const Regs& values, const tile::Combine& combine) {
  reduction_.allreduce_across_ctas(values, combine);
}

}  // namespace warpforge::ops::rows
