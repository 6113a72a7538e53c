#include "warpforge/tile/tile_scheduler.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

using namespace dsl;

UnitCoords grouped_raster(Kernel& k, const Reg& unit, const UnitGrid& grid, int group_rows) {
  Reg batch = k.reg(u32), group = k.reg(u32), rows = k.reg(u32), mu = k.reg(u32), nu = k.reg(u32);
  k.div(batch, unit, grid.per_batch);
  Reg r = unit - batch * grid.per_batch;
  k.div(group, r, grid.group_span);
  Reg first = group * group_rows;
  // The last group has the rows that are left.
  k.min(rows, (grid.units_m.is_reg() ? grid.units_m.reg() : k.mov(u32, grid.units_m)) - first,
        group_rows);
  Reg within = r - group * grid.group_span;
  k.rem(mu, within, rows);
  k.div(nu, within, rows);
  return {first + mu, nu, batch};
}

BlockRange split_range(Kernel& k, const Reg& split, const Src& per_split, const Src& total) {
  Reg begin = split * per_split, end = k.reg(u32);
  k.min(end, begin + per_split, total);
  return {begin, end};
}

namespace {

void check_options(const Kernel& k, const TileSchedulerOptions& o) {
  auto refuse = [&](const std::string& what, const std::string& rule) {
    throw TileError("tile scheduler of kernel '" + k.name() + "': " + what + "; " + rule);
  };
  if (o.tile_m < 1 || o.tile_n < 1)
    refuse("tile " + std::to_string(o.tile_m) + "x" + std::to_string(o.tile_n),
           "both sides at least 1");
  if (o.tile_k < 1 || !std::has_single_bit(static_cast<unsigned>(o.tile_k)))
    refuse("tile_k " + std::to_string(o.tile_k),
           "a power of two (k-blocks are counted with a shift)");
  if (o.cluster_m < 1 || o.cluster_n < 1 || o.cluster_m * o.cluster_n > 16)
    refuse("cluster " + std::to_string(o.cluster_m) + "x" + std::to_string(o.cluster_n),
           "each side at least 1, 16 CTAs at most");
  if (o.group_rows < 1) refuse("group_rows " + std::to_string(o.group_rows), "at least 1");
  if (o.splits < 1) refuse("splits " + std::to_string(o.splits), "at least 1");
}

}  // namespace

TileScheduler::TileScheduler(Kernel& k, const TileSchedulerOptions& options, const Reg& m,
                             const Reg& n, const Reg& kdim, const Reg& l)
    : k_(&k), o_(options) {
  check_options(k, o_);
  Reg tiles_m = k.reg(u32), tiles_n = k.reg(u32), units_n = k.reg(u32);
  k.div(tiles_m, m + (o_.tile_m - 1), o_.tile_m);
  k.div(tiles_n, n + (o_.tile_n - 1), o_.tile_n);
  units_m_ = k.reg(u32);
  k.div(units_m_, tiles_m + (o_.cluster_m - 1), o_.cluster_m);
  k.div(units_n, tiles_n + (o_.cluster_n - 1), o_.cluster_n);
  per_batch_ = units_m_ * units_n;
  units_ = per_batch_ * l;
  group_span_ = units_n * o_.group_rows;
  kblocks_ = (kdim + (o_.tile_k - 1)) >> std::countr_zero(static_cast<unsigned>(o_.tile_k));
  items_ = units_;
  if (o_.splits > 1) {
    items_ = units_ * o_.splits;
    per_split_ = k.reg(u32);
    k.div(per_split_, kblocks_ + (o_.splits - 1), o_.splits);
  }
  Reg cta = k.sreg(SReg::ctaid_x), ctas = k.sreg(SReg::nctaid_x);
  const int cluster = o_.cluster_m * o_.cluster_n;
  if (cluster == 1) {
    rank_m_ = rank_n_ = k.mov(u32, 0);
    first_ = cta;
    step_ = ctas;
    return;
  }
  // The grid is whole clusters, numbered along x (rank r of cluster c is CTA c · size + r).
  Reg rank = k.sreg(SReg::cluster_ctarank);
  rank_m_ = k.reg(u32);
  rank_n_ = k.reg(u32);
  k.rem(rank_m_, rank, o_.cluster_m);
  k.div(rank_n_, rank, o_.cluster_m);
  first_ = k.reg(u32);
  step_ = k.reg(u32);
  k.div(first_, cta, cluster);
  k.div(step_, ctas, cluster);
}

