// The RMSNorm + quantize kernel (norm_quantize_kernel.hpp).
#include "norm_quantize_kernel.hpp"

#include <bit>
#include <limits>

#include "../gemm_amax/minifloat_encode.hpp"
#include "../rows/row_kernel.hpp"
#include "norm_row.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;
using runtime::DType;

namespace {

// The exponent of the element format's largest normal (OCP MX v1.0 section
// 6.3, "emax_elem"), as ops::quantize uses it.
int largest_exponent(DType data) {
  return data == DType::e4m3 ? 8 : data == DType::e5m2 ? 15 : 2;
}

int code_bits(DType data) {
  return data == DType::e2m1 ? 4 : 8;
}

std::uint32_t log2(int v) {
  return static_cast<std::uint32_t>(std::countr_zero(static_cast<unsigned>(v)));
}

class NormQuantizeKernel {
 public:
  NormQuantizeKernel(const NormQuantizeProblem& p, Target target) : p_(p), k_(kNormQuantizeKernel, target) {}

  ptx::Module build() {
    const NormProblem& n = p_.norm;
    auto tensor = [&](const std::optional<rows::RowMatrix>& m, const char* name) {
      return m ? rows::row_param(k_, name, n.shape, m->dtype) : Reg{};
    };
    Reg x = tensor(n.x, "x"), residual = tensor(n.residual, "residual"), weight = tensor(n.weight, "weight");
    Reg data = k_.param_ptr("data", std::min(16, n.shape.vector * code_bits(p_.options.format.data) / 8));
    Reg scales = k_.param_ptr("scales");
    Reg residual_out = tensor(n.residual_out, "residual_out");
    Reg rstd = n.rstd ? k_.param_ptr("rstd", 4) : Reg{};
    Reg y = p_.y ? rows::row_param(k_, "y", n.shape, n.y.dtype) : Reg{};
    Reg rows = k_.param(u32, "rows");
    RowKernel rk(k_, n.shape, n.n, "norm_quantize");
    NormRow norm(rk, n, NormRow::SquareSum::plain_first, p_.interleave);
    lane_ = k_.sreg(SReg::laneid);
    block_lanes_ = p_.options.format.vec / n.shape.vector;
    first_lane_ = (lane_ & static_cast<std::uint32_t>(block_lanes_ - 1)) == 0u;
    const ScaleFactorLayout layout{n.rows, n.n, 1, p_.options.format.vec};
    if (p_.options.format.scale == DType::e4m3) e4m3_table_ = e4m3_table(n.shape.block());
    // The thread's first vector's scale byte in a row's 128x4 scales and its
    // first code byte in a row of codes, computed once: vector j's are these
    // plus constants (immediate offsets of the stores), where its blocks'
    // step keeps their place in each group of 4 (scales_step()).
    thread_scales_ = scale_offset(block_of(rk, 0));
    thread_codes_ = k_.reg(u64);
    k_.mul_wide(thread_codes_, rk.element_base(), static_cast<std::uint32_t>(code_bits(p_.options.format.data)));
    k_.shr(thread_codes_, thread_codes_, 3u);

    if (staged_weight(rk)) weight_slots_ = stage_weight(rk, weight);

    auto loads = [&](const Reg& row) { return norm.load(x, residual, row); };
    auto body = [&](const Reg& row, const std::vector<RowFragment>& loaded) {
      const Reg row_scales = scales + scale_row_offset(row, layout);
      const RowPlaces places{row_scales, row_scales + thread_scales_};
      k_.if_else(row < rows, [&] {
        RowFragment h = norm.input(loaded, residual_out, row);
        // The weight is loaded a vector at a time, not held across the row's
        // reduction but for its first vector, requested before it: its
        // latency behind the reduction's (at a few rows, the layer's decode,
        // a round trip to memory less), four registers more. Vector j + 1's
        // is requested before vector j is quantized.
        auto weight_of = [&](int j) {
          return staged_weight(rk) ? load_staged_weight(rk, j)
                                   : rk.load_vector({n.weight->dtype, weight, 0}, nullptr, 1.0f, j);
        };
        std::optional<RowFragment> next;
        if (n.weight) next = weight_of(0);
        std::optional<NormRow::Statistics> st;
        if (p_.options.normalize) st = norm.statistics(h, x, residual, row);
        std::optional<RowFragment> w;
        auto value = [&](int j, int e) {
          if (st) return norm.output(h, *st, w, std::nullopt, j, e);
          if (!w) return h.value(j, e);
          Reg v = k_.reg(f32);
          k_.mul(v, h.value(j, e), w->value(j, e), {Round::rn});
          return v;
        };
        Reg data_row = k_.reg(u64);
        k_.mul_wide(data_row, row, static_cast<std::uint64_t>(p_.data_row_stride));
        data_row = data + data_row + thread_codes_;
        for (int j = 0; j < n.shape.vectors; ++j) {
          w = next;
          if (n.weight && j + 1 < n.shape.vectors) next = weight_of(j + 1);
          if (p_.y) rk.store_vector({n.y.dtype, y, n.y.row_stride}, &row, j, [&](int e) { return value(j, e); });
          quantize_vector(rk, j, value, data_row, places);
        }
        if (n.rstd) {
          Reg at_row = k_.reg(u64);
          k_.mul_wide(at_row, row, 4);
          Reg address = rstd + at_row;
          k_.guarded(rk.leader(), [&] { k_.st(Space::global, f32, at(address), st->rstd); });
        }
      }, [&] {
        // A padding row of the 128x4 layout: zero scales.
        for (int j = 0; j < n.shape.vectors; ++j)
          store_scale(rk, j, places, k_.mov(u32, 0u));
      });
    };
    // The rows padded to the scale layout's 128: their loads clamped to the
    // last row. Not prefetched: with the next row's loads ahead MXFP8 measured
    // 0.51-0.56 of the copy against 0.59-0.64 without (H200, 2026-11-29).
    const auto padded = static_cast<std::uint32_t>(p_.padded_rows());
    rk.for_each_row(padded, [&](const Reg& row) { body(row, loads(k_.min(row, rows - 1u))); });
    return k_.module();
  }

