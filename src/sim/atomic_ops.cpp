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

// Float atomic add on an H100 (a the old value). In global memory, f32
// follows PTX ISA 9.7.13.5 ("atom.add.f32 rounds to nearest even and
// flushes subnormal inputs and results to sign-preserving zero") and a NaN
// sum is the canonical 0x7FFFFFFF (0x7fc00000 + 1.0 gives 0x7fffffff;
// 0x807fffff + 0x002c212c gives +0); f64 does not flush, and a NaN operand
// is the result as it is, not quieted: b's when b is a NaN, else the old
// value's (old 0xfff8000000000000 + b 0x7ffe5827f52832b1 gives b). In
// shared memory neither flushes: f32 gives the canonical NaN, f64 the old
// value's NaN (else b's) quieted (old 0x7ffcadafac714563 + b
// 0x7ff13672eeceecaf gives the old value; old 0x7ff5d592f8a4fb05 + b
// -0.39 gives 0x7ffdd592f8a4fb05). Evidence: every recorded atom/red
// add.f32/f64 case (tests/gpu_truth/atomics.truth).
std::uint64_t float_add(Type t, bool shared, std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kQuietF64 = 1ull << 51;
  switch (t) {
    case Type::f32: {
      const auto flush = [&](std::uint64_t v) {
        const auto bits = static_cast<std::uint32_t>(v);
        return shared ? bits : flush_subnormal(bits, kF32);
      };
      const float sum = f32_of(flush(a)) + f32_of(flush(b));
      if (std::isnan(sum)) return kF32.nan_bits;
      return flush(bits_of(sum));
    }
    case Type::f64:
      if (shared) {
        if (std::isnan(f64_of(a))) return a | kQuietF64;
        if (std::isnan(f64_of(b))) return b | kQuietF64;
      } else {
        if (std::isnan(f64_of(b))) return b;
        if (std::isnan(f64_of(a))) return a;
      }
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

std::uint64_t update(AtomOp op, Type t, bool shared, std::uint64_t old, std::uint64_t b,
                     std::uint64_t c) {
  const int bits = ptx::bits(t);
  const std::uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  switch (op) {
    case AtomOp::add:
      return ptx::is_float(t) ? float_add(t, shared, old, b) : old + b;
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
std::uint64_t atomic_update(std::byte* p, AtomOp op, Type t, bool shared, std::uint64_t b,
                            std::uint64_t c) {
  std::atomic_ref<T> ref(*reinterpret_cast<T*>(p));
  T old = ref.load();
  while (!ref.compare_exchange_weak(old, static_cast<T>(update(op, t, shared, old, b, c)))) {
  }
  return old;
}

}  // namespace

void atomic_add_f32_global(std::byte* element, std::uint32_t value) {
  atomic_update<std::uint32_t>(element, AtomOp::add, Type::f32, false, value, 0);
}

void exec_atomic(const Inst& in, Warp& w, std::uint32_t active) {
  const Type t = in.type();
  const auto op = static_cast<AtomOp>(in.mode);
  const auto size = static_cast<std::uint32_t>(ptx::bits(t) / 8);
  const bool has_dst = in.op == Op::atom;
  const std::size_t first = has_dst ? 1 : 0;  // index of the address operand
  if (in.ops.size() < first + 2) throw SimError("atom/red needs an address and an operand");
  if (size != 2 && size != 4 && size != 8)
    throw SimError("atomics are simulated on 16, 32 and 64-bit types");
  // A vector red (.v2/.v4, global f32 add: decode_checks) updates its
  // elements one by one, each atomically: PTX ISA 9.7.13.8 makes the
  // vector's elements separate atomic operations.
  const std::uint32_t n = has_dst ? 1 : in.vec;
  for_lanes(active, [&](int l) {
    const std::uint64_t address = address_of(w, in.op0(first), l);
    std::byte* p = access(w, l, in.space, address, size * n, size * n, true);
    const bool shared = in.space == Space::shared ||
                        (in.space == Space::generic && address - kSharedWindow < kWindowSize);
    const std::uint64_t c = in.ops.size() > first + 2 ? read(w, in.op0(first + 2), l) : 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t b = read(w, in.ops[first + 1][i], l);
      std::byte* e = p + i * size;
      std::uint64_t old;
      if (size == 2)
        old = atomic_update<std::uint16_t>(e, op, t, shared, b, c);
      else if (size == 4)
        old = atomic_update<std::uint32_t>(e, op, t, shared, b, c);
      else
        old = atomic_update<std::uint64_t>(e, op, t, shared, b, c);
      if (has_dst) write(w, in.op0(0), l, old);
    }
  });
}

}  // namespace warpforge::sim
