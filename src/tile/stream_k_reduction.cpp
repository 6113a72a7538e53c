#include "warpforge/tile/stream_k_reduction.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

using namespace dsl;

StreamKReduction::StreamKReduction(Kernel& k, const TileScheduler& scheduler, const Reg& workspace,
                                   const Reg& tid, int threads, std::uint32_t partial_bytes,
                                   NamedBarrier publish, NamedBarrier partial)
    : k_(&k),
      sched_(&scheduler),
      workspace_(workspace),
      tid_(tid),
      threads_(threads),
      partial_bytes_(partial_bytes),
      publish_(std::move(publish)),
      partial_(std::move(partial)) {
  if (!scheduler.options().stream_k)
    throw TileError("stream-K reduction in kernel '" + k.name() +
                    "' over a tile scheduler without stream_k");
}

Reg StreamKReduction::slot(const Reg& cta) const {
  Reg slot = k_->reg(u64);
  k_->mul_wide(slot, cta, partial_bytes_);
  return workspace_ + slot;
}

Reg StreamKReduction::flag(const Reg& cta) const {
  Reg offset = k_->reg(u64), index = k_->reg(u64);
  k_->mul_wide(offset, sched_->unit_step(), partial_bytes_);
  k_->mul_wide(index, cta, 4);
  return workspace_ + offset + index;
}

void StreamKReduction::store(const Regs& acc) const {
  Kernel& k = *k_;
  Reg thread_offset = k.reg(u64);
  k.mul_wide(thread_offset, tid_, 16);
  Reg address = slot(sched_->first_unit()) + thread_offset;
  for (std::size_t i = 0; i < acc.size(); i += 4)
    k.st(Space::global, f32, at(address, static_cast<std::int64_t>(i / 4 * threads_ * 16)),
         Regs{acc[i], acc[i + 1], acc[i + 2], acc[i + 3]});
  publish_.arrive();
}

void StreamKReduction::publish() const {
  Kernel& k = *k_;
  Reg warp = (tid_ >> 5) & 3;
  k.if_then((warp == 1) && sched_->stream_k_run().partial, [&] {
    publish_.sync();
    k.if_then((tid_ & 31) == 0, [&] {
      k.fence(FenceSem::acq_rel, Scope::gpu);
      k.st(Space::global, u32, at(flag(sched_->first_unit())), 1, {.volatile_ = true});
    });
  });
}

void StreamKReduction::add(const Regs& acc, const Reg& unit, const Staging& staging,
                           const std::function<void()>& acquire_staging) const {
  Kernel& k = *k_;
  const std::uint32_t staged = staging.bytes / 128;  // bytes per thread per round
  const std::size_t round = staged / 4;              // accumulators per round
  acquire_staging();
  Reg unit_begin = (unit - sched_->dp_units()) * sched_->kblocks();
  Reg cta = k.mov(u32, sched_->first_unit()), start = k.reg(u32);
  k.while_loop(
      [&] {
        k.mov(start, sched_->stream_k_start(cta));
        return (cta != 0) && (start > unit_begin);  // CTA cta - 1's run ends inside the unit
      },
      [&] {
        k.sub(cta, cta, 1);
        // An empty run (fewer k-blocks than CTAs) leaves no sum.
        k.if_then(sched_->stream_k_start(cta) < start, [&] {
          k.if_then(tid_ == 0, [&] {
            Reg flag_address = flag(cta), raised = k.reg(u32);
            k.while_loop(
                [&] {
                  k.ld(Space::global, u32, raised, at(flag_address), {.volatile_ = true});
                  return raised == 0;
                },
                [] {});
            k.fence(FenceSem::acq_rel, Scope::gpu);
            k.st(Space::global, u32, at(flag_address), 0);
          });
          partial_.sync();
          Reg thread_offset = k.reg(u64);
          k.mul_wide(thread_offset, tid_, 16);
          Reg from = slot(cta) + thread_offset;
          Reg to = staging.base + staging.offset + staging.warpgroup * staging.bytes +
                   (tid_ & 127) * staged;
          Regs sum = k.regs(f32, 2, "partial");
          for (std::size_t first = 0; first < acc.size(); first += round) {
            // Accumulators first + 4q.. are chunk first / 4 + q.
            for (std::uint32_t q = 0; q < staged / 16; ++q)
              k.cp_async(CpAsyncCache::cg, 16, at(to, q * 16),
                         at(from, static_cast<std::int64_t>((first / 4 + q) * threads_ * 16)));
            k.cp_async_commit();
            k.cp_async_wait_all();
            for (std::size_t i = 0; i < round; i += 2) {
              k.ld(Space::shared, f32, sum, at(to, static_cast<std::int64_t>(i * 4)));
              for (std::size_t j = 0; j < 2; ++j)
                k.add(acc[first + i + j], acc[first + i + j], sum[j]);
            }
          }
        });
      });
}

}  // namespace warpforge::tile