 private:
  // The byte offset of row `row`'s scales in the 128x4 layout (u64):
  // (row/128)·RK·512 + (row%32)·16 + ((row/32)%4)·4 (scale_factor_layout.hpp).
  Reg scale_row_offset(const Reg& row, const ScaleFactorLayout& layout) {
    Reg offset = (row >> 7u) * static_cast<std::uint32_t>(layout.k_tiles() * 512) + (row & 31u) * 16u +
                 ((row >> 5u) & 3u) * 4u;
    Reg wide = k_.reg(u64);
    k_.cvt(wide, offset);
    return wide;
  }

  // The scale block of vector j (u32): its first element / vec.
  Reg block_of(const RowKernel& rk, int j) {
    return (rk.element_base() + static_cast<std::uint32_t>(rk.element_offset(j, 0))) >>
           log2(p_.options.format.vec);
  }
  // Block kb's byte in a row's 128x4 scales (u64): (kb/4)·512 + kb%4.
  Reg scale_offset(const Reg& kb) {
    Reg wide = k_.reg(u64);
    k_.cvt(wide, (kb >> 2u) * 512u + (kb & 3u));
    return wide;
  }
  // The blocks between a thread's vectors where that is a multiple of 4 (a
  // vector's scale byte then the first one's plus (step/4)·512), else 0.
  std::int64_t scales_step(const RowKernel& rk) const {
    const std::int64_t elements = rk.element_offset(1, 0) - rk.element_offset(0, 0), vec = p_.options.format.vec;
    return elements % (4 * vec) == 0 ? elements / vec : 0;
  }

