// Small kernels on the Hopper scaffold, shared by the simulator tests
// (tests/tile) and the GPU tests (tests/gpu/tile_scaffold_test.cpp), which
// run them on a device and compare with what they must compute:
//  - a producer/consumer ring: warp 0 moves numbered values through an
//    MbarrierPipeline of fewer stages than values to consumer warps, which
//    store what they read;
//  - the tile scheduler's order: each CTA's first thread writes its work
//    items, which must be host_tile_order's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile::testing {

// Warp 0 produces `items` values per lane into a ring of `stages` slots of
// 32 u32; consumer warps 1..consumers read them into out[consumer][item][lane].
// Cooperative: every consumer reads every item (the empty barrier counts
// all their threads). Alternating: consumer c reads items c, c + consumers,
// ... and skips the others' slots (consumers <= stages, so that no consumer
// waits a whole ring ahead of a barrier's current phase).
struct Ring {
  int stages, items, consumers;
  bool alternating;
};

inline std::uint32_t ring_value(int item, int lane) {
  return static_cast<std::uint32_t>(item * 1000 + lane + 7);
}

inline ptx::Module ring_kernel(const Ring& r) {
  using namespace dsl;
  Kernel k("ring", Target::sm_90a);
  Reg out = k.param_ptr("out", 4);
  Shared ring = k.shared("ring", 32 * 4 * r.stages, 16);
  Shared bars = k.shared("bars", 16 * r.stages, 8);
  Reg bar_base = k.address_of(bars);
  const MbarrierPipeline pipe(MbarrierArray(k, bar_base, 0, r.stages),
                              MbarrierArray(k, bar_base, 8 * r.stages, r.stages));
  Reg tid = k.sreg(SReg::tid_x), lane = tid & 31, warp = tid >> 5;
  k.if_then(tid == 0, [&] {
    pipe.init(32, r.alternating ? 32 : 32 * r.consumers);
    k.fence_mbarrier_init();
  });
  k.bar_sync(0);
  Reg slot_of_lane = k.address_of(ring) + (lane << 2);
  k.if_else(
      warp == 0,
      [&] {
        PipelineState s(k, r.stages);
        k.for_range(0, r.items, 1, [&](Reg i) {
          pipe.acquire(s);
          Reg value = i * 1000 + lane + 7;  // ring_value
          k.st(Space::shared, u32, at(slot_of_lane + (s.stage() << 7)), value);
          pipe.commit(s.stage());
          ++s;
        });
      },
      [&] {
        Reg c = warp - 1;
        PipelineState s(k, r.stages);
        if (r.alternating) k.if_then(c != 0, [&] { s.skip(c); });
        Reg first = r.alternating ? c : k.mov(u32, 0);
        k.for_range(first, r.items, r.alternating ? r.consumers : 1, [&](Reg i) {
          pipe.wait(s);
          Reg value = k.reg(u32);
          k.ld(Space::shared, u32, value, at(slot_of_lane + (s.stage() << 7)));
          pipe.release(s.stage());
          Reg index = (c * r.items + i) * 32 + lane, offset = k.reg(u64);
          k.mul_wide(offset, index, 4);
          k.st(Space::global, u32, at(out + offset), value);
          ++s;
          if (r.alternating && r.consumers > 1) s.skip(r.consumers - 1);
        });
      });
  return k.module();
}

inline std::vector<std::uint32_t> run_ring(const runtime::Device& dev, const Ring& r) {
  runtime::Module m(dev, ring_kernel(r));
  const std::size_t n = static_cast<std::size_t>(r.consumers) * r.items * 32;
  runtime::Buffer b(dev, n * 4);
  b.fill(0xFF);
  m.launch("ring", {.grid = {1}, .block = {static_cast<std::uint32_t>(32 * (1 + r.consumers))}},
           {b});
  return b.download<std::uint32_t>(n);
}

