// ld, st (PTX ISA 9.7.9.8-9), cvta (9.7.9.17), mapa (9.7.9.19), and the
// copies of call arguments and return values between frames.
#include <array>
#include <cstring>

#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

std::uint32_t element_bytes(Type t) {
  return static_cast<std::uint32_t>((ptx::bits(t) + 7) / 8);
}

// Narrow signed loads sign-extend into their (at least 32-bit) register;
// into a 64-bit register (`widen`), to 64 bits.
std::uint64_t extend_loaded(Type t, std::uint64_t v, bool widen) {
  if (widen) {
    const int shift = 64 - ptx::bits(t);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v << shift) >> shift);
  }
  if (t == Type::s8)
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(v)));
  if (t == Type::s16)
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int16_t>(v)));
  return v;
}

void cvta(const Inst& in, Warp& w, std::uint32_t active) {
  std::uint64_t window = 0;
  if (in.space == Space::shared) window = kSharedWindow;
  if (in.space == Space::local) window = kLocalWindow;
  if (in.space == Space::param) window = kParamWindow;
  for_lanes(active, [&](int l) {
    const std::uint64_t a = read(w, in.op0(1), l);
    std::uint64_t d = in.to ? a - window : a + window;  // cvta.to.space: generic -> space
    if (ptx::bits(in.type()) == 32) d &= 0xFFFFFFFFu;
    write(w, in.op0(0), l, d);
  });
}

// mapa.shared::cluster d, a, rank: the address of a's offset in CTA `rank`
// of the cluster; mapa (generic) does the same for a generic address of
// shared memory.
void mapa(const Inst& in, Warp& w, std::uint32_t active) {
  const bool generic = in.space == Space::generic;
  const std::uint32_t size = static_cast<std::uint32_t>(w.cta->cluster->ctas.size());
  for_lanes(active, [&](int l) {
    std::uint64_t a = read(w, in.op0(1), l);
    const auto rank = static_cast<std::uint32_t>(read(w, in.op0(2), l));
    if (generic) {
      if (a - kSharedWindow >= kWindowSize)
        throw AccessFault{l, "mapa of generic address " + hex(a) + ", which is not in shared memory"};
      a -= kSharedWindow;
    }
    if (rank >= size)
      throw AccessFault{l, "mapa to CTA rank " + std::to_string(rank) + "; the cluster has " + std::to_string(size) +
                               " CTA" + (size == 1 ? "" : "s") + " (ranks 0.." + std::to_string(size - 1) + ")"};
    std::uint64_t d = cluster_shared_address(rank, a);
    if (generic) d += kSharedWindow;
    if (ptx::bits(in.type()) == 32) d &= 0xFFFFFFFFu;
    write(w, in.op0(0), l, d);
  });
}

}  // namespace

void exec_frame_copy(const Inst& in, Warp& w, std::uint32_t active) {
  const auto size = static_cast<std::uint32_t>(in.op0(2).bits);
  for_lanes(active, [&](int l) {
    const std::byte* from = access(w, l, Space::local, in.op0(1).bits, size, 1, false);
    std::memmove(access(w, l, Space::local, in.op0(0).bits, size, 1, true), from, size);
  });
}

void exec_memory(const Inst& in, Warp& w, std::uint32_t active) {
  if (in.op == Op::cvta) return cvta(in, w, active);
  if (in.op == Op::mapa) return mapa(in, w, active);
  const std::uint32_t size = element_bytes(in.type());
  const std::uint32_t n = in.vec;
  if (in.op == Op::ld) {
    const auto& dst = in.ops[0];
    for_lanes(active, [&](int l) {
      const std::byte* p =
          access(w, l, in.space, address_of(w, in.op0(1), l), size * n, size * n, false);
      note_shared_access(w, l, p, size * n, false);
      for (std::uint32_t i = 0; i < n; ++i)
        write(w, dst[i], l, extend_loaded(in.type(), load_bytes(p + i * size, size), in.widen));
    });
    return;
  }
  const auto& src = in.ops[1];
  for_lanes(active, [&](int l) {
    std::byte* p = access(w, l, in.space, address_of(w, in.op0(0), l), size * n, size * n, true);
    if (w.cta->races) {  // with the bytes stored: warps storing the same bytes do not race
      std::array<std::byte, 32> data{};
      for (std::uint32_t i = 0; i < n; ++i) store_bytes(data.data() + i * size, size, read(w, src[i], l));
      note_shared_access(w, l, p, size * n, true, data.data());
    }
    for (std::uint32_t i = 0; i < n; ++i) store_bytes(p + i * size, size, read(w, src[i], l));
  });
}

}  // namespace warpforge::sim
