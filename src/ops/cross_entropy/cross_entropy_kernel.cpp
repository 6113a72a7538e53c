// The cross-entropy kernels (cross_entropy_kernel.hpp).
#include "cross_entropy_kernel.hpp"

#include <limits>

#include "../rows/online_softmax.hpp"
#include "../rows/row_kernel.hpp"
#include "../rows/scaled_sum.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;

namespace {

constexpr float kLn2 = 0.69314718055994530942f;
const float kMinusInf = -std::numeric_limits<float>::infinity();

// A label as s64 (i32 labels sign-extended).
Reg load_label(Kernel& k, const Reg& labels, const Reg& row, runtime::DType dtype) {
  Reg offset = k.reg(u64), label = k.reg(s64);
  const int bytes = dtype == runtime::DType::i64 ? 8 : 4;
  k.mul_wide(offset, row, bytes);
  if (bytes == 8) {
    k.ld(Space::global, s64, label, at(labels + offset));
  } else {
    Reg narrow = k.reg(s32);
    k.ld(Space::global, s32, narrow, at(labels + offset));
    k.cvt(label, narrow);
  }
  return label;
}

// The sum of the count kernel's per-CTA counts, in every thread: each warp
// adds them lane-strided, then redux.sync.add (PTX ISA 9.7.13.10).
Reg valid_count(Kernel& k, const Reg& counts, int ctas) {
  Reg lane = k.sreg(SReg::laneid), mine = k.mov(u32, 0u);
  k.for_range(lane, static_cast<std::uint32_t>(ctas), 32u, [&](const Reg& i) {
    Reg offset = k.reg(u64), c = k.reg(u32);
    k.mul_wide(offset, i, 4);
    k.ld(Space::global, u32, c, at(counts + offset));
    k.add(mine, mine, c);
  });
  return tile::warp::redux(k, Redux::add, mine);
}

// The held exponentials of a prefetching kernel, in shared memory rather
// than registers (which then hold the next row's words): each thread its own
// slots, 16-byte accesses at (j·accesses + a)·block·16 + tid·16, so that a
// warp's accesses are consecutive (no bank conflicts). No thread reads
// another's: no barrier.
class StagedExponentials {
 public:
  StagedExponentials(Kernel& k, const rows::RowShape& shape)
      : k_(k), shape_(shape), width_(std::min(4, shape.vector)) {
    Reg base = k.address_of(k.dynamic_shared("cross_entropy_exponentials", 16));
    mine_ = base + k.sreg(SReg::tid_x) * static_cast<std::uint32_t>(4 * width_);
  }
  void store(int j, const std::vector<Reg>& values) {
    for (int a = 0; a < shape_.vector / width_; ++a) {
      const Regs part(values.begin() + a * width_, values.begin() + (a + 1) * width_);
      if (part.size() == 1)
        k_.st(Space::shared, f32, at(mine_, offset(j, a)), part[0]);
      else
        k_.st(Space::shared, f32, at(mine_, offset(j, a)), part);
    }
  }
  std::vector<Reg> load(int j) {
    std::vector<Reg> values;
    for (int a = 0; a < shape_.vector / width_; ++a) {
      Regs part = k_.regs(f32, width_);
      if (part.size() == 1)
        k_.ld(Space::shared, f32, part[0], at(mine_, offset(j, a)));
      else
        k_.ld(Space::shared, f32, part, at(mine_, offset(j, a)));
      values.insert(values.end(), part.begin(), part.end());
    }
    return values;
  }

 private:
  std::int64_t offset(int j, int a) const {
    return (static_cast<std::int64_t>(j) * (shape_.vector / width_) + a) * shape_.block() * width_ * 4;
  }
  Kernel& k_;
  const rows::RowShape& shape_;
  int width_;
  Reg mine_;
};

class MainKernel {
 public:
  MainKernel(const CrossEntropyProblem& p, Target target) : p_(p), k_(kCrossEntropyKernel, target) {}