// The first element that differs from what the ring must deliver (an
// alternating consumer writes only its own items: the rest keep the
// 0xFF poison), or "" when all agree.
inline std::string ring_mismatch(const Ring& r, const std::vector<std::uint32_t>& out) {
  for (int c = 0; c < r.consumers; ++c)
    for (int i = 0; i < r.items; ++i)
      for (int l = 0; l < 32; ++l) {
        const bool mine = !r.alternating || i % r.consumers == c;
        const std::uint32_t want = mine ? ring_value(i, l) : 0xFFFFFFFFu;
        const std::uint32_t got = out[static_cast<std::size_t>((c * r.items + i) * 32 + l)];
        if (got != want)
          return "stages " + std::to_string(r.stages) + ", " + std::to_string(r.consumers) +
                 (r.alternating ? " alternating" : " cooperative") + " consumers: consumer " +
                 std::to_string(c) + " item " + std::to_string(i) + " lane " + std::to_string(l) +
                 " read " + std::to_string(got) + ", expected " + std::to_string(want);
      }
  return "";
}

// A launch of the order kernel: scheduler options, problem, CTAs.
struct OrderLaunch {
  TileSchedulerOptions o;
  std::uint32_t m, n, k, l, ctas;
};

// Each CTA writes up to kMaxItems items of 6 words (m0, n0, batch, kb0,
// kb1, partial) then their count.
inline constexpr int kMaxItems = 64;
inline constexpr int kFields = 6;
inline constexpr int kRowWords = kMaxItems * kFields + 1;

// How the order kernel walks the items: for_each over the sizes in
// registers (kernel parameters) or compiled in (immediates, the launch's),
// or one WorkCursor step at a time (sizes in registers).
enum class OrderWalk { registers, immediates, cursor };

inline ptx::Module order_kernel(const TileSchedulerOptions& o, OrderWalk walk = OrderWalk::registers,
                                const std::uint32_t* sizes = nullptr) {
  using namespace dsl;
  Kernel kn("order", Target::sm_90a);
  Reg out = kn.param_ptr("out", 4);
  Reg pm = kn.param(u32, "M"), pn = kn.param(u32, "N");
  Reg pk = kn.param(u32, "K"), pl = kn.param(u32, "L");
  const int cluster = o.cluster_m * o.cluster_n;
  if (cluster > 1) kn.reqnctapercluster(cluster);
  const TileScheduler sched = walk == OrderWalk::immediates
                                  ? TileScheduler(kn, o, sizes[0], sizes[1], sizes[2], sizes[3])
                                  : TileScheduler(kn, o, pm, pn, pk, pl);
  Reg row = kn.reg(u64);
  kn.mul_wide(row, kn.sreg(SReg::ctaid_x), kRowWords * 4);
  Reg base = out + row;
  Reg count = kn.mov(u32, 0);
  auto record = [&](const WorkItem& w) {
    Reg slot = kn.reg(u64);
    kn.mul_wide(slot, count, kFields * 4);
    Reg at_item = base + slot;
    Reg partial = w.partial ? *w.partial : kn.mov(u32, 0);
    int field = 0;
    for (const Reg& v : {w.tile.m0, w.tile.n0, w.tile.batch, w.kb0, w.kb1, partial})
      kn.st(Space::global, u32, at(at_item, 4 * field++), v);
    kn.add(count, count, 1);
  };
  kn.if_then(kn.sreg(SReg::tid_x) == 0, [&] {
    if (walk == OrderWalk::cursor) {
      WorkCursor cursor = sched.cursor();
      kn.while_loop([&] { return cursor.valid(); },
                    [&] {
                      record(cursor.item());
                      cursor.next();
                    });
    } else {
      sched.for_each(record);
    }
    kn.st(Space::global, u32, at(base, kMaxItems * kFields * 4), count);
  });
  return kn.module();
}

