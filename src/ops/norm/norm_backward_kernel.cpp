// The normalizations' backward kernel and the column sums of dweight and
// dbias (norm_kernel.hpp).
#include "../rows/row_kernel.hpp"
#include "../rows/scaled_sum.hpp"
#include "norm_kernel.hpp"
#include "warpforge/tile/named_barrier.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;
using rows::RowOperand;
using rows::ScaledSum;
using runtime::DType;

namespace {

constexpr int kColumnWarps = 16;  // the column-sum kernel's warps, each adding every 16th group
constexpr int kColumnLoads = 16;  // loads in flight a thread of the column-sum kernel

// The row group's running sums over its rows of dweight's and dbias's terms,
// a thread's own columns in its own slots of shared memory (no thread reads
// another's: no barrier), not in registers, which then hold more of a row.
// Sum s's vector j: `accesses` accesses of `width` f32 at
// ((s·vectors + j)·accesses + a)·block·width + tid·width, so that a warp's
// accesses are consecutive (no bank conflicts).
class ColumnSums {
 public:
  ColumnSums(Kernel& k, const NormBackwardProblem& p)
      : k_(k), p_(p), width_(std::min(4, p.shape.vector)), accesses_(p.shape.vector / width_) {
    if (count() == 0) return;
    Reg base = k.address_of(k.dynamic_shared("norm_backward_sums", 16));
    mine_ = base + k.sreg(SReg::tid_x) * static_cast<std::uint32_t>(4 * width_);
    const Regs zero(static_cast<std::size_t>(width_), k.mov(b32, 0u));
    for (int s = 0; s < count(); ++s)
      for (int j = 0; j < p.shape.vectors; ++j)
        for (int a = 0; a < accesses_; ++a) store(offset(s, j, a), zero);
  }

  int count() const { return (p_.dweight ? 1 : 0) + (p_.dbias ? 1 : 0); }

  // Sum s += term(into, e) for each element e of the thread's vector j:
  // into is the running sum (f32), updated in place.
  void add(int s, int j, const std::function<void(const Reg& into, int e)>& term) {
    for (int a = 0; a < accesses_; ++a) {
      Regs acc = k_.regs(b32, width_);
      if (width_ == 1)
        k_.ld(Space::shared, b32, acc[0], at(mine_, offset(s, j, a)));
      else
        k_.ld(Space::shared, b32, acc, at(mine_, offset(s, j, a)));
      for (int i = 0; i < width_; ++i) term(acc[static_cast<std::size_t>(i)].as(f32), a * width_ + i);
      store(offset(s, j, a), acc);
    }
  }

  // Element e of vector j of sum s (f32).
  Reg value(int s, int j, int e) {
    Reg v = k_.reg(f32);
    k_.ld(Space::shared, f32, v, at(mine_, offset(s, j, e / width_) + 4 * (e % width_)));
    return v;
  }

 private:
  std::int64_t offset(int s, int j, int a) const {
    return ((static_cast<std::int64_t>(s) * p_.shape.vectors + j) * accesses_ + a) * p_.shape.block() * width_ * 4;
  }
  void store(std::int64_t offset, const Regs& words) {
    if (words.size() == 1)
      k_.st(Space::shared, b32, at(mine_, offset), words[0]);
    else
      k_.st(Space::shared, b32, at(mine_, offset), words);
  }

  Kernel& k_;
  const NormBackwardProblem& p_;
  int width_, accesses_;
  Reg mine_;
};

class NormBackwardKernel {
 public:
  NormBackwardKernel(const NormBackwardProblem& p, Target target) : p_(p), k_(norm_backward_kernel_name(p), target) {}