  ptx::Module build() {
    const CrossEntropyOptions& o = p_.options;
    Reg logits = rows::row_param(k_, "logits", p_.shape, p_.logits.dtype), labels = k_.param_ptr("labels", 4);
    Reg dlogits = p_.dlogits ? rows::row_param(k_, "dlogits", p_.shape, p_.dlogits->dtype) : Reg{};
    Reg lse_out = p_.lse ? k_.param_ptr("lse", 4) : Reg{};
    Reg loss = !p_.reduced() ? k_.param_ptr("loss", 4) : Reg{};
    Reg workspace = p_.reduced() ? k_.param_ptr("workspace", 16) : Reg{};
    Reg rows = k_.param(u32, "rows");
    RowKernel rk(k_, p_.shape, p_.v, "cross_entropy");
    if (p_.prefetch()) staged_.emplace(k_, p_.shape);
    smoothing_ = o.label_smoothing > 0.0f;
    // The gradient's scale on valid rows: 1 / (valid rows) for mean, else 1.
    Reg scale = k_.mov(f32, imm_f32(1.0f));
    if (o.reduction == LossReduction::mean) {
      Reg count = k_.reg(f32);
      k_.cvt(f32, u32, count, valid_count(k_, workspace, p_.count_ctas), {Round::rn});
      k_.rcp(scale, count, {Round::rn});
    }
    Reg total = k_.mov(f32, imm_f32(0.0f));  // the group's loss sum (mean, sum)
    const rows::RowOperand x_in{p_.logits.dtype, logits, p_.logits.row_stride};

    auto loads = [&](const Reg& row) { return std::vector<RowFragment>{rk.load(x_in, &row, kMinusInf)}; };
    auto body = [&](const Reg& row, const std::vector<RowFragment>& loaded) {
      Reg label = load_label(k_, labels, row, p_.labels);
      Pred valid = label != o.ignore_index;
      Pred in_range = valid && label >= 0 && label < p_.v;
      Reg target = k_.reg(u32);
      k_.cvt(target, label);
      Stats st = p_.shape.chunks == 1 ? held(rk, loaded[0], row, x_in, target, in_range) : passes(rk, row, x_in, target);
      // lse = M + ln S; loss = lse - (1 - ε) x_y - ε mean(x).
      Reg lse = k_.reg(f32), row_loss = k_.reg(f32);
      k_.lg2_approx(lse, st.s.sum);
      k_.fma(lse, lse, imm_f32(kLn2), st.s.max);
      k_.fma(row_loss, st.target, imm_f32(o.label_smoothing - 1.0f), lse);
      if (smoothing_) {
        Reg mean_x = rows::scaled_mean(k_, st.x_sum, 1, p_.v);
        k_.fma(row_loss, mean_x, imm_f32(-o.label_smoothing), row_loss);
      }
      // A label out of range (not ignored): NaN; an ignored one: 0.
      k_.selp(row_loss, row_loss, imm_f32(std::numeric_limits<float>::quiet_NaN()), in_range);
      k_.selp(row_loss, row_loss, imm_f32(0.0f), valid);
      if (dlogits.valid()) {
        Reg row_scale = k_.selp(scale, imm_f32(std::numeric_limits<float>::quiet_NaN()), in_range);
        k_.selp(row_scale, row_scale, imm_f32(0.0f), valid);
        gradient(rk, row, x_in, {p_.dlogits->dtype, dlogits, p_.dlogits->row_stride}, st, target, in_range, row_scale,
                 valid);
      }
      k_.guarded(rk.leader(), [&] {
        Reg at_row = k_.reg(u64);
        k_.mul_wide(at_row, row, 4);
        if (p_.lse) k_.st(Space::global, f32, at(lse_out + at_row), lse);
        if (!p_.reduced()) k_.st(Space::global, f32, at(loss + at_row), row_loss);
      });
      if (p_.reduced()) k_.add(total, total, row_loss, {Round::rn});
    };
    if (p_.prefetch())
      rk.for_each_row_prefetched(rows, rows, loads, body);
    else
      rk.for_each_row(rows, [&](const Reg& row) {
        body(row, p_.shape.chunks == 1 ? loads(row) : std::vector<RowFragment>{});
      });
    if (p_.reduced())
      k_.guarded(rk.leader(), [&] {
        Reg offset = k_.reg(u64);
        k_.mul_wide(offset, rk.group(), 4);
        k_.st(Space::global, f32, at(workspace + offset, static_cast<std::int64_t>(p_.partials_offset())), total);
      });
    return k_.module();
  }