inline std::vector<std::uint32_t> run_order(const runtime::Device& dev, const OrderLaunch& c,
                                            OrderWalk walk = OrderWalk::registers) {
  const std::uint32_t sizes[] = {c.m, c.n, c.k, c.l};
  runtime::Module mod(dev, order_kernel(c.o, walk, sizes));
  const std::size_t words = static_cast<std::size_t>(c.ctas) * kRowWords;
  runtime::Buffer b(dev, words * 4);
  b.fill(0xFF);
  runtime::LaunchConfig config{.grid = {c.ctas}, .block = {32}};
  const int cluster = c.o.cluster_m * c.o.cluster_n;
  if (cluster > 1) config.cluster = {static_cast<std::uint32_t>(cluster)};
  mod.launch("order", config, {b, c.m, c.n, c.k, c.l});
  return b.download<std::uint32_t>(words);
}

inline std::string show(const HostTile& t) {
  return "(" + std::to_string(t.m0) + ", " + std::to_string(t.n0) + ", batch " +
         std::to_string(t.batch) + ", [" + std::to_string(t.kb0) + ", " + std::to_string(t.kb1) +
         ")" + (t.partial ? ", partial" : "") + ")";
}

// The first CTA item where the kernel's order departs from host_tile_order,
// or "" when they agree.
inline std::string order_mismatch(const OrderLaunch& c, const std::vector<std::uint32_t>& got) {
  for (std::uint32_t cta = 0; cta < c.ctas; ++cta) {
    const auto want = host_tile_order(c.o, c.m, c.n, c.k, c.l, c.ctas, cta);
    const std::uint32_t* row = got.data() + static_cast<std::size_t>(cta) * kRowWords;
    const std::string where = "CTA " + std::to_string(cta);
    if (want.size() > static_cast<std::size_t>(kMaxItems))
      return where + ": more items than the test records";
    if (row[kMaxItems * kFields] != want.size())
      return where + ": " + std::to_string(row[kMaxItems * kFields]) + " items, host " +
             std::to_string(want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const std::uint32_t* f = row + kFields * i;
      const HostTile t{f[0], f[1], f[2], f[3], f[4], f[5] != 0};
      if (!(t == want[i]))
        return where + " item " + std::to_string(i) + ": kernel " + show(t) + ", host " +
               show(want[i]);
    }
  }
  return "";
}

// Launches that cover the scheduler's modes (k-blocks of 64 but in one):
// grouped raster (full and short groups), clusters along M and N, split-K
// (one split empty), stream-K (48 units on 7 CTAs: 6 waves, 6 units split;
// 36 on 5: 7 waves less one, since a remainder of 1 is under half a wave;
// 4 one-k-block units on 8 CTAs: runs shorter than a k-block, some empty).
inline std::vector<OrderLaunch> order_launches() {
  return {
      {{.tile_m = 128, .tile_n = 256}, 1000, 1040, 300, 2, 5},
      {{.tile_m = 64, .tile_n = 64, .group_rows = 3}, 600, 300, 64, 1, 7},
      {{.tile_m = 128, .tile_n = 128, .cluster_m = 2}, 700, 520, 100, 2, 6},
      {{.tile_m = 128, .tile_n = 128, .cluster_n = 2, .group_rows = 2}, 520, 700, 100, 1, 4},
      {{.tile_m = 128, .tile_n = 64, .tile_k = 32, .splits = 3}, 300, 200, 200, 2, 8},
      {{.tile_m = 64, .tile_n = 128, .splits = 4}, 64, 128, 130, 1, 3},
      {{.tile_m = 128, .tile_n = 128, .cluster_m = 2, .splits = 2}, 256, 384, 512, 1, 4},
      {{.tile_m = 128, .tile_n = 128, .stream_k = true}, 1000, 700, 1000, 1, 7},
      {{.tile_m = 128, .tile_n = 256, .stream_k = true}, 700, 700, 300, 2, 5},
      {{.tile_m = 64, .tile_n = 64, .stream_k = true}, 100, 100, 64, 1, 8},
  };
}

}  // namespace warpforge::tile::testing