  ptx::Module build() {
    auto tensor = [&](const std::optional<rows::RowMatrix>& m, const char* name) {
      return m ? rows::row_param(k_, name, p_.shape, m->dtype) : Reg{};
    };
    const bool layer = p_.options.kind == NormKind::layer;
    Reg dy = tensor(p_.dy, "dy"), x = tensor(p_.x, "x"), weight = tensor(p_.weight, "weight"),
        mean = layer ? k_.param_ptr("mean", 4) : Reg{}, rstd = k_.param_ptr("rstd", 4),
        dresidual_out = tensor(p_.dresidual_out, "dresidual_out"), dx = tensor(p_.dx, "dx"),
        workspace = p_.workspace_bytes() > 0 ? k_.param_ptr("workspace", 16) : Reg{};
    Reg rows = k_.param(u32, "rows");
    RowKernel rk(k_, p_.shape, p_.n, "norm_backward");
    // The column sums' grid may start now (it waits for this one's end).
    if (ptx::sm_number(k_.target()) >= 90 && (p_.dweight || p_.dbias)) k_.griddepcontrol_launch_dependents();
    ColumnSums columns(k_, p_);
    // The weight (the same for every row: L1-resident) is loaded where it is
    // used, for the row sums and then a vector at a time for dx, not held
    // across the rows: its registers hold more of each row instead.
    const RowOperand weight_in{p_.weight ? p_.weight->dtype : DType::f32, weight, 0};

    auto loads = [&](const Reg& row) {
      return std::vector<RowFragment>{rk.load({p_.dy.dtype, dy, p_.dy.row_stride}, &row, 0.0f),
                                      rk.load({p_.x.dtype, x, p_.x.row_stride}, &row, 0.0f)};
    };
    auto body = [&](const Reg& row, const std::vector<RowFragment>& loaded) {
      const RowFragment &g_in = loaded[0], &h = loaded[1];
      Reg at_row = k_.reg(u64);
      k_.mul_wide(at_row, row, 4);
      // xhat = (h/2 - mean/2) · 2 rstd: exact halvings, and no difference overflows.
      Reg twice_rstd = k_.reg(f32), minus_half_mean = k_.mov(f32, imm_f32(0.0f));
      k_.ld(Space::global, f32, twice_rstd, at(rstd + at_row));
      k_.add(twice_rstd, twice_rstd, twice_rstd, {Round::rn});
      if (layer) {
        k_.ld(Space::global, f32, minus_half_mean, at(mean + at_row));
        k_.mul(minus_half_mean, minus_half_mean, imm_f32(-0.5f), {Round::rn});
      }
      auto xhat = [&](int j, int e) {
        Reg v = k_.reg(f32);
        k_.fma(v, h.value(j, e), imm_f32(0.5f), minus_half_mean);
        k_.mul(v, v, twice_rstd, {Round::rn});
        return v;
      };
      std::optional<RowFragment> w;
      if (p_.weight) w = rk.load(weight_in, nullptr, 1.0f);
      auto g = [&](int j, int e) {
        if (!w) return g_in.value(j, e);
        Reg v = k_.reg(f32);
        k_.mul(v, g_in.value(j, e), w->value(j, e), {Round::rn});
        return v;
      };
      // Row sums of g · xhat (and of g, for layer), scaled against overflow.
      auto g_xhat = [&](int j, int e) {
        Reg v = k_.reg(f32);
        k_.mul(v, g(j, e), xhat(j, e), {Round::rn});
        return v;
      };
      std::vector<rows::RowValue> summed{g_xhat};
      if (layer) summed.push_back(g);
      const std::vector<ScaledSum> sums = rows::allreduced_sums(rk, summed, 1);
      // div.rn where a thread holds two vectors or more (RMSNorm at n 8192): there the
      // multiply's schedule spilled 92 bytes at 64 registers (ptxas 13, sm_90a).
      const bool always_divide = p_.shape.vectors > 1;
      Reg minus_mean_g_xhat = negated(rows::scaled_mean(k_, sums[0], 1, p_.n, always_divide)), minus_mean_g;
      if (layer) minus_mean_g = negated(rows::scaled_mean(k_, sums[1], 1, p_.n, always_divide));
      Reg rstd_value = k_.reg(f32);
      k_.mul(rstd_value, twice_rstd, imm_f32(0.5f), {Round::rn});

      std::optional<RowFragment> dh;
      if (p_.dresidual_out)
        dh = rk.load({p_.dresidual_out->dtype, dresidual_out, p_.dresidual_out->row_stride}, &row, 0.0f);
      // dx and the column sums' terms a vector at a time, from one conversion
      // of dy and one xhat an element.
      for (int j = 0; j < p_.shape.vectors; ++j) {
        if (p_.weight) w = rk.load_vector(weight_in, nullptr, 1.0f, j);
        std::vector<Reg> dy_j, xhat_j;
        for (int e = 0; e < p_.shape.vector; ++e) dy_j.push_back(g_in.value(j, e)), xhat_j.push_back(xhat(j, e));
        rk.store_vector({p_.dx.dtype, dx, p_.dx.row_stride}, &row, j, [&](int e) {
          Reg gradient = dy_j[static_cast<std::size_t>(e)];
          if (p_.weight) {
            gradient = k_.reg(f32);
            k_.mul(gradient, dy_j[static_cast<std::size_t>(e)], w->value(j, e), {Round::rn});
          }
          Reg v = k_.reg(f32);
          k_.fma(v, xhat_j[static_cast<std::size_t>(e)], minus_mean_g_xhat, gradient);
          if (layer) k_.add(v, v, minus_mean_g, {Round::rn});
          k_.mul(v, v, rstd_value, {Round::rn});
          if (dh) k_.add(v, v, dh->value(j, e), {Round::rn});
          return v;
        });
        int sum = 0;
        if (p_.dweight)
          columns.add(sum++, j, [&](const Reg& into, int e) {
            k_.fma(into, dy_j[static_cast<std::size_t>(e)], xhat_j[static_cast<std::size_t>(e)], into);
          });
        if (p_.dbias)
          columns.add(sum++, j, [&](const Reg& into, int e) {
            k_.add(into, into, dy_j[static_cast<std::size_t>(e)], {Round::rn});
          });
      }
    };
    if (p_.prefetch)
      rk.for_each_row_prefetched(rows, rows, loads, body);
    else
      rk.for_each_row(rows, [&](const Reg& row) { body(row, loads(row)); });

    // The group's sums: row `group` of the workspace's dweight block, then of dbias's.
    const std::int64_t block_bytes = p_.groups * p_.n * 4;
    Reg block = workspace;
    for (int sum = 0; sum < columns.count(); ++sum) {
      rk.store({DType::f32, block, p_.n}, &rk.group(), [&](int j, int e) { return columns.value(sum, j, e); });
      block = block + block_bytes;
    }
    return k_.module();
  }

