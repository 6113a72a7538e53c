#include "warpforge/tile/reduction.hpp"

#include <bit>

#include "warpforge/error.hpp"
#include "warpforge/tile/named_barrier.hpp"

namespace warpforge::tile {

using namespace dsl;

namespace {

bool is_float(const Reg& r) {
  return r.type() == Type::f32;
}

std::uint32_t u(int v) {
  return static_cast<std::uint32_t>(v);
}

}  // namespace

Combine add() {
  return Combine(
      [](Kernel& k, const Regs& into, const Regs& other) {
        for (std::size_t i = 0; i < into.size(); ++i) {
          if (is_float(into[i]))
            k.add(into[i], into[i], other[i], {Round::rn});
          else
            k.add(into[i], into[i], other[i]);
        }
      },
      true);
}

Combine max() {
  return Combine(
      [](Kernel& k, const Regs& into, const Regs& other) {
        for (std::size_t i = 0; i < into.size(); ++i) k.max(into[i], into[i], other[i]);
      },
      true);
}

Combine concat(std::vector<std::pair<int, Combine>> parts) {
  bool commutative = true;
  for (const auto& part : parts) commutative = commutative && part.second.commutative;
  auto combine = [parts = std::move(parts)](Kernel& k, const Regs& into, const Regs& other) {
    std::size_t first = 0;
    for (const auto& [count, combine] : parts) {
      const auto end = first + static_cast<std::size_t>(count);
      if (end > into.size())
        throw TileError("tile::concat in kernel '" + k.name() + "': its parts take " + std::to_string(end) +
                        " registers or more, the reduction carries " + std::to_string(into.size()));
      combine(k, Regs(into.begin() + first, into.begin() + end), Regs(other.begin() + first, other.begin() + end));
      first = end;
    }
  };
  return Combine(std::move(combine), commutative);
}

namespace warp {

void allreduce(Kernel& k, const Regs& values, const Combine& combine, int lanes) {
  if (lanes < 1 || lanes > 32 || !std::has_single_bit(static_cast<unsigned>(lanes)))
    throw TileError("warp::allreduce in kernel '" + k.name() + "' over " + std::to_string(lanes) +
                    " lanes: a power of two in 1..32");
  if (lanes == 1) return;
  const Reg lane = combine.commutative ? Reg{} : k.sreg(SReg::laneid);
  for (int mask = 1; mask < lanes; mask <<= 1) {
    Regs others;
    for (const Reg& v : values) {
      others.push_back(k.reg(v.type()));
      k.shfl_sync(Shfl::bfly, others.back(), v, u(mask), 0x1fu);
    }
    if (combine.commutative) {
      combine(k, values, others);  // both partners compute the same bits in either order
      continue;
    }
    Pred upper = (lane & u(mask)) != 0u;
    Regs lower_first, upper_first;
    for (std::size_t i = 0; i < values.size(); ++i) {
      lower_first.push_back(k.selp(others[i], values[i], upper));
      upper_first.push_back(k.selp(values[i], others[i], upper));
    }
    combine(k, lower_first, upper_first);
    for (std::size_t i = 0; i < values.size(); ++i) k.mov(values[i], lower_first[i]);
  }
}

Reg redux(Kernel& k, Redux op, const Reg& value) {
  Reg d = k.reg(value.type());
  k.redux_sync(op, d, value);
  return d;
}

}  // namespace warp

GroupReduction::GroupReduction(Kernel& k, GroupShape shape, int values, const std::string& name)
    : k_(&k), shape_(shape), values_(values) {
  auto power_of_two = [](int v, int most) { return v >= 1 && v <= most && std::has_single_bit(u(v)); };
  std::string why;
  if (!power_of_two(shape.warps, 32)) why += " warps " + std::to_string(shape.warps) + " (a power of two, 1..32);";
  if (!power_of_two(shape.ctas, 8)) why += " ctas " + std::to_string(shape.ctas) + " (a power of two, 1..8);";
  if (shape.groups < 1 || shape.groups * shape.warps > 32)
    why += " groups " + std::to_string(shape.groups) + " of " + std::to_string(shape.warps) +
           " warps (a CTA has at most 32 warps);";
  if (shape.ctas > 1 && shape.groups != 1)
    why += " groups " + std::to_string(shape.groups) + " across a cluster (a group spanning CTAs fills each);";
  if (shape.warps > 1 && shape.groups > 15)
    why += " groups " + std::to_string(shape.groups) + " of several warps (named barriers 1..15, one a group);";
  if (values < 1) why += " values " + std::to_string(values) + " (at least one);";
  if (!why.empty())
    throw TileError("GroupReduction '" + name + "' in kernel '" + k.name() + "':" + why.substr(0, why.size() - 1));

  lane_ = k.sreg(SReg::laneid);
  Reg warp = k.sreg(SReg::tid_x) >> 5u;
  warp_in_group_ = warp & u(shape.warps - 1);
  group_ = warp >> u(std::countr_zero(u(shape.warps)));
  if (shape.warps > 1) parity_ = k.mov(Type::u32, 0u);
  if (shape.ctas > 1) cluster_parity_ = k.mov(Type::u32, 0u);
  if (shape.warps > 1)
    warps_buffer_ = k.shared(name, 2LL * shape.groups * shape.warps * values * 4, 16);
  if (shape.ctas > 1) ctas_buffer_ = k.shared(name + "_cluster", 2LL * shape.ctas * values * 4, 16);
}

std::int64_t GroupReduction::shared_bytes() const {
  return warps_buffer_.bytes + ctas_buffer_.bytes;
}

void GroupReduction::allreduce(const Regs& values, const Combine& combine) {
  allreduce_in_cta(values, combine);
  allreduce_across_ctas(values, combine);
}

void GroupReduction::allreduce_in_cta(const Regs& values, const Combine& combine) {
  check_count(values);
  warp::allreduce(*k_, values, combine);
  if (shape_.warps == 1) return;
  across_warps(values, combine);
  parity_ ^= 1u;
}

void GroupReduction::allreduce_across_ctas(const Regs& values, const Combine& combine) {
  check_count(values);
  if (shape_.ctas == 1) return;
  across_ctas(values, combine, cluster_parity_);
  cluster_parity_ ^= 1u;
}

void GroupReduction::check_count(const Regs& values) const {
  if (static_cast<int>(values.size()) > values_)
    throw TileError("GroupReduction in kernel '" + k_->name() + "': " + std::to_string(values.size()) +
                    " values in one call; it was declared for up to " + std::to_string(values_));
}

void GroupReduction::across_warps(const Regs& values, const Combine& combine) {
  Kernel& k = *k_;
  const std::int64_t entry = 4LL * values_;  // one warp's partial result
  const std::int64_t buffer = entry * shape_.warps * shape_.groups;
  Reg base = k.address_of(warps_buffer_) + parity_ * buffer +
             group_ * entry * shape_.warps;
  Reg mine = base + warp_in_group_ * entry;
  k.guarded(lane_ == 0u, [&] {
    for (std::size_t i = 0; i < values.size(); ++i)
      k.st(Space::shared, values[i].type(), at(mine, static_cast<std::int64_t>(4 * i)), values[i]);
  });
  // Barrier 1 + the group's index: the group's warps alone.
  const Src id = shape_.groups == 1 ? Src(1) : Src(group_ + 1u);
  NamedBarrier(k, id, 32 * shape_.warps).sync();
  // Lane l reads warp l % warps's result: every aligned group of `warps`
  // lanes then holds all of them, in warp order.
  Reg from = base + (lane_ & u(shape_.warps - 1)) * entry;
  for (std::size_t i = 0; i < values.size(); ++i)
    k.ld(Space::shared, values[i].type(), values[i], at(from, static_cast<std::int64_t>(4 * i)));
  warp::allreduce(k, values, combine, shape_.warps);
}

void GroupReduction::across_ctas(const Regs& values, const Combine& combine, const Reg& parity) {
  Kernel& k = *k_;
  const std::int64_t entry = 4LL * values_;  // one CTA's partial result
  Reg base = k.address_of(ctas_buffer_) + parity * entry * shape_.ctas;
  Reg rank = k.sreg(SReg::cluster_ctarank);
  Reg mine = base + rank * entry;
  // Thread t < ctas stores this CTA's result into CTA t's buffer, at this CTA's entry.
  Reg tid = k.sreg(SReg::tid_x);
  k.guarded(tid < u(shape_.ctas), [&] {
    Reg remote = k.reg(Type::u32);
    k.mapa_shared(remote, mine, tid);
    for (std::size_t i = 0; i < values.size(); ++i)
      k.st(Space::shared, values[i].type(), at(remote, static_cast<std::int64_t>(4 * i)), values[i],
           {.cluster = true});
  });
  k.barrier_cluster_arrive();  // release: the stores reach their CTAs
  k.barrier_cluster_wait();    // acquire: every CTA's entry is here
  Reg from = base + (lane_ & u(shape_.ctas - 1)) * entry;
  for (std::size_t i = 0; i < values.size(); ++i)
    k.ld(Space::shared, values[i].type(), values[i], at(from, static_cast<std::int64_t>(4 * i)));
  warp::allreduce(k, values, combine, shape_.ctas);
}

}  // namespace warpforge::tile
