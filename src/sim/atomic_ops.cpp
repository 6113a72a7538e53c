// atom and red (PTX ISA 9.7.13.5-6). Every update is a compare-and-swap loop
// on std::atomic_ref, so atomics stay atomic while CTAs run on several host
// threads.
#include <atomic>
#include <cmath>

#include "execute.hpp"
#include "float_format.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

std::int64_t as_signed(std::uint64_t v, int bits) {
  const std::uint64_t sb = 1ull << (bits - 1);
  const std::uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  return static_cast<std::int64_t>(((v & m) ^ sb) - sb);
}

std::uint64_t float_add(Type t, std::uint64_t a, std::uint64_t b) {
  switch (t) {
    case Type::f32:
      return bits_of(f32_of(a) + f32_of(b));
    case Type::f64:
      return bits_of(f64_of(a) + f64_of(b));
    case Type::f16:
    case Type::bf16: {
      const FloatFormat& f = float_format(t);
      return encode_float(decode_float(static_cast<std::uint32_t>(a), f) +
                              decode_float(static_cast<std::uint32_t>(b), f),
                          f, Rounding::rn, false);
    }
    default:
      throw SimError("atomic add of ." + std::string(ptx::name(t)) + " is not simulated");
  }
}

std::uint64_t update(AtomOp op, Type t, std::uint64_t old, std::uint64_t b, std::uint64_t c) {
  const int bits = ptx::bits(t);
  const std::uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  switch (op) {
    case AtomOp::add:
      return ptx::is_float(t) ? float_add(t, old, b) : old + b;
    case AtomOp::min:
      if (ptx::is_signed(t)) return as_signed(old, bits) < as_signed(b, bits) ? old : b;
      return (old & m) < (b & m) ? old : b;
    case AtomOp::max:
      if (ptx::is_signed(t)) return as_signed(old, bits) > as_signed(b, bits) ? old : b;
      return (old & m) > (b & m) ? old : b;
    case AtomOp::exch:
      return b;
    case AtomOp::cas:
      return (old & m) == (b & m) ? c : old;
    case AtomOp::and_:
      return old & b;
    case AtomOp::or_:
      return old | b;
    case AtomOp::xor_:
      return old ^ b;
    case AtomOp::inc:
      return (old & m) >= (b & m) ? 0 : old + 1;  // PTX ISA 9.7.13.5
    case AtomOp::dec:
      return (old & m) == 0 || (old & m) > (b & m) ? b : old - 1;
  }
  return old;
}

template <class T>
std::uint64_t atomic_update(std::byte* p, AtomOp op, Type t, std::uint64_t b, std::uint64_t c) {
  std::atomic_ref<T> ref(*reinterpret_cast<T*>(p));
  T old = ref.load();
  while (!ref.compare_exchange_weak(old, static_cast<T>(update(op, t, old, b, c)))) {
  }
  return old;
}

}  // namespace

void exec_atomic(const Inst& in, Warp& w, std::uint32_t active) {
  const Type t = in.type();
  const auto op = static_cast<AtomOp>(in.mode);
  const auto size = static_cast<std::uint32_t>(ptx::bits(t) / 8);
  const bool has_dst = in.op == Op::atom;
  const std::size_t first = has_dst ? 1 : 0;  // index of the address operand
  if (in.ops.size() < first + 2) throw SimError("atom/red needs an address and an operand");
  if (size != 2 && size != 4 && size != 8)
    throw SimError("atomics are simulated on 16, 32 and 64-bit types");
  for_lanes(active, [&](int l) {
    std::byte* p = access(w, l, in.space, address_of(w, in.op0(first), l), size, size, true);
    const std::uint64_t b = read(w, in.op0(first + 1), l);
    const std::uint64_t c = in.ops.size() > first + 2 ? read(w, in.op0(first + 2), l) : 0;
    std::uint64_t old;
    if (size == 2)
      old = atomic_update<std::uint16_t>(p, op, t, b, c);
    else if (size == 4)
      old = atomic_update<std::uint32_t>(p, op, t, b, c);
    else
      old = atomic_update<std::uint64_t>(p, op, t, b, c);
    if (has_dst) write(w, in.op0(0), l, old);
  });
}

}  // namespace warpforge::sim