 private:
  struct Stats {
    rows::OnlineSoftmax s;  // the row's (max, sum)
    rows::ScaledSum x_sum;  // Σ x (smoothing)
    Reg target;             // x at the label (0 where the label is outside the row)
    Reg thread_max;         // the thread's own max: its held exponentials are exp(x - thread_max)
    Reg rescale;            // held rows: exp(thread_max - max), 1 where they are equal
    std::vector<Reg> e;     // held in registers (not prefetched): exp(x - thread_max), one an element
  };

  // A row read in passes: the thread's contribution to the target logit, x
  // where its element is the label (label - the thread's first index
  // against each element's offset), summed over the threads: a select an
  // element (held rows of 64 registers a thread select so too, in held()),
  // where target_logit()'s load spills (ptxas sm_90a).
  void add_target(RowKernel& rk, Reg& target, const RowFragment& x, const Reg& label, const Reg* chunk) {
    Reg relative = label - rk.element_base(chunk);
    rk.for_each_element([&](int j, int e) {
      k_.selp(target, x.value(j, e), target, relative == static_cast<std::uint32_t>(rk.element_offset(j, e)));
    });
  }

  // The registers the threads' partial statistics combine in, and how: the
  // target's sum only where each thread holds its part (rows read in passes).
  std::vector<Reg> combine_registers(const Stats& st, bool target) {
    std::vector<Reg> r{st.s.max, st.s.sum};
    if (smoothing_) r.push_back(st.x_sum.q), r.push_back(st.x_sum.s);
    if (target) r.push_back(st.target);
    return r;
  }
  tile::Combine combine(bool target) {
    std::vector<std::pair<int, tile::Combine>> parts{{2, rows::combine_online_softmax()}};
    if (smoothing_) parts.emplace_back(2, rows::combine_scaled_sums(1));
    if (target) parts.emplace_back(1, tile::add());
    return tile::concat(parts);
  }

  // A held row's target logit x[row, label] (f32; 0 where the label is
  // outside the row), read by every thread of the row (one address: a
  // broadcast) before the row's reductions, so before any thread writes its
  // gradient over the logits: no select an element and no sum across the
  // threads. Taken by the prefetching kernels (up to 128 registers a
  // thread); in those of 64 the loaded logit spills (ptxas sm_90a).
  bool loads_target() const { return p_.prefetch(); }
  Reg target_logit(const RowKernel& rk, const rows::RowOperand& x, const Reg& row, const Reg& label, const Pred& in_range) {
    Reg target = k_.mov(f32, imm_f32(0.0f));
    k_.guarded(in_range, [&] {
      Reg offset = k_.reg(u64);
      k_.mul_wide(offset, label, static_cast<std::uint32_t>(runtime::bits(x.dtype) / 8));
      const Addr where = at(rk.row_address(x, row) + offset);
      if (x.dtype == runtime::DType::f32) return k_.ld(Space::global, f32, target, where);
      Reg half = k_.reg(b16);
      k_.ld(Space::global, b16, half, where);
      if (x.dtype == runtime::DType::f16) return k_.cvt(f32, f16, target, half);
      Reg wide = k_.reg(u32);  // a bf16 is the upper half of its f32 (cvt.f32.bf16 needs sm_90)
      k_.cvt(u32, u16, wide, half);
      k_.shl(target.as(b32), wide, 16u);
    });
    return target;
  }