  // A 16-bit weight converted to f32 once a thread, in shared memory (each
  // thread its own slots), where the rows are many (interleave 2: each
  // thread loops over many rows): a row's vector of 8 is then two
  // ld.shared.v4 where a global load and 8 conversions. Each 16 bytes of a
  // vector in its own plane, a warp's reads consecutive (no bank conflict):
  // quad h of vector j of thread t at ((j·quads + h)·block + t)·16.
  bool staged_weight(const RowKernel& rk) const {
    const NormProblem& n = p_.norm;
    return n.weight && p_.interleave > 1 && runtime::bits(n.weight->dtype) == 16 && n.shape.vector % 4 == 0 &&
           staged_bytes(rk) <= kStagedWeightBytes;
  }
  std::int64_t staged_bytes(const RowKernel& rk) const {
    return std::int64_t{4} * p_.norm.shape.vector * p_.norm.shape.vectors * rk.shape().block();
  }
  Reg stage_weight(const RowKernel& rk, const Reg& weight) {
    const NormProblem& n = p_.norm;
    Reg slots = k_.address_of(k_.shared("staged_weight", staged_bytes(rk), 16)) + k_.sreg(SReg::tid_x) * 16u;
    for (int j = 0; j < n.shape.vectors; ++j) {
      const RowFragment w = rk.load_vector({n.weight->dtype, weight, 0}, nullptr, 1.0f, j);
      for (int h = 0; h < n.shape.vector / 4; ++h) {
        Regs quad;
        for (int e = 0; e < 4; ++e) quad.push_back(w.value(j, 4 * h + e));
        k_.st(Space::shared, f32, at(slots, staged_offset(rk, j, h)), quad);
      }
    }
    return slots;
  }
  RowFragment load_staged_weight(const RowKernel& rk, int j) {
    const int vector = p_.norm.shape.vector;
    std::vector<Regs> words(static_cast<std::size_t>(j) + 1);
    for (int h = 0; h < vector / 4; ++h) {
      Regs quad = k_.regs(f32, 4);
      k_.ld(Space::shared, f32, quad, at(weight_slots_, staged_offset(rk, j, h)));
      words.back().insert(words.back().end(), quad.begin(), quad.end());
    }
    return RowFragment(k_, DType::f32, std::move(words));
  }
  std::int64_t staged_offset(const RowKernel& rk, int j, int h) const {
    return (std::int64_t{j} * (p_.norm.shape.vector / 4) + h) * rk.shape().block() * 16;
  }

  // A row's scales (u64) and those at the thread's first vector.
  struct RowPlaces {
    Reg scales, thread_scales;
  };

  // The block's first lane writes `code` (u32, a byte) as vector j's block's scale.
  void store_scale(const RowKernel& rk, int j, const RowPlaces& places, const Reg& code) {
    Reg base = places.thread_scales;
    std::int64_t offset = j * (scales_step(rk) / 4) * 512;
    if (scales_step(rk) == 0) base = places.scales + scale_offset(block_of(rk, j)), offset = 0;
    Pred writer = first_lane_;
    if (const auto& in = rk.in_row(j)) writer = *in && first_lane_;
    // The byte computed by every lane: a register written only under the
    // guard would stay live around the row loop (ptxas keeps its old value
    // for the lanes that skip it), and spill.
    Reg byte = k_.reg(u16);
    k_.cvt(byte, code);
    k_.guarded(writer, [&] { k_.st(Space::global, u8, at(base, offset), byte); });
  }

  // NVFP4's scales: each e4m3 code's value d and rn(1/d) (the quotients'
  // divisor and multiplier), a table of 128 pairs in shared memory (a
  // block's scale is never negative) filled once a CTA: a block looks its
  // pair up with one ld.shared.v2 where converting the code (e4m3 -> f16 ->
  // f32) and rcp.rn (a reciprocal, its corrections and its slow path's test)
  // took about ten instructions. Returns the table's shared address (u32).
  Reg e4m3_table(int threads) {
    Reg base = k_.address_of(k_.shared("e4m3_scale_table", 128 * 8, 8));
    k_.for_range(k_.sreg(SReg::tid_x), 128u, static_cast<std::uint32_t>(threads), [&](const Reg& code) {
      Reg value = e4m3_value(code), inverse = k_.reg(f32);
      k_.rcp(inverse, value, {Round::rn});
      k_.st(Space::shared, f32, at(base + code * 8u), Regs{value, inverse});
    });
    k_.bar_sync();
    return base;
  }
  // The value of e4m3 code `code` (u32, 0..127): e4m3 -> f16 -> f32, exactly.
  Reg e4m3_value(const Reg& code) {
    Reg narrow = k_.reg(b16), halves = k_.reg(b32), low = k_.reg(b16), high = k_.reg(b16), value = k_.reg(f32);
    k_.cvt(u16, u32, narrow, code);
    k_.cvt_unpack_fp8(e4m3x2, halves, narrow);
    k_.unpack({low, high}, halves);
    k_.cvt(f32, f16, value, low);
    return value;
  }