Tile TileScheduler::tile(const Reg& unit) const {
  const UnitCoords c =
      grouped_raster(*k_, unit, {units_m_, per_batch_, group_span_}, o_.group_rows);
  Reg m_tile = c.m * o_.cluster_m + rank_m_;
  Reg n_tile = c.n * o_.cluster_n + rank_n_;
  return {m_tile * o_.tile_m, n_tile * o_.tile_n, c.batch, unit};
}

void TileScheduler::for_each(const std::function<void(const WorkItem&)>& body, const Reg* offset,
                             int stride) const {
  Kernel& k = *k_;
  Reg item = offset ? first_ + step_ * *offset : k.mov(u32, first_);
  Reg step = stride == 1 ? step_ : step_ * stride;
  if (o_.splits == 1) {
    Reg zero = k.mov(u32, 0);
    k.while_loop([&] { return item < items_; },
                 [&] {
                   body({tile(item), zero, kblocks_});
                   k.add(item, item, step);
                 });
    return;
  }
  k.while_loop([&] { return item < items_; },
               [&] {
                 Reg split = k.reg(u32), unit = k.reg(u32);
                 k.rem(split, item, o_.splits);
                 k.div(unit, item, o_.splits);
                 // begin = min(split · per_split, kblocks): a split past K's end is empty.
                 BlockRange r = split_range(k, split, per_split_, kblocks_);
                 k.min(r.begin, r.begin, kblocks_);
                 body({tile(unit), r.begin, r.end});
                 k.add(item, item, step);
               });
}

std::vector<HostTile> host_tile_order(const TileSchedulerOptions& o, std::int64_t m, std::int64_t n,
                                      std::int64_t k, std::int64_t l, std::int64_t ctas,
                                      std::int64_t cta) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  const std::int64_t cluster = o.cluster_m * o.cluster_n;
  const std::int64_t units_m = ceil_div(ceil_div(m, o.tile_m), o.cluster_m);
  const std::int64_t units_n = ceil_div(ceil_div(n, o.tile_n), o.cluster_n);
  const std::int64_t per_batch = units_m * units_n, kblocks = ceil_div(k, o.tile_k);
  const std::int64_t per_split = ceil_div(kblocks, o.splits);
  const std::int64_t rank = cta % cluster, rank_m = rank % o.cluster_m, rank_n = rank / o.cluster_m;
  std::vector<HostTile> order;
  for (std::int64_t item = cta / cluster; item < per_batch * l * o.splits; item += ctas / cluster) {
    const std::int64_t split = item % o.splits, unit = item / o.splits;
    const std::int64_t batch = unit / per_batch, r = unit % per_batch;
    const std::int64_t group = r / (units_n * o.group_rows), first = group * o.group_rows;
    const std::int64_t rows = std::min<std::int64_t>(units_m - first, o.group_rows);
    const std::int64_t within = r % (units_n * o.group_rows);
    const std::int64_t mu = first + within % rows, nu = within / rows;
    order.push_back({(mu * o.cluster_m + rank_m) * o.tile_m, (nu * o.cluster_n + rank_n) * o.tile_n,
                     batch, std::min(split * per_split, kblocks),
                     std::min((split + 1) * per_split, kblocks)});
  }
  return order;
}

}  // namespace warpforge::tile
