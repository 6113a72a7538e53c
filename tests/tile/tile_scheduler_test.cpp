// The persistent tile scheduler: the host's order checked for coverage over
// many shapes (every tile of every batch visited exactly once per split, the
// splits or stream-K pieces covering K exactly once, the grouped raster's
// order), and the kernel's order on the simulator checked against the
// host's, CTA by CTA.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "tile/scaffold_kernels.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;
using runtime::Device;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::string describe(const TileSchedulerOptions& o, std::int64_t m, std::int64_t n, std::int64_t k,
                     std::int64_t l, std::int64_t ctas) {
  return "tile " + std::to_string(o.tile_m) + "x" + std::to_string(o.tile_n) + "x" +
         std::to_string(o.tile_k) + " cluster " + std::to_string(o.cluster_m) + "x" +
         std::to_string(o.cluster_n) + " group " + std::to_string(o.group_rows) + " splits " +
         std::to_string(o.splits) + (o.stream_k ? " stream-K" : "") + " problem " +
         std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " L" +
         std::to_string(l) + " on " + std::to_string(ctas) + " CTAs";
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

// Stream-K: every k-block of every tile once, over the data-parallel units
// and the split ones; a CTA leaves at most one partial piece, first among
// its split pieces, and a later CTA's piece reaches that tile's last k-block.
TEST(TileScheduler, StreamKPiecesCoverEveryTileOnceWithOnePartialPieceAtMost) {
  int cases = 0, partial_pieces = 0;
  for (auto [tm, tn] : {std::pair{128, 256}, std::pair{64, 64}})
    for (std::int64_t m : {1, 129, 1000, 4096})
      for (std::int64_t n : {1, 200, 1040})
        for (std::int64_t k : {1, 64, 300, 4096})
          for (std::int64_t l : {1, 3})
            for (std::int64_t ctas : {1, 5, 7, 132}) {
              const TileSchedulerOptions o{
                  .tile_m = tm, .tile_n = tn, .tile_k = 64, .stream_k = true};
              const std::string what = describe(o, m, n, k, l, ctas);
              const std::int64_t kblocks = ceil_div(k, 64);
              expect_exact_cover(o, m, n, k, l, ctas);
              if (HasFatalFailure()) return;
              std::vector<std::vector<HostTile>> orders;
              for (std::int64_t cta = 0; cta < ctas; ++cta)
                orders.push_back(host_tile_order(o, m, n, k, l, ctas, cta));
              for (std::int64_t cta = 0; cta < ctas; ++cta) {
                const auto& order = orders[static_cast<std::size_t>(cta)];
                int partials = 0;
                for (std::size_t i = 0; i < order.size(); ++i) {
                  if (!order[i].partial) continue;
                  ++partials;
                  ASSERT_LT(order[i].kb1, kblocks) << what;
                  // Whole units before it, pieces that end their units after it.
                  for (std::size_t j = 0; j < order.size(); ++j)
                    ASSERT_TRUE(j == i || ((j < i ? order[j].kb0 == 0 : !order[j].partial) &&
                                           order[j].kb1 == kblocks))
                        << what << ": CTA " << cta << " piece " << j;
                  bool finished = false;
                  for (std::int64_t later = cta + 1; later < ctas; ++later)
                    for (const HostTile& t : orders[static_cast<std::size_t>(later)])
                      finished |= !t.partial && t.m0 == order[i].m0 && t.n0 == order[i].n0 &&
                                  t.batch == order[i].batch && t.kb1 == kblocks;
                  ASSERT_TRUE(finished) << what << ": CTA " << cta << "'s partial piece";
                }
                ASSERT_LE(partials, 1) << what << ": CTA " << cta;
                partial_pieces += partials;
              }
              ++cases;
            }
  EXPECT_EQ(cases, 2 * 4 * 3 * 4 * 2 * 4);
  EXPECT_GT(partial_pieces, 100);  // the shapes reach the split units
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
  EXPECT_NE(refusal({.cluster_m = 2, .stream_k = true}).find("stream-K with cluster 2x1"),
            std::string::npos);
  EXPECT_NE(refusal({.splits = 2, .stream_k = true}).find("and 2 splits"), std::string::npos);
  EXPECT_EQ(refusal({}), "accepted");
}

TEST(TileScheduler, StreamKRefusesAnOffsetOrStride) {
  Kernel k("sched", Target::sm_90a);
  Reg x = k.mov(u32, 1);
  const TileScheduler sched(k, {.stream_k = true}, x, x, x, x);
  try {
    sched.for_each([](const WorkItem&) {}, &x, 2);
    FAIL() << "an offset and stride 2 accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("stride 2"), std::string::npos) << e.what();
  }
}

TEST(TileSchedulerOnSim, KernelOrderMatchesTheHostOrderCtaByCta) {
  for (const testing::OrderLaunch& c : testing::order_launches())
    EXPECT_EQ(testing::order_mismatch(c, testing::run_order(Device::sim(), c)), "")
        << describe(c.o, c.m, c.n, c.k, c.l, c.ctas);
}

// Sizes compiled in (the grid counted on the host, immediates in the code)
// and a cursor walking the items one at a time give the same order (every
// mode but stream-K, which takes neither).
TEST(TileSchedulerOnSim, ImmediateSizesAndTheCursorWalkTheSameOrder) {
  for (const testing::OrderLaunch& c : testing::order_launches()) {
    if (c.o.stream_k) continue;
    for (testing::OrderWalk walk : {testing::OrderWalk::immediates, testing::OrderWalk::cursor})
      EXPECT_EQ(testing::order_mismatch(c, testing::run_order(Device::sim(), c, walk)), "")
          << describe(c.o, c.m, c.n, c.k, c.l, c.ctas)
          << (walk == testing::OrderWalk::cursor ? " (cursor)" : " (immediates)");
  }
}

TEST(TileScheduler, RefusesStreamKOverImmediateSizesAndACursorOverStreamK) {
  Kernel k("refused", Target::sm_90a);
  EXPECT_THROW(TileScheduler(k, {.stream_k = true}, 100u, 100u, 100u, 1u), TileError);
  Reg x = k.param(u32, "x");
  const TileScheduler sched(k, {.stream_k = true}, x, x, x, x);
  EXPECT_THROW(sched.cursor(), TileError);
  EXPECT_THROW(TileScheduler(k, {}, 0u, 100u, 100u, 1u), TileError);  // M of 0
}

}  // namespace
}  // namespace warpforge::tile
