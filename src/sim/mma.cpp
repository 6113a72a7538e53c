// mma.sync.aligned.{m16n8k8,m16n8k16}.row.col with f16/bf16 inputs and f32
// (or f16) accumulators, and m16n8k32 with e4m3/e5m2 inputs, written from the
// PTX ISA fragment tables (9.7.14.5.7 "Matrix Fragments for mma.m16n8k8",
// 9.7.14.5.8 "... mma.m16n8k16 with floating point type", 9.7.14.5.9
// "... mma.m16n8k32"). With groupID g = lane / 4 and threadID_in_group
// t = lane % 4, element slot s of a lane's fragment is:
//   A f16/bf16: row g + 8·((s/2)%2),  col 2t + s%2 + 8·(s/4)       (s < 4 for k8)
//   B f16/bf16: row 2t + s%2 + 8·(s/2), col g                      (s < 2 for k8)
//   A fp8 k32:  row g + 8·((s/4)%2),  col 4t + s%4 + 16·(s/8)
//   B fp8 k32:  row 4t + s%4 + 16·(s/4), col g
//   C/D:        row g + 8·(s/2),      col 2t + s%2
// 16-bit elements pack two to a register (slot 2r in the low half), 8-bit
// elements four (slot 4r in the low byte), f32 one.
#include <algorithm>
#include <array>

#include "execute.hpp"
#include "float_format.hpp"
#include "tensor_core_sum.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

struct Element {
  int row, col;
};

Element a_element(MmaShape shape, int lane, int s) {
  const int g = lane / 4, t = lane % 4;
  if (shape == MmaShape::m16n8k32) return {g + 8 * ((s / 4) % 2), 4 * t + s % 4 + 16 * (s / 8)};
  return {g + 8 * ((s / 2) % 2), 2 * t + s % 2 + 8 * (s / 4)};
}

Element b_element(MmaShape shape, int lane, int s) {  // {k, n}
  const int g = lane / 4, t = lane % 4;
  if (shape == MmaShape::m16n8k32) return {4 * t + s % 4 + 16 * (s / 4), g};
  return {2 * t + s % 2 + 8 * (s / 2), g};
}

// Where m16n8k32's product k is stored (for A's and B's alike, so the
// products pair as before): in the order an H100 adds them, the 16 with
// k % 4 < 2 first, then the 16 others (see exec_mma).
int k32_position(int k) {
  return (k % 4 < 2 ? 0 : 16) + 2 * (k / 4) + k % 2;
}

Element c_element(int lane, int s) {
  const int g = lane / 4, t = lane % 4;
  return {g + 8 * (s / 2), 2 * t + s % 2};
}

constexpr int kMaxK = 32;

// Where each lane's fragment slots land, worked out once per shape: A by
// rows (row·kMaxK + k), B by columns (n·kMaxK + k), C and D by rows
// (row·8 + col), slot s of lane l at [l·slots + s].
struct FragmentMap {
  std::array<std::uint16_t, 32 * 16> a;
  std::array<std::uint16_t, 32 * 8> b;
  std::array<std::uint16_t, 32 * 4> c;
};

FragmentMap fragment_map(MmaShape shape) {
  const int k_dim = shape == MmaShape::m16n8k8 ? 8 : shape == MmaShape::m16n8k16 ? 16 : 32;
  const int a_slots = 16 * k_dim / 32, b_slots = 8 * k_dim / 32;
  FragmentMap map{};
  for (int lane = 0; lane < 32; ++lane) {
    const auto k_position = [&](int k) { return k_dim == 32 ? k32_position(k) : k; };
    for (int s = 0; s < a_slots; ++s) {
      const Element e = a_element(shape, lane, s);
      map.a[static_cast<std::size_t>(lane * a_slots + s)] =
          static_cast<std::uint16_t>(e.row * kMaxK + k_position(e.col));
    }
    for (int s = 0; s < b_slots; ++s) {
      const Element e = b_element(shape, lane, s);
      map.b[static_cast<std::size_t>(lane * b_slots + s)] =
          static_cast<std::uint16_t>(e.col * kMaxK + k_position(e.row));
    }
    for (int s = 0; s < 4; ++s) {
      const Element e = c_element(lane, s);
      map.c[static_cast<std::size_t>(lane * 4 + s)] = static_cast<std::uint16_t>(e.row * 8 + e.col);
    }
  }
  return map;
}

