#include "transposed_output.hpp"

#include "warpforge/error.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

void split_k_reduce(Kernel& k, std::vector<Regs>& acc, const SplitKReduce& r, const std::function<void()>& finish) {
  const std::uint64_t slot_bytes = split_k_slot_bytes(r.threads, acc.size());
  auto barrier = [&] {
    if (r.barrier)
      r.barrier->sync();
    else
      k.bar_sync();
  };
  Reg thread_offset = k.reg(u64);
  k.mul_wide(thread_offset, r.thread, 16);
  Reg slots = k.reg(u64);
  k.mul_wide(slots, r.unit * imm(r.splits), imm(static_cast<std::int64_t>(slot_bytes)));
  Reg first_slot = r.workspace + slots + thread_offset;
  Reg mine = k.reg(u64);
  k.mul_wide(mine, r.split, imm(static_cast<std::int64_t>(slot_bytes)));
  for (std::size_t g = 0; g < acc.size(); ++g)
    k.st(Space::global, f32, at(first_slot + mine, static_cast<std::int64_t>(g) * r.threads * 16), acc[g]);
  k.fence(FenceSem::acq_rel, Scope::gpu);
  barrier();
  Reg counter_offset = k.reg(u64);
  k.mul_wide(counter_offset, r.unit, 4u);
  Reg counter = r.workspace + counter_offset + r.counter_offset;
  k.if_then(r.thread == 0u, [&] {
    Reg arrived = k.reg(u32);
    k.atom(Space::global, AtomOp::add, u32, arrived, at(counter), 1u);
    Reg is_last = k.reg(u32);
    k.selp(is_last, 1u, 0u, arrived == imm(r.splits - 1));
    k.st(Space::shared, u32, at(r.flag), is_last);
  });
  barrier();
  Reg is_last = k.reg(u32);
  k.ld(Space::shared, u32, is_last, at(r.flag));
  k.if_then(is_last == 1u, [&] {
    k.fence(FenceSem::acq_rel, Scope::gpu);
    for (int s = 0; s < r.splits; ++s)
      for (std::size_t g = 0; g < acc.size(); ++g) {
        const std::int64_t offset = static_cast<std::int64_t>(s * slot_bytes) + static_cast<std::int64_t>(g) * r.threads * 16;
        if (s == 0) {
          k.ld(Space::global, f32, acc[g], at(first_slot, offset), {.cache = Cache::cg});
          continue;
        }
        Regs part = k.regs(f32, 4);
        k.ld(Space::global, f32, part, at(first_slot, offset), {.cache = Cache::cg});
        for (std::size_t q = 0; q < 4; ++q) k.add(acc[g][q], acc[g][q], part[q]);
      }
    k.if_then(r.thread == 0u, [&] { k.st(Space::global, u32, at(counter), 0u); });
    finish();
  });
}

void require_cluster_splits(const std::string& kernel, int splits) {
  if (splits > kMaxClusterSplits)
    throw OpsError(kernel + ": " + std::to_string(splits) + " K splits in a cluster; a cluster takes up to " +
                   std::to_string(kMaxClusterSplits) + " (the portable cluster size)");
}

void cluster_split_reduce(Kernel& k, std::vector<Regs>& acc, const ClusterSplitReduce& r,
                          const std::function<void()>& finish) {
  const auto splits = imm(r.splits);
  const std::int64_t tile = kClusterSlotTileBytes;
  const auto slot_bytes = imm(static_cast<std::int64_t>(acc.size()) * tile);  // one split's partials of a warp
  Reg owner = k.reg(u32), local = k.reg(u32);
  k.rem(owner, r.warp, splits);
  k.div(local, r.warp, splits);
  // The owner's slots of the warp (split order), and this split's one.
  Reg first = r.slots + local * splits * slot_bytes + (r.lane << 4u);
  Reg slot = first + r.split * slot_bytes;
  Reg remote = k.reg(u32);
  k.mapa_shared(remote, slot, owner);
  k.barrier_cluster_arrive();  // every CTA's main loop is over: the slots are free
  k.barrier_cluster_wait();
  for (std::size_t g = 0; g < acc.size(); ++g)
    k.st(Space::shared, f32, at(remote, static_cast<std::int64_t>(g) * tile), acc[g], {.cluster = true});
  k.barrier_cluster_arrive();  // release: the partials reach their owners
  k.barrier_cluster_wait();
  k.if_then(owner == r.split, [&] {
    for (int s = 0; s < r.splits; ++s)
      for (std::size_t g = 0; g < acc.size(); ++g) {
        const std::int64_t offset = static_cast<std::int64_t>(s * acc.size() + g) * tile;
        if (s == 0) {
          k.ld(Space::shared, f32, acc[g], at(first, offset));
          continue;
        }
        Regs part = k.regs(f32, 4);
        k.ld(Space::shared, f32, part, at(first, offset));
        for (std::size_t q = 0; q < 4; ++q) k.add(acc[g][q], acc[g][q], part[q]);
      }
    finish();
  });
}

void join_cluster_split_reduce(Kernel& k) {
  for (int i = 0; i < 2; ++i) {
    k.barrier_cluster_arrive(false);
    k.barrier_cluster_wait(false);
  }
}

void store_transposed(Kernel& k, const GemmAmaxProblem& p, const TransposedTiles& tiles, const Reg& batch,
                      const Reg& c, const Reg& amax, const Reg& lane) {
  Reg thread_max = k.mov(u32, 0u);
  Reg batch_part = batch * imm(p.c.batch);
  for (int i = 0; i < tiles.row_tiles; ++i)
    for (int nt = 0; nt < tiles.token_tiles; ++nt)
      for (int q = 0; q < 4; ++q) {
        Reg n = tiles.row0 + imm(16 * i + 8 * (q / 2));
        Reg m = tiles.token0 + imm(8 * nt + q % 2);
        Pred in = (n < imm(p.n)) && (m < imm(p.m));
        const Reg& v = tiles.acc[static_cast<std::size_t>(i * tiles.token_tiles + nt)][static_cast<std::size_t>(q)];
        Reg bits = k.reg(b32);
        k.mov(bits, v);
        Reg kept = k.reg(u32);
        k.selp(kept, bits.as(u32) & 0x7fffffffu, 0u, in);
        k.max(thread_max, thread_max, kept);
        Reg element = m * imm(p.c.row) + n * imm(p.c.col) + batch_part;
        Reg offset = k.reg(u64);
        const int size = static_cast<int>(runtime::bits(p.c_dtype) / 8);
        k.mul_wide(offset, element, imm(size));
        Reg address = c + offset;
        if (p.c_dtype == DType::f32) {
          k.guarded(in, [&] { k.st(Space::global, f32, at(address), v); });
        } else {
          Reg h = k.reg(b16);
          k.cvt(p.c_dtype == DType::f16 ? f16 : bf16, f32, h, v, {Round::rn});
          k.guarded(in, [&] { k.st(Space::global, b16, at(address), h); });
        }
      }
  Reg warp_max = k.reg(u32);
  k.redux_sync(Redux::max, warp_max, thread_max);
  k.if_then(lane == 0u, [&] { k.red(Space::global, AtomOp::max, u32, at(amax), warp_max); });
}

}  // namespace warpforge::ops
