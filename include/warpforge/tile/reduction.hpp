// Reductions over the threads that share one piece of work (a row of a
// normalization, a softmax or a loss): every thread brings a partial result
// of one or several 32-bit registers, and every thread ends with the
// group's, bit for bit the same in every thread.
//
//   tile::warp::allreduce(k, {sum}, tile::add());            // shfl.sync.bfly, 5 steps
//   tile::GroupReduction r(k, {.warps = 8, .ctas = 2}, 2, "stats");
//   r.allreduce({max, sum}, online_softmax);                   // warps, then the cluster's CTAs
//
// A Combine is the reduction's algebra: given two partial results it
// writes their combination into the first. It need only be associative up
// to rounding: at every step the two operands are put in one order (the
// lower lane's, warp's or CTA's first), so that both partners of a
// butterfly compute the same bits and the result does not depend on which
// thread computed it. A commutative combine (add, max: a ⊕ b and b ⊕ a the
// same bits) skips that ordering, two selects a register a step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpforge/dsl/kernel.hpp"

namespace warpforge::tile {

// into = into ⊕ other, both holding one partial result (the same registers'
// types in the same order). It may emit any instructions but must leave
// `other` to be overwritten. `commutative` where into ⊕ other gives the
// same bits as other ⊕ into for every input.
struct Combine {
  using Function = std::function<void(dsl::Kernel& k, const dsl::Regs& into, const dsl::Regs& other)>;
  Combine() = default;
  template <class F>
    requires std::is_invocable_v<const F&, dsl::Kernel&, const dsl::Regs&, const dsl::Regs&>
  Combine(F f, bool commutative = false) : function(std::move(f)), commutative(commutative) {}
  void operator()(dsl::Kernel& k, const dsl::Regs& into, const dsl::Regs& other) const { function(k, into, other); }

  Function function;
  bool commutative = false;
};

// Element-wise combines of f32 or 32-bit integer registers (by each
// register's type): add (add.rn for floats), max (max.f32, which gives the
// other operand where one is NaN, PTX ISA 9.7.3.11; for magnitudes read as
// unsigned integers a NaN wins, being the larger bit pattern). Both are
// commutative (IEEE 754 addition is; two NaNs give the canonical NaN).
Combine add();
Combine max();
// Several combines side by side: the first `parts[0].first` registers by
// parts[0].second, the next by parts[1].second, and so on (one reduction
// carrying several results); commutative where every part is.
Combine concat(std::vector<std::pair<int, Combine>> parts);

namespace warp {

// Butterfly all-reduce (shfl.sync.bfly, PTX ISA 9.7.8.6) over aligned groups
// of `lanes` lanes of the warp (a power of two, 1..32): log2(lanes) steps,
// after which every lane of a group holds the group's result. Every lane of
// the warp must execute it.
void allreduce(dsl::Kernel& k, const dsl::Regs& values, const Combine& combine, int lanes = 32);

// redux.sync (PTX ISA 9.7.13.10, sm_80+): one instruction for a 32-bit
// integer add, min or max over the whole warp, where the values are integers
// (counts, or magnitudes' bit patterns); the result in a new register.
dsl::Reg redux(dsl::Kernel& k, dsl::Redux op, const dsl::Reg& value);

}  // namespace warp

// Who shares a reduction: `warps` consecutive warps of a CTA (a power of two,
// 1..32), the CTA holding `groups` such groups side by side; and the group of
// the same position in each of `ctas` CTAs of a cluster (a power of two,
// 1..8, with one group a CTA).
struct GroupShape {
  int warps = 1;
  int ctas = 1;
  int groups = 1;
};

// A reduction over a GroupShape's threads: warps first (butterflies), then
// the group's warps through shared memory meeting at a named barrier (id 1 +
// the group's index: bar.sync, PTX ISA 9.7.13.1), then the cluster's CTAs
// through distributed shared memory (each CTA's result stored into every
// CTA's shared memory with mapa + st.shared::cluster, PTX ISA 9.7.9.19 and
// 9.7.9.10, then barrier.cluster.arrive.release / wait.acquire, 9.7.13.3).
// Two buffers a step are used in turn (a register parity a step flips at every
// use), so a reduction needs one barrier: a thread cannot write a buffer again before
// every thread has passed the barrier of the reduction between, which it
// reaches only after reading that buffer. So the last cluster reduction of
// a kernel also leaves no store in flight to a CTA that exits.
class GroupReduction {
 public:
  // Declares its shared memory (`name`, `name`_cluster) for up to `values`
  // registers a call. Throws TileError for a shape outside the ranges above
  // or more than 15 groups of several warps (a named barrier each).
  GroupReduction(dsl::Kernel& k, GroupShape shape, int values, const std::string& name = "reduction");

  // Every thread of the CTA calls it together; each ends with its group's result.
  void allreduce(const dsl::Regs& values, const Combine& combine);
  // allreduce in two steps, whose combines may differ: the CTA's part of the
  // group (its warps), then the cluster's CTAs (nothing with one CTA a group).
  // A kernel whose group spans CTAs may reduce several values within each
  // CTA and meet the other CTAs once (one cluster barrier: the barrier's
  // release is a GPU-scope membar, ptxas sm_90a). Calls of either kind may
  // follow each other in any order (each step's buffers alternate on their own).
  void allreduce_in_cta(const dsl::Regs& values, const Combine& combine);
  void allreduce_across_ctas(const dsl::Regs& values, const Combine& combine);

  const GroupShape& shape() const { return shape_; }
  // Shared memory it declares, in bytes.
  std::int64_t shared_bytes() const;

 private:
  void across_warps(const dsl::Regs& values, const Combine& combine);
  void across_ctas(const dsl::Regs& values, const Combine& combine, const dsl::Reg& parity);
  void check_count(const dsl::Regs& values) const;

  dsl::Kernel* k_;
  GroupShape shape_;
  int values_;
  // Which of its two buffers each step uses next (each step's own: the
  // steps may be called apart).
  dsl::Reg lane_, warp_in_group_, group_, parity_, cluster_parity_;
  dsl::Shared warps_buffer_, ctas_buffer_;
};

}  // namespace warpforge::tile
