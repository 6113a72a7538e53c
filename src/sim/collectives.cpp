// Warp collectives that exchange register values: shfl.sync (PTX ISA
// 9.7.9.6), vote.sync (9.7.13.9), redux.sync (9.7.13.11), elect.sync
// (9.7.13.12) and activemask (9.7.13.10). The scheduler calls these once all
// lanes of the member mask have arrived; `active` holds the arrived lanes.
#include <algorithm>
#include <array>
#include <bit>

#include "execute.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

void shfl(const Inst& in, Warp& w, std::uint32_t active) {
  std::array<std::uint64_t, 32> source{};
  for_lanes(active, [&](int l) { source[l] = read(w, in.op0(1), l); });
  const auto mode = static_cast<ShflMode>(in.mode);
  const auto& dst = in.ops[0];
  for_lanes(active, [&](int lane) {
    const auto b = static_cast<std::uint32_t>(read(w, in.op0(2), lane));
    const auto c = static_cast<std::uint32_t>(read(w, in.op0(3), lane));
    // c packs the clamp value (bits 4:0) and the segment mask (bits 12:8).
    const std::uint32_t seg_mask = (c >> 8) & 0x1F, clamp = c & 0x1F;
    const std::uint32_t max_lane =
        (static_cast<std::uint32_t>(lane) & seg_mask) | (clamp & ~seg_mask);
    const std::uint32_t min_lane = static_cast<std::uint32_t>(lane) & seg_mask;
    std::int64_t j = lane;
    bool valid;
    switch (mode) {
      case ShflMode::up:
        j = lane - static_cast<std::int64_t>(b & 0x1F);
        valid = j >= static_cast<std::int64_t>(max_lane);
        break;
      case ShflMode::down:
        j = lane + static_cast<std::int64_t>(b & 0x1F);
        valid = j <= static_cast<std::int64_t>(max_lane);
        break;
      case ShflMode::bfly:
        j = lane ^ static_cast<std::int64_t>(b & 0x1F);
        valid = j <= static_cast<std::int64_t>(max_lane);
        break;
      case ShflMode::idx:
      default:
        j = min_lane | ((b & 0x1F) & ~seg_mask);
        valid = j <= static_cast<std::int64_t>(max_lane);
        break;
    }
    if (!valid) j = lane;
    // Reading from a lane outside the arrived set is undefined in PTX; the
    // simulator refuses it rather than invent a value.
    if (!((active >> j) & 1))
      throw SimError("shfl.sync in lane " + std::to_string(lane) + " reads lane " +
                     std::to_string(j) + ", which is not taking part");
    write(w, dst[0], lane, source[static_cast<std::size_t>(j)]);
    if (dst.size() > 1) write(w, dst[1], lane, valid ? 1 : 0);
  });
}

void vote(const Inst& in, Warp& w, std::uint32_t active) {
  std::uint32_t ballot = 0;
  for_lanes(active, [&](int l) { ballot |= (read(w, in.op0(1), l) != 0 ? 1u : 0u) << l; });
  std::uint64_t v = 0;
  switch (static_cast<VoteMode>(in.mode)) {
    case VoteMode::all:
      v = ballot == active;
      break;
    case VoteMode::any:
      v = ballot != 0;
      break;
    case VoteMode::uni:
      v = ballot == 0 || ballot == active;
      break;
    case VoteMode::ballot:
      v = ballot;
      break;
  }
  for_lanes(active, [&](int l) { write(w, in.op0(0), l, v); });
}

void redux(const Inst& in, Warp& w, std::uint32_t active) {
  const bool is_signed = ptx::is_signed(in.type());
  const auto op = static_cast<AtomOp>(in.mode);
  bool first = true;
  std::uint32_t acc = 0;
  for_lanes(active, [&](int l) {
    const auto v = static_cast<std::uint32_t>(read(w, in.op0(1), l));
    if (first) {
      acc = v;
      first = false;
      return;
    }
    switch (op) {
      case AtomOp::add:
        acc += v;
        break;
      case AtomOp::min:
        acc = is_signed ? static_cast<std::uint32_t>(std::min(static_cast<std::int32_t>(acc),
                                                              static_cast<std::int32_t>(v)))
                        : std::min(acc, v);
        break;
      case AtomOp::max:
        acc = is_signed ? static_cast<std::uint32_t>(std::max(static_cast<std::int32_t>(acc),
                                                              static_cast<std::int32_t>(v)))
                        : std::max(acc, v);
        break;
      case AtomOp::and_:
        acc &= v;
        break;
      case AtomOp::or_:
        acc |= v;
        break;
      case AtomOp::xor_:
        acc ^= v;
        break;
      default:
        throw SimError("redux.sync supports add, min, max, and, or, xor");
    }
  });
  for_lanes(active, [&](int l) { write(w, in.op0(0), l, acc); });
}

}  // namespace

std::uint32_t collective_members(const Inst& in, Warp& w, int first_lane) {
  auto mask = [&](std::size_t i) {
    return static_cast<std::uint32_t>(read(w, in.op0(i), first_lane));
  };
  switch (in.op) {
    case Op::shfl:
      return mask(4);
    case Op::vote:
    case Op::redux:
      return mask(2);
    case Op::elect:
      return mask(1);
    case Op::bar_warp_sync:
      return mask(0);
    default:
      return 0xFFFFFFFFu;  // .aligned matrix instructions: the whole warp
  }
}

void exec_collective(const Inst& in, Warp& w, std::uint32_t active) {
  switch (in.op) {
    case Op::shfl:
      return shfl(in, w, active);
    case Op::vote:
    case Op::redux: {
      // Lanes that arrive together may name different member masks: a
      // cooperative-groups tile of 16 votes within its half of the warp
      // (PTX ISA 9.7.13.9: the result is over the lanes of membermask). Each
      // group of lanes runs the instruction over its own mask.
      for (std::uint32_t rest = active; rest;) {
        const std::uint32_t group = (collective_members(in, w, std::countr_zero(rest)) & active) |
                                    (1u << std::countr_zero(rest));
        (in.op == Op::vote ? vote : redux)(in, w, group);
        rest &= ~group;
      }
      return;
    }
    case Op::elect: {  // elect.sync d|p, membermask: the lowest member is the leader
      const std::uint32_t members = collective_members(in, w, std::countr_zero(active)) & active;
      const int leader = std::countr_zero(members);
      const auto& dst = in.ops[0];
      for_lanes(active, [&](int l) {
        write(w, dst[0], l, static_cast<std::uint64_t>(leader));
        if (dst.size() > 1) write(w, dst[1], l, l == leader ? 1 : 0);
      });
      return;
    }
    case Op::activemask:
      for_lanes(active, [&](int l) { write(w, in.op0(0), l, active); });
      return;
    default:
      throw SimError("not a warp collective");
  }
}

}  // namespace warpforge::sim
