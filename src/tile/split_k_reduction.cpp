#include "warpforge/tile/split_k_reduction.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

using namespace dsl;

SplitKReduction::SplitKReduction(Kernel& k, const TileScheduler& scheduler, const Reg& workspace,
                                 const Reg& tid, int warpgroups, std::uint32_t partial_bytes,
                                 NamedBarrierSet barriers)
    : k_(&k),
      sched_(&scheduler),
      workspace_(workspace),
      tid_(tid),
      warpgroups_(warpgroups),
      partial_bytes_(partial_bytes),
      barriers_(std::move(barriers)) {
  if (scheduler.options().splits < 2)
    throw TileError("split-K reduction in kernel '" + k.name() + "' over a tile scheduler of " +
                    std::to_string(scheduler.options().splits) + " split");
}

// Slot (unit, split, cw): ((unit · (splits - 1) + split - 1) · warpgroups + cw.
Reg SplitKReduction::index(const WorkItem& w, const Reg& split, const Reg& cw) const {
  return (w.tile.unit * (sched_->options().splits - 1) + split - 1) * warpgroups_ + cw;
}

Reg SplitKReduction::slot(const WorkItem& w, const Reg& split, const Reg& cw) const {
  Reg offset = k_->reg(u64);
  k_->mul_wide(offset, index(w, split, cw), partial_bytes_);
  return workspace_ + offset;
}

// The flags follow every slot: units · (splits - 1) · warpgroups of them.
Reg SplitKReduction::flag(const WorkItem& w, const Reg& split, const Reg& cw) const {
  Reg offset = k_->reg(u64), slots = k_->reg(u64);
  k_->mul_wide(offset, index(w, split, cw), 4);
  const Src& units = sched_->units();
  const int per_unit = (sched_->options().splits - 1) * warpgroups_;
  if (units.is_reg())
    k_->mul_wide(slots, units.reg() * per_unit, partial_bytes_);
  else
    k_->mov(slots, static_cast<std::uint64_t>(units.imm().int_value()) * per_unit * partial_bytes_);
  return workspace_ + offset + slots;
}

void SplitKReduction::finish(const Regs& acc, const WorkItem& w, const Reg& cw, const Pred& leader,
                             const std::function<void()>& finish) const {
  Kernel& k = *k_;
  const NamedBarrier warpgroup = barriers_.of(cw);
  Reg thread_offset = k.reg(u64);
  k.mul_wide(thread_offset, tid_ & 127, 16);  // registers 4j.. at (128j + thread)·16: coalesced
  k.if_else(
      *w.split != 0,
      [&] {
        Reg at_slot = slot(w, *w.split, cw) + thread_offset;
        for (std::size_t i = 0; i < acc.size(); i += 4)
          k.st(Space::global, f32, at(at_slot, static_cast<std::int64_t>(i / 4 * 128 * 16)),
               Regs{acc[i], acc[i + 1], acc[i + 2], acc[i + 3]});
        warpgroup.sync();
        k.if_then(leader, [&] {
          k.fence(FenceSem::acq_rel, Scope::gpu);
          k.st(Space::global, u32, at(flag(w, *w.split, cw)), 1, {.volatile_ = true});
        });
      },
      [&] {
        // Split s's slot and flag are split 1's plus (s - 1) · warpgroups.
        Regs sum = k.regs(f32, 4, "partial");
        Reg one = k.mov(u32, 1);
        Reg first_slot = slot(w, one, cw) + thread_offset, first_flag = flag(w, one, cw);
        for (int split = 1; split < sched_->options().splits; ++split) {
          const std::int64_t apart = (split - 1) * warpgroups_;
          k.if_then(leader, [&] {
            Reg raised = k.reg(u32);
            k.while_loop(
                [&] {
                  k.ld(Space::global, u32, raised, at(first_flag, 4 * apart), {.volatile_ = true});
                  return raised == 0;
                },
                [] {});
            k.fence(FenceSem::acq_rel, Scope::gpu);
            k.st(Space::global, u32, at(first_flag, 4 * apart), 0, {.volatile_ = true});
          });
          warpgroup.sync();
          for (std::size_t i = 0; i < acc.size(); i += 4) {
            // After the acquire, plain loads (at L2, .cg) that ptxas may keep in flight together.
            k.ld(Space::global, f32, sum,
                 at(first_slot,
                    apart * partial_bytes_ + static_cast<std::int64_t>(i / 4 * 128 * 16)),
                 {.cache = Cache::cg});
            for (std::size_t j = 0; j < 4; ++j) k.add(acc[i + j], acc[i + j], sum[j]);
          }
        }
        finish();
      });
}

}  // namespace warpforge::tile