const FragmentMap& fragment_map_of(MmaShape shape) {
  static const std::array<FragmentMap, 3> maps = {fragment_map(MmaShape::m16n8k8),
                                                  fragment_map(MmaShape::m16n8k16),
                                                  fragment_map(MmaShape::m16n8k32)};
  return maps[static_cast<std::size_t>(shape)];
}

// Decoded values of every bit pattern of a 16- or 8-bit format, built once.
template <std::size_t N>
std::array<float, N> value_table(const FloatFormat& f) {
  std::array<float, N> table{};
  for (std::size_t i = 0; i < N; ++i)
    table[i] = static_cast<float>(decode_float(static_cast<std::uint32_t>(i), f));
  return table;
}

// The values of one element type's bit patterns: f32 and bf16 (the top half
// of an f32) by reinterpreting, the others from a table built once.
struct ElementDecoder {
  const float* table;  // nullptr for f32 and bf16
  int shift;           // bf16: 16

  double operator()(std::uint32_t bits) const {
    return table != nullptr ? table[bits] : f32_of(bits << shift);
  }
};

ElementDecoder element_decoder(Type t) {
  switch (t) {
    case Type::f32:
      return {nullptr, 0};
    case Type::bf16:
      return {nullptr, 16};
    case Type::f16: {
      static const auto table = value_table<65536>(kF16);
      return {table.data(), 0};
    }
    case Type::e4m3: {
      static const auto table = value_table<256>(kE4M3);
      return {table.data(), 0};
    }
    case Type::e5m2: {
      static const auto table = value_table<256>(kE5M2);
      return {table.data(), 0};
    }
    default:
      throw SimError(std::string("matrix element type ") + std::string(ptx::name(t)) +
                     " has no decoder (accepted: f32, bf16, f16, e4m3, e5m2)");
  }
}

}  // namespace

double matrix_element_value(Type t, std::uint32_t bits) {
  if (t == Type::f32 || t == Type::bf16 || t == Type::f16 || t == Type::e4m3 || t == Type::e5m2)
    return element_decoder(t)(bits);
  return decode_float(bits, float_format(t));
}

namespace {

// The values of a fragment: `slots` elements of type t per lane, packed into
// the registers `regs` (slot 0 in the lowest bits of the first register),
// stored at out[map[lane·slots + s]].
void unpack(Warp& w, const std::vector<Arg>& regs, Type t, int slots, const std::uint16_t* map,
            double* out) {
  const ElementDecoder decode = element_decoder(t);
  const int bits = ptx::bits(t), per_reg = 32 / bits;
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (int lane = 0; lane < 32; ++lane) {
    const std::uint16_t* slot = map + lane * slots;
    for (int r = 0; r * per_reg < slots; ++r) {
      const auto v = static_cast<std::uint32_t>(read(w, regs[static_cast<std::size_t>(r)], lane));
      for (int i = 0; i < per_reg; ++i) out[*slot++] = decode((v >> (bits * i)) & mask);
    }
  }
}

}  // namespace