  // The block scale of `amax` (u32 bits of the block's largest magnitude)
  // as ops::quantize picks it (its code, u32), and the multiplier (or, for
  // e4m3 scales, the divisor and its reciprocal) turning an element into
  // its code's value.
  struct Scale {
    Reg code, factor, inverse;
    bool divide = false;
  };
  Scale block_scale(const Reg& amax) {
    const BlockScaledFormat& f = p_.options.format;
    Pred is_nan = amax > 0x7f800000u, is_zero = amax == 0u;
    Scale s;
    if (f.scale == DType::e8m0) {
      // clamp(floor(log2 amax) - emax, -127, 127) + 127 is max(E - emax, 0)
      // for amax's exponent field E: below the normals (E 0) floor(log2 amax)
      // - emax is under -127 whatever the mantissa, and E - emax stays
      // below 254 (so 2^(127 - code) is a normal f32). 127 (1.0) for 0, 255
      // (NaN) for NaN; the factor of an all-zero block is moot (its codes
      // are ±0 at any scale).
      Reg code = k_.max((amax >> 23u).as(s32) - largest_exponent(f.data), 0);
      Reg exponent_field = k_.reg(s32), bits = k_.reg(b32);
      k_.mad(exponent_field, code, -(1 << 23), 254 << 23);  // 2^(127 - code)'s bits
      k_.mov(bits, k_.selp(0x7fffffff, exponent_field, is_nan));
      s.code = k_.selp(255, k_.selp(127, code, is_zero), is_nan).as(u32);
      s.factor = bits.as(f32);
      return s;
    }
    // e4m3 (NVFP4): amax / 6 rounded to e4m3 (satfinite), 1 (its smallest
    // subnormal) where that is 0; 0x38 (1.0) for amax 0; NaN gives 0x7F.
    // amax / 6 as divide() divides by an e4m3 value (6 is one); where it
    // falls below f32's normals the e4m3 code is 0 either way. amax is +0,
    // positive or NaN, so the correction holds wherever the product is
    // finite (quotient()'s guard of a zero's sign is moot: +0 corrects to
    // +0); an infinite amax keeps the product (inf: 0x7E), a NaN too (0x7F).
    const Quotient q = divide(amax.as(f32), k_.mov(f32, imm_f32(6.0f)), k_.mov(f32, imm_f32(1.0f / 6.0f)));
    const Reg sixth = k_.selp(q.corrected, q.product, q.product < imm_f32(std::numeric_limits<float>::infinity()));
    Reg pair = k_.reg(b16), wide = k_.reg(u32);
    k_.cvt_pack(e4m3x2, pair, imm_f32(0.0f), sixth);  // the high byte 0.0's code, 0
    k_.cvt(u32, u16, wide, pair);
    Reg code = k_.max(wide, 1u);
    k_.selp(code, 0x38u, code, is_zero);
    s.code = code;
    Regs entry = k_.regs(f32, 2);
    k_.ld(Space::shared, f32, entry, at(e4m3_table_ + code * 8u));
    s.factor = entry[0], s.inverse = entry[1];
    s.divide = true;
    return s;
  }

