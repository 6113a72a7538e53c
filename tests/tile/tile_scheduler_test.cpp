// The persistent tile scheduler: the host's order checked for coverage over
// many shapes (every tile of every batch visited exactly once per split, the
// splits covering K exactly once, the grouped raster's order), and the
// kernel's order on the simulator checked against the host's, CTA by CTA.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;
using runtime::Buffer;
using runtime::Device;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::string describe(const TileSchedulerOptions& o, std::int64_t m, std::int64_t n, std::int64_t k,
                     std::int64_t l, std::int64_t ctas) {
  return "tile " + std::to_string(o.tile_m) + "x" + std::to_string(o.tile_n) + "x" +
         std::to_string(o.tile_k) + " cluster " + std::to_string(o.cluster_m) + "x" +
         std::to_string(o.cluster_n) + " group " + std::to_string(o.group_rows) + " splits " +
         std::to_string(o.splits) + " problem " + std::to_string(m) + "x" + std::to_string(n) +
         "x" + std::to_string(k) + " L" + std::to_string(l) + " on " + std::to_string(ctas) +
         " CTAs";
}

// Every CTA's tiles together: each tile of the padded grid (cluster-rounded)
// exactly once per split, the splits of a tile covering [0, kblocks) once.
void expect_exact_cover(const TileSchedulerOptions& o, std::int64_t m, std::int64_t n,
                        std::int64_t k, std::int64_t l, std::int64_t ctas) {
  const std::string what = describe(o, m, n, k, l, ctas);
  const std::int64_t tiles_m = ceil_div(ceil_div(m, o.tile_m), o.cluster_m) * o.cluster_m;
  const std::int64_t tiles_n = ceil_div(ceil_div(n, o.tile_n), o.cluster_n) * o.cluster_n;
  const std::int64_t kblocks = ceil_div(k, o.tile_k);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::vector<int>>
      covered;  // k-block counts
  for (std::int64_t cta = 0; cta < ctas; ++cta)
    for (const HostTile& t : host_tile_order(o, m, n, k, l, ctas, cta)) {
      ASSERT_EQ(t.m0 % o.tile_m, 0) << what;
      ASSERT_EQ(t.n0 % o.tile_n, 0) << what;
      ASSERT_LT(t.m0 / o.tile_m, tiles_m) << what;
      ASSERT_LT(t.n0 / o.tile_n, tiles_n) << what;
      ASSERT_LT(t.batch, l) << what;
      ASSERT_LE(t.kb0, t.kb1) << what;
      ASSERT_LE(t.kb1, kblocks) << what;
      auto& blocks = covered[{t.batch, t.m0, t.n0}];
      blocks.resize(static_cast<std::size_t>(kblocks));
      for (std::int64_t b = t.kb0; b < t.kb1; ++b) ++blocks[static_cast<std::size_t>(b)];
    }
  ASSERT_EQ(static_cast<std::int64_t>(covered.size()), tiles_m * tiles_n * l) << what;
  for (const auto& [tile, blocks] : covered)
    for (std::size_t b = 0; b < blocks.size(); ++b)
      ASSERT_EQ(blocks[b], 1) << what << ": k-block " << b << " of tile (" << std::get<1>(tile)
                              << ", " << std::get<2>(tile) << ") batch " << std::get<0>(tile);
}

TEST(TileScheduler, HostOrderCoversEveryTileAndEveryKBlockOnce) {
  int cases = 0;
  for (auto [tm, tn] : {std::pair{128, 256}, std::pair{64, 64}, std::pair{128, 128}})
    for (auto [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}})
      for (int group : {16, 3, 1})
        for (int splits : {1, 2, 5})
          for (std::int64_t m : {1, 64, 129, 1000, 4096})
            for (std::int64_t n : {1, 200, 1040})
              for (std::int64_t k : {1, 64, 300})
                for (std::int64_t l : {1, 3})
                  for (std::int64_t clusters : {1, 7, 132 / 2}) {
                    const TileSchedulerOptions o{.tile_m = tm,
                                                 .tile_n = tn,
                                                 .tile_k = 64,
                                                 .cluster_m = cm,
                                                 .cluster_n = cn,
                                                 .group_rows = group,
                                                 .splits = splits};
                    expect_exact_cover(o, m, n, k, l, clusters * cm * cn);
                    if (HasFatalFailure()) return;
                    ++cases;
                  }
  EXPECT_GT(cases, 10000);
}

TEST(TileScheduler, HostOrderIsTheGroupedRaster) {
  // 5 x 3 tiles, groups of 2 unit rows: rows {0, 1} N-major (column by
  // column, two rows each), then rows {2, 3}, then row 4 alone.
  const TileSchedulerOptions o{.tile_m = 10, .tile_n = 100, .tile_k = 1, .group_rows = 2};
  const auto order = host_tile_order(o, 50, 300, 1, 1, 1, 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> got;
  for (const HostTile& t : order) got.emplace_back(t.m0 / 10, t.n0 / 100);
  const std::vector<std::pair<std::int64_t, std::int64_t>> want{
      {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 0},
      {2, 1}, {3, 1}, {2, 2}, {3, 2}, {4, 0}, {4, 1}, {4, 2}};
  EXPECT_EQ(got, want);
  // Split-K: a tile's splits are neighbouring items; 10 k-blocks in 3 splits of 4, 4, 2.
  const TileSchedulerOptions s{.tile_m = 10, .tile_n = 10, .tile_k = 1, .splits = 3};
  const auto split = host_tile_order(s, 10, 10, 10, 1, 1, 0);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0], (HostTile{0, 0, 0, 0, 4}));
  EXPECT_EQ(split[1], (HostTile{0, 0, 0, 4, 8}));
  EXPECT_EQ(split[2], (HostTile{0, 0, 0, 8, 10}));
}