  // The row read once, held as its exponentials: in registers, or, with the
  // next row's loads in flight (prefetch), in shared memory (both rows' words
  // and the exponentials do not fit 64 registers a thread: ptxas spills).
  Stats held(RowKernel& rk, const RowFragment& x, const Reg& row, const rows::RowOperand& x_in, const Reg& label,
             const Pred& in_range) {
    Stats st;
    // The thread's max first; then Σ x (smoothing); then, element by element,
    // the target's select (where not loaded) and the exponential: each
    // element converted to f32 where it is used (past the max, only the
    // exponentials stay live).
    st.thread_max = thread_max(rk, x);
    st.target = loads_target() ? target_logit(rk, x_in, row, label, in_range) : k_.mov(f32, imm_f32(0.0f));
    if (smoothing_) st.x_sum = rows::scaled_sum(rk, [&](int j, int e) { return rk.in_row_or(j, x.value(j, e), imm_f32(0.0f)); }, 1);
    Reg shift = rows::safe_max(k_, st.thread_max);
    Reg sum = k_.mov(f32, imm_f32(0.0f));
    Reg relative = label - rk.element_base();
    for (int j = 0; j < p_.shape.vectors; ++j) {
      std::vector<Reg> vector;
      for (int e = 0; e < p_.shape.vector; ++e) {
        Reg v = x.value(j, e);
        if (!loads_target())
          k_.selp(st.target, v, st.target, relative == static_cast<std::uint32_t>(rk.element_offset(j, e)));
        vector.push_back(rows::exp_shifted(k_, v, shift));
        k_.add(sum, sum, vector.back(), {Round::rn});
      }
      if (staged_)
        staged_->store(j, vector);
      else
        st.e.insert(st.e.end(), vector.begin(), vector.end());
    }
    // The row's max first (max.f32 over the threads), then each thread's sum
    // rescaled to it and added with the target (where not loaded) and Σ x:
    // two reductions of one and of one to four registers, whose butterflies cost a shuffle,
    // two selects and a max or an add a register, where the online
    // softmax's combine costs two exponentials and ten more (twelve levels
    // at 4096 threads a row: most of a row's instructions but its elements').
    // A row spread over a cluster does this within each CTA, then meets the
    // other CTAs once with the online softmax's combine of the CTAs' (max,
    // sum) and the others' sums: one cluster barrier a row, not two (each
    // one's release a GPU-scope membar: ptxas sm_90a).
    Reg row_max = k_.mov(f32, st.thread_max);
    rk.allreduce_in_cta({row_max}, tile::max());
    auto rescale_to = [&](const Reg& max) {
      Reg r = rows::exp_shifted(k_, st.thread_max, rows::safe_max(k_, max));
      k_.selp(r, imm_f32(1.0f), r, k_.setp(Cmp::eq, st.thread_max, max));
      return r;
    };
    st.rescale = rescale_to(row_max);
    k_.mul(sum, sum, st.rescale, {Round::rn});
    std::vector<Reg> sums{sum};
    if (!loads_target()) sums.push_back(st.target);
    std::vector<std::pair<int, tile::Combine>> parts{{static_cast<int>(sums.size()), tile::add()}};
    if (smoothing_) sums.push_back(st.x_sum.q), sums.push_back(st.x_sum.s), parts.emplace_back(2, rows::combine_scaled_sums(1));
    rk.allreduce_in_cta(sums, tile::concat(parts));
    st.s = {row_max, sum};
    if (p_.shape.ctas > 1) {
      rk.allreduce_across_ctas(combine_registers(st, !loads_target()), combine(!loads_target()));
      st.rescale = rescale_to(row_max);
    }
    return st;
  }

  // The largest of the thread's elements (f32). 16-bit words two elements at
  // a time (max.bf16x2 / max.f16x2, PTX ISA 9.7.4, sm_80 on: exact, a NaN passed
  // over as max.f32 does), then the two halves: no f32 conversion whose
  // values ptxas would keep live until the exponentials.
  Reg thread_max(const RowKernel& rk, const RowFragment& x) {
    Reg m = k_.mov(f32, imm_f32(kMinusInf));
    if (x.dtype() == runtime::DType::f32) {
      rk.for_each_element([&](int j, int e) { k_.max(m, m, x.value(j, e)); });
      return m;
    }
    const Type pair = x.dtype() == runtime::DType::bf16 ? bf16x2 : f16x2;
    Reg words = k_.mov(b32, x.words(0)[0]);
    for (int j = 0; j < p_.shape.vectors; ++j)
      for (const Reg& w : x.words(j)) k_.max(words.as(pair), words.as(pair), w.as(pair));
    const RowFragment halves(k_, x.dtype(), {Regs{words}});
    k_.max(m, halves.value(0, 0), halves.value(0, 1));
    return m;
  }