  // Vector j of the row: its block's amax across the block's lanes, the
  // scale, the codes (stored k-major), the scale byte.
  void quantize_vector(const RowKernel& rk, int j, const rows::RowValue& value, const Reg& data_row,
                       const RowPlaces& places) {
    const NormProblem& n = p_.norm;
    std::vector<Reg> v;
    Reg amax = k_.mov(u32, 0u);
    for (int e = 0; e < n.shape.vector; ++e) {
      v.push_back(value(j, e));
      k_.max(amax, amax, v.back().as(b32) & 0x7fffffffu);
    }
    tile::warp::allreduce(k_, {amax}, tile::max(), block_lanes_);
    const Scale s = block_scale(amax);
    // Each element's code: of its product by the factor (exact, a power of
    // two), or of its quotient by the divisor. The e2m1 codes take their sign
    // from the product x·r (an arithmetic NaN is positive) and their
    // magnitude from the corrected quotient unguarded (where that is NaN the
    // quotient is infinite or NaN: +-6 either way; quotient()'s guards are
    // for its zeros' signs, which the product keeps).
    const bool e2m1 = p_.options.format.data == DType::e2m1;
    std::vector<Reg> signs, scaled;
    for (const Reg& x : v) {
      if (s.divide) {
        const Quotient q = divide(x, s.factor, s.inverse);
        signs.push_back(q.product);
        scaled.push_back(e2m1 ? q.corrected : guarded(q));
      } else {
        scaled.push_back(k_.reg(f32));
        k_.mul(scaled.back(), x, s.factor, {Round::rn});
        signs.push_back(scaled.back());
      }
    }
    store_codes(rk, j, signs, scaled, data_row);
    store_scale(rk, j, places, s.code);
  }

  // x / d rounded to nearest even, as div.rn.f32 gives it, from r = 1/d
  // rounded (rcp.rn, e4m3_table()): q = x·r, then q + (x - q·d)·r with the
  // remainder exact in an fma (Markstein's correction; PTX ISA 9.7.3 fma).
  // Three instructions where div.rn is a sequence with a slow path. Exact for
  // every e4m3 divisor d and every normal quotient (checked exhaustively over
  // x's mantissas: norm_quantize_sim_test.cpp); quotients below the f32
  // normals encode as 0 either way. Where q is not finite (x infinite or
  // NaN, or x·r past the largest) the correction is NaN.
  struct Quotient {
    Reg product, corrected;
  };
  Quotient divide(const Reg& x, const Reg& d, const Reg& r) {
    Quotient q{k_.reg(f32), k_.reg(f32)};
    Reg minus_q = k_.reg(f32), remainder = k_.reg(f32);
    k_.mul(q.product, x, r, {Round::rn});
    k_.neg(minus_q, q.product);
    k_.fma(remainder, minus_q, d, x);
    k_.fma(q.corrected, remainder, r, q.product);
    return q;
  }
  // The quotient where the correction holds, else the product: where q is
  // not finite, and where it is 0 (x ±0: the correction's sum, +0 + -0,
  // would drop -0's sign; or x·r below the f32 subnormals, ±0 either way).
  Reg guarded(const Quotient& q) {
    Reg magnitude = k_.reg(f32);
    k_.abs(magnitude, q.product);
    Pred corrects = magnitude < imm_f32(std::numeric_limits<float>::infinity()) && magnitude > imm_f32(0.0f);
    return k_.selp(q.corrected, q.product, corrects);
  }
  Reg quotient(const Reg& x, const Reg& d, const Reg& r) { return guarded(divide(x, d, r)); }