 private:
  Reg negated(const Reg& v) {
    Reg n = k_.reg(f32);
    k_.neg(n, v);
    return n;
  }

  const NormBackwardProblem& p_;
  Kernel k_;
};

// dweight and dbias from the groups' sums: see norm_kernel.hpp.
ptx::Module column_sum(DType first, std::optional<DType> second, Target target) {
  Kernel k(kColumnSumKernel, target);
  k.reqntid(32 * kColumnWarps);
  if (ptx::sm_number(target) >= 90) k.griddepcontrol_wait();  // the backward kernel's sums complete and visible
  Reg first_sums = k.param_ptr("first_sums", 4), second_sums = k.param_ptr("second_sums", 4);
  Reg first_out = k.param_ptr("first_out", 2), second_out = k.param_ptr("second_out", 2);
  Reg groups = k.param(u32, "groups"), n = k.param(u32, "n");
  Reg tid = k.sreg(SReg::tid_x);
  Reg lane = tid & 31u, warp = tid >> 5u;
  Reg column = k.sreg(SReg::ctaid_x) * 32u + lane;
  // ctaid.y 0: dweight from the first block of sums; 1: dbias from the second (uniform in the CTA).
  Pred is_second = k.sreg(SReg::ctaid_y) != 0u;
  Reg sums = k.selp(second_sums, first_sums, is_second), result = k.selp(second_out, first_out, is_second);
  Pred in = column < n;
  Reg total = k.mov(f32, imm_f32(0.0f));
  // kColumnLoads loads issued before their adds, each group's past the end
  // left at +0 (total + 0 = total: the same bits as a load a group): a
  // round trip to L2 for every kColumnLoads groups, not for every group.
  k.if_then(in, [&] {
    k.for_range(warp, groups, kColumnWarps * kColumnLoads, [&](const Reg& first) {
      std::vector<Reg> values;
      for (int i = 0; i < kColumnLoads; ++i) {
        Reg group = first + static_cast<std::uint32_t>(i * kColumnWarps), index = k.reg(u64);
        values.push_back(k.mov(f32, imm_f32(0.0f)));
        k.mul_wide(index, group * n + column, 4);  // groups · n < 2^32 (the problem's workspace)
        k.guarded(group < groups, [&] { k.ld(Space::global, f32, values.back(), at(sums + index)); });
      }
      for (const Reg& value : values) k.add(total, total, value, {Round::rn});
    });
  });
  Shared partial = k.shared("column_partial", 4 * 32 * kColumnWarps);
  k.st(Space::shared, f32, at(k.address_of(partial) + (warp * 32u + lane) * 4u), total);
  tile::NamedBarrier(k, 0, 32 * kColumnWarps).sync();
  auto store = [&](DType out) {
    k.if_then(warp == 0u && in, [&] {
      Reg sum = k.mov(f32, imm_f32(0.0f)), value = k.reg(f32);
      Reg mine = k.address_of(partial) + lane * 4u;
      for (int w = 0; w < kColumnWarps; ++w) {
        k.ld(Space::shared, f32, value, at(mine, 4 * 32 * w));
        k.add(sum, sum, value, {Round::rn});
      }
      Reg offset = k.reg(u64);
      k.mul_wide(offset, column, runtime::bits(out) / 8);
      if (out == DType::f32) {
        k.st(Space::global, f32, at(result + offset), sum);
      } else {
        Reg bits = k.reg(b16);
        k.cvt(out == DType::bf16 ? bf16 : f16, f32, bits, sum, {Round::rn});
        k.st(Space::global, b16, at(result + offset), bits);
      }
    });
  };
  if (!second || *second == first)
    store(first);
  else
    k.if_else(is_second, [&] { store(*second); }, [&] { store(first); });
  return k.module();
}

}  // namespace

std::string norm_backward_kernel_name(const NormBackwardProblem& p) {
  return std::string("warpforge_") + (p.options.kind == NormKind::rms ? "rms_norm" : "layer_norm") + "_backward";
}

ptx::Module build_norm_backward_kernel(const NormBackwardProblem& problem, Target target) {
  return NormBackwardKernel(problem, target).build();
}

ptx::Module build_column_sum_kernel(DType first, std::optional<DType> second, Target target) {
  return column_sum(first, second, target);
}

runtime::LaunchConfig column_sum_launch(std::int64_t n, int sums, bool overlap) {
  runtime::LaunchConfig c;
  c.overlap_previous = overlap;
  c.grid = {static_cast<std::uint32_t>((n + 31) / 32), static_cast<std::uint32_t>(sums)};
  c.block = {32 * kColumnWarps};
  return c;
}

}  // namespace warpforge::ops