  // Longer rows: the statistics pass by pass, then the gradient's passes read the row again.
  Stats passes(RowKernel& rk, const Reg& row, const rows::RowOperand& x_in, const Reg& label) {
    Stats st;
    st.s = {k_.mov(f32, imm_f32(kMinusInf)), k_.mov(f32, imm_f32(0.0f))};
    if (smoothing_) st.x_sum = {k_.mov(s32, 0), k_.mov(f32, imm_f32(0.0f))};
    st.target = k_.mov(f32, imm_f32(0.0f));
    rk.for_each_chunk([&](const Reg& chunk) {
      RowFragment x = rk.load(x_in, &row, kMinusInf, &chunk);
      rows::OnlineSoftmax part = rows::online_softmax(rk, [&](int j, int e) { return x.value(j, e); });
      rows::combine_online_softmax()(k_, st.s.regs(), part.regs());
      if (smoothing_) {
        // Elements past the row are -inf: 0 in the sum.
        rows::ScaledSum xs = rows::scaled_sum(rk, [&](int j, int e) {
          Reg v = x.value(j, e);
          Reg index = rk.element_base(&chunk) + static_cast<std::uint32_t>(rk.element_offset(j, e));
          return k_.selp(imm_f32(0.0f), v,
                         k_.setp(Cmp::eq, v, imm_f32(kMinusInf)) && !(index < static_cast<std::uint32_t>(p_.v)));
        }, 1);
        rows::combine_scaled_sums(1)(k_, st.x_sum.regs(), xs.regs());
      }
      add_target(rk, st.target, x, label, &chunk);
    });
    rk.allreduce(combine_registers(st, true), combine(true));
    return st;
  }

