#include "warpforge/tile/tile_scheduler.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

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

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

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
  if (o.stream_k && (o.cluster_m * o.cluster_n > 1 || o.splits > 1))
    refuse("stream-K with cluster " + std::to_string(o.cluster_m) + "x" +
               std::to_string(o.cluster_n) + " and " + std::to_string(o.splits) + " splits",
           "stream-K takes a 1x1 cluster and no split-K");
}

}  // namespace

TileScheduler::TileScheduler(Kernel& k, const TileSchedulerOptions& options, const Src& m, const Src& n,
                             const Src& kdim, const Src& l)
    : k_(&k), o_(options) {
  check_options(k, o_);
  if (!m.is_reg() && !n.is_reg() && !kdim.is_reg() && !l.is_reg()) {
    count_on_host(m, n, kdim, l);
  } else {
    // Registers (an immediate among them moved into one).
    auto reg = [&](const Src& v) { return v.is_reg() ? v.reg() : k.mov(u32, v); };
    const Reg mr = reg(m), nr = reg(n), kr = reg(kdim), lr = reg(l);
    Reg tiles_m = k.reg(u32), tiles_n = k.reg(u32), units_n = k.reg(u32);
    k.div(tiles_m, mr + (o_.tile_m - 1), o_.tile_m);
    k.div(tiles_n, nr + (o_.tile_n - 1), o_.tile_n);
    Reg units_m = k.reg(u32);
    k.div(units_m, tiles_m + (o_.cluster_m - 1), o_.cluster_m);
    k.div(units_n, tiles_n + (o_.cluster_n - 1), o_.cluster_n);
    Reg per_batch = units_m * units_n;
    Reg units = per_batch * lr;
    units_m_ = units_m;
    per_batch_ = per_batch;
    units_ = units;
    group_span_ = units_n * o_.group_rows;
    kblocks_ = (kr + (o_.tile_k - 1)) >> std::countr_zero(static_cast<unsigned>(o_.tile_k));
    items_ = units_;
    if (o_.splits > 1) {
      items_ = units * o_.splits;
      Reg per_split = k.reg(u32);
      k.div(per_split, kblocks_.reg() + (o_.splits - 1), o_.splits);
      per_split_ = per_split;
    }
  }
  Reg cta = k.sreg(SReg::ctaid_x), ctas = k.sreg(SReg::nctaid_x);
  const int cluster = o_.cluster_m * o_.cluster_n;
  if (cluster == 1) {
    rank_m_ = rank_n_ = k.mov(u32, 0);
    first_ = cta;
    step_ = ctas;
    if (o_.stream_k) {
      Reg waves = k.reg(u32), rest = k.reg(u32), split = k.reg(u32);
      k.div(waves, units_, ctas);
      k.sub(rest, units_, waves * ctas);
      k.selp(split, rest + ctas, rest, (rest != 0) && (waves != 0) && ((rest << 1) < ctas));
      dp_units_ = units_.reg() - split;
    }
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

// Sizes compiled into the kernel: the grid counted here, immediates in the code.
void TileScheduler::count_on_host(const Src& m, const Src& n, const Src& kdim, const Src& l) {
  const Kernel& k = *k_;
  auto value = [&](const Src& v, const char* what) {
    const std::int64_t x = v.imm().int_value();
    if (x < 1 || x > 0xFFFFFFFFll)
      throw TileError("tile scheduler of kernel '" + k.name() + "': " + what + " " + std::to_string(x) +
                      "; sizes are 1 .. 2^32 - 1");
    return x;
  };
  if (o_.stream_k)
    throw TileError("tile scheduler of kernel '" + k.name() +
                    "': stream-K with immediate sizes; stream-K takes the sizes in registers");
  const std::int64_t mv = value(m, "M"), nv = value(n, "N"), kv = value(kdim, "K"), lv = value(l, "L");
  const std::int64_t units_m = ceil_div(ceil_div(mv, o_.tile_m), o_.cluster_m);
  const std::int64_t units_n = ceil_div(ceil_div(nv, o_.tile_n), o_.cluster_n);
  const std::int64_t kblocks = ceil_div(kv, o_.tile_k), per_split = ceil_div(kblocks, o_.splits);
  const std::int64_t items = units_m * units_n * lv * o_.splits;
  if (items > 0xFFFFFFFFll)
    throw TileError("tile scheduler of kernel '" + k.name() + "': " + std::to_string(items) +
                    " work items; at most 2^32 - 1");
  auto imm = [](std::int64_t v) { return Src(static_cast<std::uint32_t>(v)); };
  units_m_ = imm(units_m);
  per_batch_ = imm(units_m * units_n);
  units_ = imm(units_m * units_n * lv);
  group_span_ = imm(units_n * o_.group_rows);
  kblocks_ = imm(kblocks);
  items_ = imm(items);
  per_split_ = imm(per_split);
  splits_all_inside_ = (o_.splits - 1) * per_split < kblocks;
}

Tile TileScheduler::tile(const Reg& unit) const {
  const UnitCoords c =
      grouped_raster(*k_, unit, {units_m_, per_batch_, group_span_}, o_.group_rows);
  Reg m_tile = c.m * o_.cluster_m + rank_m_;
  Reg n_tile = c.n * o_.cluster_n + rank_n_;
  return {m_tile * o_.tile_m, n_tile * o_.tile_n, c.batch, unit};
}

// c·T/G in 32 bits: with T = q·G + r it is c·q + c·r/G, and c·r < G² fits.
// (A 64-bit division is a call to a subroutine, and a call anywhere in the
// kernel makes ptxas serialize every wgmma when the driver links the code.)
Reg TileScheduler::stream_k_start(const Reg& cta) const {
  Kernel& k = *k_;
  Reg iters = (units_.reg() - dp_units_) * kblocks_;
  Reg per_cta = k.reg(u32), rest = k.reg(u32), extra = k.reg(u32);
  k.div(per_cta, iters, step_);
  k.rem(rest, iters, step_);
  k.div(extra, cta * rest, step_);
  return cta * per_cta + extra;
}

StreamKRun TileScheduler::stream_k_run() const {
  Kernel& k = *k_;
  StreamKRun r{stream_k_start(first_), stream_k_start(first_ + 1), k.reg(u32), {}};
  Reg last = k.reg(u32);
  k.div(last, r.end - 1, kblocks_);  // meaningless for an empty run, which has no partial piece
  Reg last_begin = last * kblocks_;
  k.max(r.split, r.begin, last_begin);
  r.partial = (r.begin < r.end) && (r.end != last_begin + kblocks_);
  return r;
}

// The run is computed again where needed: cheaper than registers held
// through every mainloop.
void TileScheduler::for_each_stream_k(const std::function<void(const WorkItem&)>& body) const {
  Kernel& k = *k_;
  Reg unit = k.mov(u32, first_), cursor = k.reg(u32), pending = k.reg(u32);
  Reg more = k.reg(u32), at_unit = k.reg(u32);
  {
    const StreamKRun run = stream_k_run();
    k.mov(cursor, run.begin);
    k.selp(pending, 1, 0, run.partial);
  }
  WorkItem w{{}, k.reg(u32), k.reg(u32), k.reg(u32)};
  // The split unit holding k-block `it` of the runs, and that unit's first k-block.
  auto split_unit = [&](const Reg& it) {
    Reg index = k.reg(u32);
    k.div(index, it, kblocks_);
    k.add(at_unit, dp_units_, index);
    return index * kblocks_;
  };
  k.while_loop(
      [&] {
        k.mov(more, 1);
        k.mov(w.kb0, 0);
        k.mov(w.kb1, kblocks_);
        k.mov(*w.partial, 0);
        k.if_else(
            unit < dp_units_,
            [&] {
              k.mov(at_unit, unit);
              k.add(unit, unit, step_);
            },
            [&] {
              k.if_else(
                  pending != 0,
                  [&] {
                    const StreamKRun run = stream_k_run();
                    Reg first = split_unit(run.split);
                    k.sub(w.kb0, run.split, first);
                    k.sub(w.kb1, run.end, first);
                    k.mov(*w.partial, 1);
                    k.mov(pending, 0);
                  },
                  [&] {
                    const StreamKRun run = stream_k_run();
                    Reg stop = k.reg(u32);  // the partial piece was taken first
                    k.selp(stop, run.split, run.end, run.partial);
                    k.selp(more, 1, 0, cursor < stop);
                    k.if_then(more != 0, [&] {
                      Reg first = split_unit(cursor);
                      k.sub(w.kb0, cursor, first);
                      k.add(cursor, first, kblocks_);
                    });
                  });
            });
        return more != 0;
      },
      [&] {
        w.tile = tile(at_unit);
        body(w);
      });
}

void TileScheduler::for_each(const std::function<void(const WorkItem&)>& body, const Reg* offset,
                             int stride) const {
  Kernel& k = *k_;
  if (o_.stream_k) {
    if (offset || stride != 1)
      throw TileError("tile scheduler of kernel '" + k.name() + "': stream-K work with " +
                      (offset ? "an offset" : std::string("no offset")) + " and stride " +
                      std::to_string(stride) +
                      "; a CTA's stream-K pieces are one sequence (no offset, stride 1)");
    return for_each_stream_k(body);
  }
  Reg index = offset ? first_ + step_ * *offset : k.mov(u32, first_);
  Reg step = stride == 1 ? step_ : step_ * stride;
  if (o_.splits == 1) {
    Reg zero = k.mov(u32, 0);
    Reg kb1 = kblocks_.is_reg() ? kblocks_.reg() : k.mov(u32, kblocks_);
    k.while_loop([&] { return index < items_; },
                 [&] {
                   body({tile(index), zero, kb1, std::nullopt});
                   k.add(index, index, step);
                 });
    return;
  }
  k.while_loop([&] { return index < items_; },
               [&] {
                 body(item(index));
                 k.add(index, index, step);
               });
}

WorkItem TileScheduler::item(const Reg& index) const {
  Kernel& k = *k_;
  if (o_.splits == 1) return {tile(index), k.mov(u32, 0), k.mov(u32, kblocks_), std::nullopt};
  Reg split = k.reg(u32), unit = k.reg(u32);
  k.rem(split, index, o_.splits);
  k.div(unit, index, o_.splits);
  BlockRange r = split_range(k, split, per_split_, kblocks_);
  // begin = min(split · per_split, kblocks): a split past K's end is empty.
  if (!splits_all_inside_) k.min(r.begin, r.begin, kblocks_);
  return {tile(unit), r.begin, r.end, std::nullopt, split};
}

WorkCursor TileScheduler::cursor() const {
  if (o_.stream_k)
    throw TileError("tile scheduler of kernel '" + k_->name() + "': a cursor over stream-K pieces; for_each walks them");
  return WorkCursor(*this);
}

WorkCursor::WorkCursor(const TileScheduler& s) : s_(&s) {
  Kernel& k = *s.k_;
  index_ = k.mov(u32, s.first_);
  item_ = {{k.reg(u32), k.reg(u32), k.reg(u32), k.reg(u32)}, k.reg(u32), k.reg(u32), std::nullopt, std::nullopt, {}};
  if (s.o_.splits > 1) item_.split = k.reg(u32);
  load();
}

Pred WorkCursor::valid() const {
  return index_ < s_->items_;
}

void WorkCursor::next() {
  s_->k_->add(index_, index_, s_->step_);
  load();
}

void WorkCursor::load() {
  Kernel& k = *s_->k_;
  k.if_then(valid(), [&] {
    const WorkItem w = s_->item(index_);
    for (auto [to, from] : {std::pair{&item_.tile.m0, &w.tile.m0}, {&item_.tile.n0, &w.tile.n0},
                            {&item_.tile.batch, &w.tile.batch}, {&item_.tile.unit, &w.tile.unit},
                            {&item_.kb0, &w.kb0}, {&item_.kb1, &w.kb1}})
      k.mov(*to, *from);
    if (item_.split) k.mov(*item_.split, *w.split);
  });
}

Pred TileScheduler::has_successor(const WorkItem& w) const {
  return w.tile.unit + step_ < units_;
}

Src TileScheduler::pingpong_skip(const WorkItem*) const {
  return kblocks_;
}

namespace {

// CTA rank `rank`'s tile of `unit`, its k-blocks left empty.
HostTile host_tile(const TileSchedulerOptions& o, std::int64_t units_m, std::int64_t units_n,
                   std::int64_t unit, std::int64_t rank) {
  const std::int64_t per_batch = units_m * units_n, span = units_n * o.group_rows;
  const std::int64_t batch = unit / per_batch, r = unit % per_batch;
  const std::int64_t first = r / span * o.group_rows;
  const std::int64_t rows = std::min<std::int64_t>(units_m - first, o.group_rows);
  const std::int64_t mu = first + r % span % rows, nu = r % span / rows;
  return {(mu * o.cluster_m + rank % o.cluster_m) * o.tile_m,
          (nu * o.cluster_n + rank / o.cluster_m) * o.tile_n, batch, 0, 0};
}

}  // namespace

std::vector<HostTile> host_tile_order(const TileSchedulerOptions& o, std::int64_t m, std::int64_t n,
                                      std::int64_t k, std::int64_t l, std::int64_t ctas,
                                      std::int64_t cta) {
  const std::int64_t cluster = o.cluster_m * o.cluster_n;
  const std::int64_t units_m = ceil_div(ceil_div(m, o.tile_m), o.cluster_m);
  const std::int64_t units_n = ceil_div(ceil_div(n, o.tile_n), o.cluster_n);
  const std::int64_t units = units_m * units_n * l, kblocks = ceil_div(k, o.tile_k);
  std::vector<HostTile> order;
  auto add = [&](std::int64_t unit, std::int64_t kb0, std::int64_t kb1, bool partial) {
    HostTile t = host_tile(o, units_m, units_n, unit, cta % cluster);
    t.kb0 = kb0;
    t.kb1 = kb1;
    t.partial = partial;
    order.push_back(t);
  };
  if (!o.stream_k) {
    const std::int64_t per_split = ceil_div(kblocks, o.splits);
    for (std::int64_t item = cta / cluster; item < units * o.splits; item += ctas / cluster) {
      const std::int64_t split = item % o.splits;
      add(item / o.splits, std::min(split * per_split, kblocks),
          std::min((split + 1) * per_split, kblocks), false);
    }
    return order;
  }
  const std::int64_t waves = units / ctas, rest = units % ctas;
  const std::int64_t dp = units - (rest != 0 && waves != 0 && 2 * rest < ctas ? rest + ctas : rest);
  const std::int64_t iters = (units - dp) * kblocks;
  auto start = [&](std::int64_t c) { return c * (iters / ctas) + c * (iters % ctas) / ctas; };
  for (std::int64_t unit = cta; unit < dp; unit += ctas) add(unit, 0, kblocks, false);
  const std::int64_t begin = start(cta), end = start(cta + 1);
  const std::int64_t last_begin = end > begin ? (end - 1) / kblocks * kblocks : 0;
  const std::int64_t split = std::max(begin, last_begin);
  const bool partial = begin < end && end != last_begin + kblocks;
  if (partial) add(dp + split / kblocks, split - last_begin, end - last_begin, true);
  for (std::int64_t cursor = begin; cursor < (partial ? split : end);
       cursor = cursor / kblocks * kblocks + kblocks)
    add(dp + cursor / kblocks, cursor % kblocks, kblocks, false);
  return order;
}

}  // namespace warpforge::tile