TEST(TileScheduler, RefusesOptionsItCannotSchedule) {
  auto refusal = [](const TileSchedulerOptions& o) {
    Kernel k("sched", Target::sm_90a);
    Reg x = k.mov(u32, 1);
    try {
      TileScheduler(k, o, x, x, x, x);
    } catch (const TileError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal({.tile_k = 48}).find("tile_k 48; a power of two"), std::string::npos);
  EXPECT_NE(refusal({.cluster_m = 4, .cluster_n = 8}).find("cluster 4x8"), std::string::npos);
  EXPECT_NE(refusal({.tile_m = 0}).find("tile 0x128"), std::string::npos);
  EXPECT_NE(refusal({.group_rows = 0}).find("group_rows 0"), std::string::npos);
  EXPECT_NE(refusal({.splits = 0}).find("splits 0"), std::string::npos);
  EXPECT_EQ(refusal({}), "accepted");
}

// A kernel whose first thread writes its CTA's items (m0, n0, batch, kb0,
// kb1) in order, then their count.
constexpr int kMaxItems = 64;

std::vector<std::uint32_t> run_order(const TileSchedulerOptions& o, std::uint32_t m,
                                     std::uint32_t n, std::uint32_t k, std::uint32_t l,
                                     std::uint32_t ctas) {
  Kernel kn("order", Target::sm_90a);
  Reg out = kn.param_ptr("out", 4);
  Reg pm = kn.param(u32, "M"), pn = kn.param(u32, "N"), pk = kn.param(u32, "K"),
      pl = kn.param(u32, "L");
  const int cluster = o.cluster_m * o.cluster_n;
  if (cluster > 1) kn.reqnctapercluster(cluster);
  const TileScheduler sched(kn, o, pm, pn, pk, pl);
  Reg cta = kn.sreg(SReg::ctaid_x);
  Reg row = kn.reg(u64);
  kn.mul_wide(row, cta, (kMaxItems * 5 + 1) * 4);
  Reg base = out + row;
  Reg count = kn.mov(u32, 0);
  kn.if_then(kn.sreg(SReg::tid_x) == 0, [&] {
    sched.for_each([&](const WorkItem& w) {
      Reg slot = kn.reg(u64);
      kn.mul_wide(slot, count, 20);
      Reg at_item = base + slot;
      int field = 0;
      for (const Reg& v : {w.tile.m0, w.tile.n0, w.tile.batch, w.kb0, w.kb1})
        kn.st(Space::global, u32, at(at_item, 4 * field++), v);
      kn.add(count, count, 1);
    });
    kn.st(Space::global, u32, at(base, kMaxItems * 5 * 4), count);
  });
  Device dev = Device::sim();
  runtime::Module mod(dev, kn.module());
  const std::size_t words = static_cast<std::size_t>(ctas) * (kMaxItems * 5 + 1);
  Buffer b(dev, words * 4);
  b.fill(0xFF);
  runtime::LaunchConfig config{.grid = {ctas}, .block = {32}};
  if (cluster > 1) config.cluster = {static_cast<std::uint32_t>(cluster)};
  mod.launch("order", config, {b, m, n, k, l});
  return b.download<std::uint32_t>(words);
}

TEST(TileSchedulerOnSim, KernelOrderMatchesTheHostOrderCtaByCta) {
  struct Case {
    TileSchedulerOptions o;
    std::uint32_t m, n, k, l, ctas;
  };
  const std::vector<Case> cases{
      {{.tile_m = 128, .tile_n = 256, .tile_k = 64}, 1000, 1040, 300, 2, 5},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .group_rows = 3}, 600, 300, 64, 1, 7},
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 2}, 700, 520, 100, 2, 6},
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_n = 2, .group_rows = 2},
       520,
       700,
       100,
       1,
       4},
      {{.tile_m = 128, .tile_n = 64, .tile_k = 32, .splits = 3}, 300, 200, 200, 2, 8},
      {{.tile_m = 64, .tile_n = 128, .tile_k = 64, .splits = 4},
       64,
       128,
       130,
       1,
       3},  // 3 k-blocks: one split empty
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 2, .splits = 2},
       256,
       384,
       512,
       1,
       4},
  };
  for (const Case& c : cases) {
    const std::string what = describe(c.o, c.m, c.n, c.k, c.l, c.ctas);
    const auto got = run_order(c.o, c.m, c.n, c.k, c.l, c.ctas);
    for (std::uint32_t cta = 0; cta < c.ctas; ++cta) {
      const auto want = host_tile_order(c.o, c.m, c.n, c.k, c.l, c.ctas, cta);
      ASSERT_LE(want.size(), static_cast<std::size_t>(kMaxItems)) << what;
      const std::uint32_t* row = got.data() + cta * (kMaxItems * 5 + 1);
      ASSERT_EQ(row[kMaxItems * 5], want.size()) << what << ", CTA " << cta;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const HostTile t{row[5 * i], row[5 * i + 1], row[5 * i + 2], row[5 * i + 3],
                         row[5 * i + 4]};
        EXPECT_EQ(t, want[i]) << what << ", CTA " << cta << " item " << i << ": kernel (" << t.m0
                              << ", " << t.n0 << ", " << t.batch << ", [" << t.kb0 << ", " << t.kb1
                              << ")) host (" << want[i].m0 << ", " << want[i].n0 << ", "
                              << want[i].batch << ", [" << want[i].kb0 << ", " << want[i].kb1
                              << "))";
      }
    }
  }
}

}  // namespace
}  // namespace warpforge::tile