  // dx = scale · (p - (1 - ε)[j = y] - ε/V), p = exp(x - M) / S, exactly 0
  // on ignored rows whatever the logits. A held row's elements are written
  // as scale · (p - ε/V) a vector at a time, then the target's over it by the
  // thread that holds it (same thread, same address: in program order):
  // three instructions an element fewer than a select. A row read in passes
  // selects (1 - ε) an element (there the owner's store spills: ptxas, 64
  // registers a thread).
  void gradient(RowKernel& rk, const Reg& row, const rows::RowOperand& x_in, const rows::RowOperand& out,
                const Stats& st, const Reg& label, const Pred& in_range, const Reg& row_scale, const Pred& valid) {
    const float eps = p_.options.label_smoothing, off_target = eps / static_cast<float>(p_.v);
    Reg inverse = k_.reg(f32);
    k_.rcp(inverse, st.s.sum, {Round::rn});
    auto dx = [&](const Reg& p, const std::optional<Src>& minus) {
      Reg d = k_.reg(f32);
      k_.sub(d, p, imm_f32(off_target), {Round::rn});
      if (minus) k_.sub(d, d, *minus, {Round::rn});
      k_.mul(d, d, row_scale, {Round::rn});
      return k_.selp(d, imm_f32(0.0f), valid);
    };
    auto scaled = [&](const Reg& a, const Reg& b) {
      Reg pr = k_.reg(f32);
      k_.mul(pr, a, b, {Round::rn});
      return pr;
    };
    if (p_.shape.chunks == 1) {
      // The held exponentials, rescaled from the thread's max to the row's: exp(m_t - M) / S.
      Reg factor = scaled(st.rescale, inverse);
      auto target_dx = [&] {
        Reg exponential = rows::exp_shifted(k_, st.target, rows::safe_max(k_, st.thread_max));
        return dx(scaled(exponential, factor), Src(imm_f32(1.0f - eps)));
      };
      // The target's value and owner formed before the row's stores where the
      // exponentials are in registers, after them where they are staged: the
      // order in which ptxas assembles each without spills (64 registers).
      std::optional<Reg> early;
      std::optional<Pred> mine;
      if (!staged_) early = target_dx(), mine = in_range && rk.owns(label);
      // Every element but the target: scale · (e · factor - ε/V) as one fma
      // of the row's scalars, e · (factor · scale) - (ε/V) · scale (an f32
      // rounding from the three steps, which cost three instructions); an
      // ignored row's 0 whatever its logits, by a branch around the row in
      // the prefetching kernels (up to 128 registers), by a select an
      // element in the others (there the branch spills: ptxas, 64 registers).
      Reg gain = scaled(factor, row_scale);
      std::optional<Reg> offset;
      if (off_target != 0.0f) {
        offset = k_.reg(f32);
        k_.mul(*offset, row_scale, imm_f32(-off_target), {Round::rn});
      }
      auto store_row = [&](bool ignored) {
        for (int j = 0; j < p_.shape.vectors; ++j) {
          if (ignored) {
            const Reg zero = k_.mov(f32, imm_f32(0.0f));
            rk.store_vector(out, &row, j, [&](int) { return zero; });
            continue;
          }
          const auto first = st.e.begin() + j * p_.shape.vector;
          const std::vector<Reg> held = staged_ ? staged_->load(j) : std::vector<Reg>(first, first + p_.shape.vector);
          rk.store_vector(out, &row, j, [&](int e) {
            const Reg& h = held[static_cast<std::size_t>(e)];
            Reg d = k_.reg(f32);
            if (offset) k_.fma(d, h, gain, *offset); else k_.mul(d, h, gain, {Round::rn});
            return loads_target() ? d : k_.selp(d, imm_f32(0.0f), valid);
          });
        }
      };
      if (loads_target())
        k_.if_else(valid, [&] { store_row(false); }, [&] { store_row(true); });
      else
        store_row(false);
      k_.guarded(mine ? *mine : in_range && rk.owns(label),
                 [&] { rk.store_element(out, row, label, early ? *early : target_dx()); });
      return;
    }
    Reg shift = rows::safe_max(k_, st.s.max);
    rk.for_each_chunk([&](const Reg& chunk) {
      RowFragment x = rk.load(x_in, &row, kMinusInf, &chunk);
      Reg relative = label - rk.element_base(&chunk);
      rk.store(out, &row, [&](int j, int e) {
        Reg minus = k_.selp(imm_f32(1.0f - eps), imm_f32(0.0f),
                            relative == static_cast<std::uint32_t>(rk.element_offset(j, e)));
        return dx(scaled(rows::exp_shifted(k_, x.value(j, e), shift), inverse), Src(minus));
      }, &chunk);
    });
  }

  const CrossEntropyProblem& p_;
  Kernel k_;
  bool smoothing_ = false;
  std::optional<StagedExponentials> staged_;
};

}  // namespace

std::uint32_t CrossEntropyProblem::staged_bytes() const {
  return static_cast<std::uint32_t>(shape.block() * shape.vectors * shape.vector * 4);
}

ptx::Module build_cross_entropy_kernel(const CrossEntropyProblem& problem, Target target) {
  return MainKernel(problem, target).build();
}