  // The codes of vector j's elements, rounded to nearest even and saturated,
  // packed (FP4 two a byte, low nibble first: the e2m1 codes' signs those
  // of `signs`) and stored.
  void store_codes(const RowKernel& rk, int j, const std::vector<Reg>& signs, const std::vector<Reg>& scaled,
                   const Reg& data_row) {
    const DType data = p_.options.format.data;
    const int bits = code_bits(data), vector = p_.norm.shape.vector;
    Regs words;  // 32-bit words of codes, low element first
    if (data == DType::e2m1) {
      words.push_back(emit_e2m1_codes(k_, signs, scaled));
    } else {
      const Type pair_type = data == DType::e4m3 ? e4m3x2 : e5m2x2;
      std::vector<Reg> pairs;
      for (int e = 0; e < vector; e += 2) {
        Reg pair = k_.reg(b16);
        const Reg& lo = scaled[static_cast<std::size_t>(e)];
        if (e + 1 < vector)
          k_.cvt_pack(pair_type, pair, scaled[static_cast<std::size_t>(e + 1)], lo);
        else
          k_.cvt_pack(pair_type, pair, imm_f32(0.0f), lo);
        pairs.push_back(pair);
      }
      for (std::size_t i = 0; i < pairs.size(); i += 2) {
        Reg word = k_.reg(b32);
        if (i + 1 < pairs.size()) {
          k_.pack(word, {pairs[i], pairs[i + 1]});
        } else {
          Reg wide = k_.reg(u32);
          k_.cvt(u32, u16, wide, pairs[i]);
          word = wide;
        }
        words.push_back(word);
      }
    }
    const int bytes = vector * bits / 8;  // 1 (two FP4 codes) to 8
    const Reg& address = data_row;  // at the thread's first code
    const std::int64_t offset = rk.element_offset(j, 0) * bits / 8;
    Reg narrow;
    if (bytes < 4) {  // outside the guard, as store_scale's byte
      narrow = k_.reg(u16);
      k_.cvt(narrow, words[0]);
    }
    auto store = [&] {
      if (bytes == 8) {
        k_.st(Space::global, b32, at(address, offset), words);
      } else if (bytes == 4) {
        k_.st(Space::global, b32, at(address, offset), words[0]);
      } else {
        k_.st(Space::global, bytes == 2 ? b16 : u8, at(address, offset), narrow);
      }
    };
    const auto& in = rk.in_row(j);
    in ? k_.guarded(*in, store) : store();
  }

  const NormQuantizeProblem& p_;
  Kernel k_;
  Reg lane_;
  int block_lanes_ = 1;
  Pred first_lane_;
  Reg e4m3_table_;  // NVFP4: e4m3_table()'s address
  Reg weight_slots_;  // staged_weight(): the thread's first slot (u32 shared address)
  // A CTA's static shared memory for the staged weight: at most 48 KB (past
  // that a kernel needs dynamic shared memory), the reductions' and NVFP4's table beside it.
  static constexpr std::int64_t kStagedWeightBytes = 40 * 1024;
  Reg thread_scales_, thread_codes_;  // u64 byte offsets of the thread's first vector (build())
};

}  // namespace

std::string NormQuantizeProblem::describe() const {
  const BlockScaledFormat& f = options.format;
  return std::string(options.normalize ? "rms " : "quantize ") + std::to_string(norm.rows) + " x " +
         std::to_string(norm.n) + " " + std::string(runtime::name(norm.x.dtype)) + " -> " +
         std::string(runtime::name(f.data)) + " with " + std::string(runtime::name(f.scale)) + " scales per " +
         std::to_string(f.vec) + (norm.residual ? ", residual" : "") + (norm.weight ? ", weight" : "") +
         (norm.rstd ? ", rstd" : "") + (y ? ", y " + std::string(runtime::name(norm.y.dtype)) : "");
}

void choose_norm_quantize_shape(NormQuantizeProblem& p, const runtime::Device& device) {
  NormProblem& norm = p.norm;
  const rows::RowShape& narrow = norm.shape;
  if (norm.rows <= rows::persistent_groups(narrow, norm.rows, device) || narrow.ctas > 1 || narrow.chunks > 1 ||
      narrow.threads < 64)
    return;
  const int held = norm.residual ? 2 : 1;  // x (h), and the residual while h is formed
  constexpr int kResidentThreads = 512;
  const rows::RowShapeRequest request = rows::row_request(norm.n, narrow.vector, held, 2 * narrow.vectors,
                                                          norm.request.max_ctas, false, kResidentThreads);
  std::vector<std::string> why;
  const auto wide = rows::row_shape(request, why);
  if (!wide || wide->ctas != 1 || wide->chunks != 1 || wide->vector != narrow.vector ||
      wide->vectors != 2 * narrow.vectors || 2 * wide->threads != narrow.threads)
    return;
  norm.shape = *wide, norm.request = request, p.interleave = 2;
}

ptx::Module build_norm_quantize_kernel(const NormQuantizeProblem& problem, Target target) {
  return NormQuantizeKernel(problem, target).build();
}

}  // namespace warpforge::ops