void exec_mma(const Inst& in, Warp& w) {
  const auto shape = static_cast<MmaShape>(in.mode);
  const Type dt = in.types[0], at = in.types[1], bt = in.types[2], ct = in.types[3];
  const int k_dim = shape == MmaShape::m16n8k8 ? 8 : shape == MmaShape::m16n8k16 ? 16 : 32;
  const FragmentMap& map = fragment_map_of(shape);

  // A by rows and B by columns, each contiguous in k; every element is
  // written by exactly one lane's slot, so nothing needs clearing first.
  std::array<double, 16 * kMaxK> a;
  std::array<double, 8 * kMaxK> b;
  std::array<double, 16 * 8> c;
  unpack(w, in.ops[1], at, 16 * k_dim / 32, map.a.data(), a.data());
  unpack(w, in.ops[2], bt, 8 * k_dim / 32, map.b.data(), b.data());
  unpack(w, in.ops[3], ct, 4, map.c.data(), c.data());
  // Into f32 accumulators, the H100's sums (tensor_core_sum.hpp). f16/bf16
  // inputs: all K products and C in one step. e4m3/e5m2 inputs (m16n8k32):
  // the products in two steps of 16 by the f16 rule, from zero, in the order
  // k32_position stores them (k % 4 < 2, then the others), and C added to
  // their sum afterwards by an f32 addition rounded to nearest, as if the 32
  // products were two f16 m16n8k16 multiplies of zero accumulators (8-bit
  // floats are exact in f16) followed by an add. Evidence: every finite
  // recorded result of the four e4m3/e5m2 units (16,034 of 16,384 cases; the
  // others have an infinity or a NaN), found by the search docs/SIMULATOR.md
  // describes. f16 inputs into f16 accumulators: the f32 form's alignment,
  // the sum not cut, then rounded to f16 (kHopperHalfToHalfSum). FP8 inputs
  // into f16 accumulators (which ptxas refuses before PTX ISA 8.7, so no
  // recording shows them): the products, exact in double, summed in double
  // and rounded once to f16.
  const bool fp8 = at == Type::e4m3 || at == Type::e5m2;
  const bool hopper_sum = !fp8 || dt == Type::f32;
  const TensorCoreSum& form = dt == Type::f32 ? kHopperHalfSum : kHopperHalfToHalfSum;
  const TensorCoreSum rule{fp8 ? 16 : k_dim, form.aligned_bits, form.result_bits};
  std::array<int, 16 * kMaxK> a_exp;
  std::array<int, 8 * kMaxK> b_exp;
  std::array<Factors, 16> rows;
  std::array<Factors, 8> cols;
  if (hopper_sum) {
    const int a_min = element_min_exponent(at), b_min = element_min_exponent(bt);
    for (int m = 0; m < 16; ++m)
      rows[m] = {&a[m * kMaxK], &a_exp[m * kMaxK],
                 exponents(&a[m * kMaxK], k_dim, a_min, &a_exp[m * kMaxK])};
    for (int n = 0; n < 8; ++n)
      cols[n] = {&b[n * kMaxK], &b_exp[n * kMaxK],
                 exponents(&b[n * kMaxK], k_dim, b_min, &b_exp[n * kMaxK])};
  }
  std::array<double, 16 * 8> d;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double& out = d[m * 8 + n];
      if (hopper_sum && fp8) {
        out = static_cast<float>(c[m * 8 + n]) +
              static_cast<float>(tensor_core_sum(0.0, rows[m], cols[n], k_dim, rule));
        continue;
      }
      if (hopper_sum) {
        out = tensor_core_sum(c[m * 8 + n], rows[m], cols[n], k_dim, rule);
        continue;
      }
      out = c[m * 8 + n];
      for (int k = 0; k < k_dim; ++k) out += a[m * kMaxK + k] * b[n * kMaxK + k];
    }
  const auto& dst = in.ops[0];
  const bool f32 = dt == Type::f32;
  const std::size_t nregs = std::min<std::size_t>(dst.size(), f32 ? 4 : 2);
  for (int lane = 0; lane < 32; ++lane) {
    const std::uint16_t* slot = &map.c[static_cast<std::size_t>(lane * 4)];
    std::array<std::uint64_t, 4> regs{};
    for (int s = 0; s < 4; ++s) {
      const double v = d[slot[s]];
      if (f32)
        regs[static_cast<std::size_t>(s)] = accumulator_bits(v);
      else
        regs[static_cast<std::size_t>(s / 2)] |= encode_float(v, kF16, Rounding::rn, false)
                                                 << (16 * (s % 2));
    }
    for (std::size_t r = 0; r < nregs; ++r) write(w, dst[r], lane, regs[r]);
  }
}

}  // namespace warpforge::sim