ptx::Module build_cross_entropy_count_kernel(const CrossEntropyProblem& p, Target target) {
  Kernel k(kCrossEntropyCount, target);
  k.reqntid(kCrossEntropyCountThreads);
  Reg labels = k.param_ptr("labels", 4), counts = k.param_ptr("counts", 4);
  Reg rows = k.param(u32, "rows");
  tile::GroupReduction cta(k, {.warps = kCrossEntropyCountThreads / 32}, 1, "count_reduction");
  // CTA c takes rows [c·per, (c+1)·per), per = ceil(rows / CTAs).
  Reg per = k.reg(u32);
  k.div(per, rows + (static_cast<std::uint32_t>(p.count_ctas) - 1), static_cast<std::uint32_t>(p.count_ctas));
  Reg first = k.sreg(SReg::ctaid_x) * per;
  Reg end = k.min(first + per, rows);
  Reg mine = k.mov(u32, 0u);
  k.for_range(first + k.sreg(SReg::tid_x), end, static_cast<std::uint32_t>(kCrossEntropyCountThreads), [&](const Reg& row) {
    Reg label = load_label(k, labels, row, p.labels);
    Reg one = k.reg(u32);
    k.selp(one, 1u, 0u, label != p.options.ignore_index);
    k.add(mine, mine, one);
  });
  cta.allreduce({mine}, tile::add());
  k.guarded(k.sreg(SReg::tid_x) == 0u, [&] {
    Reg offset = k.reg(u64);
    k.mul_wide(offset, k.sreg(SReg::ctaid_x), 4);
    k.st(Space::global, u32, at(counts + offset), mine);
  });
  return k.module();
}

ptx::Module build_cross_entropy_finalize_kernel(const CrossEntropyProblem& p, Target target) {
  Kernel k(kCrossEntropyFinalize, target);
  k.reqntid(kCrossEntropyCountThreads);
  Reg workspace = k.param_ptr("workspace", 16), loss = k.param_ptr("loss", 4);
  tile::GroupReduction cta(k, {.warps = kCrossEntropyCountThreads / 32}, 1, "loss_reduction");
  Reg sum = k.mov(f32, imm_f32(0.0f));
  k.for_range(k.sreg(SReg::tid_x), static_cast<std::uint32_t>(p.groups),
              static_cast<std::uint32_t>(kCrossEntropyCountThreads), [&](const Reg& g) {
                Reg offset = k.reg(u64), v = k.reg(f32);
                k.mul_wide(offset, g, 4);
                k.ld(Space::global, f32, v, at(workspace + offset, static_cast<std::int64_t>(p.partials_offset())));
                k.add(sum, sum, v, {Round::rn});
              });
  cta.allreduce({sum}, tile::add());
  if (p.options.reduction == LossReduction::mean) {
    Reg count = k.reg(f32);
    k.cvt(f32, u32, count, valid_count(k, workspace, p.count_ctas), {Round::rn});
    k.div(sum, sum, count, {Round::rn});  // 0 / 0 = NaN with no valid row, as PyTorch
  }
  k.guarded(k.sreg(SReg::tid_x) == 0u, [&] { k.st(Space::global, f32, at(loss), sum); });
  return k.module();
}

ptx::Module build_cross_entropy_scale_kernel(runtime::DType dtype, std::int64_t v, const rows::RowShape& shape,
                                             bool per_row, Target target) {
  Kernel k(kCrossEntropyScale, target);
  Reg dlogits = rows::row_param(k, "dlogits", shape, dtype), dloss = k.param_ptr("dloss", 4);
  Reg rows = k.param(u32, "rows");
  RowKernel rk(k, shape, v, "scale");
  const rows::RowOperand t{dtype, dlogits, v};
  Reg factor = k.reg(f32);
  if (!per_row) k.ld(Space::global, f32, factor, at(dloss));
  rk.for_each_row(rows, [&](const Reg& row) {
    if (per_row) {
      Reg offset = k.reg(u64);
      k.mul_wide(offset, row, 4);
      k.ld(Space::global, f32, factor, at(dloss + offset));
    }
    // Rows scaled by exactly 1 keep their bits: no load, no store.
    k.if_then(k.setp(Cmp::ne, factor, imm_f32(1.0f)), [&] {
      auto pass = [&](const Reg* chunk) {
        RowFragment d = rk.load(t, &row, 0.0f, chunk);
        rk.store(t, &row, [&](int j, int e) {
          Reg o = k.reg(f32);
          k.mul(o, d.value(j, e), factor, {Round::rn});
          return o;
        }, chunk);
      };
      if (shape.chunks == 1) return pass(nullptr);
      rk.for_each_chunk([&](const Reg& chunk) { pass(&chunk); });
    });
  });
  return k.module();
}

}  // namespace warpforge::ops
