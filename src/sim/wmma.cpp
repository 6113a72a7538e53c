// wmma.load.{a,b,c}, wmma.mma and wmma.store.d (PTX ISA 9.7.14.4) in the
// floating-point shapes: f16 and bf16 in m16n16k16, m32n8k16 and m8n32k16,
// tf32 in m16n16k8.
//
// Fragments. The ISA leaves which matrix element a fragment register holds
// unspecified (9.7.14.4.1: "the distribution of fragments across threads is
// unspecified"), and a program can only observe what a load, an mma and a
// store leave in memory, or apply the same operation to every element. The
// simulator's fragments are its own: slot s of lane l (element i of register
// r, s = r·per_register + i) holds element (s·32 + l) mod E of the matrix in
// row-major order, E = rows·cols. f16 A and B fragments hold 16 slots for
// matrices of 128 to 512 elements, so some elements twice, as the hardware's
// do; every other fragment holds each element once.
//
// Sums: as mma.sync's for the same types (mma.cpp, tensor_core_sum.hpp):
// f16 and bf16 inputs into f32 accumulators by the H100's rule, all K
// products in one step; f16 accumulators by the same alignment, the sum
// rounded once to f16 (kHopperHalfToHalfSum). tf32 inputs
// are read from their registers' upper 19 bits (9.7.14.4.1: the lower 13
// bits of a .tf32 element are ignored) and summed by the same rule in two
// steps of four products, the m16n8k4 instructions ptxas emits for them
// (HMMA.1684.F32.TF32 in cuobjdump's SASS of tests/corpus/wmma_forms.cu for
// sm_90): bit for bit what an H100 gives (tests/gpu, NvccKernelsGpu), where
// one step of eight differed by 1-6 ulps in 16 of 256 elements.
#include <algorithm>
#include <array>
#include <vector>

#include "execute.hpp"
#include "float_format.hpp"
#include "memory_access.hpp"
#include "tensor_core_sum.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/vocabulary_wmma.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;
using ptx::WmmaMatrix;

constexpr int kLanes = 32;

// One matrix operand of a wmma instruction: its element type, its shape and
// how its fragment packs into registers.
struct Operand {
  Type type;
  int rows, cols;
  int element_bits;  // 16 (f16, bf16) or 32 (tf32, f32)
  int registers;

  int elements() const { return rows * cols; }
  int per_register() const { return 32 / element_bits; }
  int slots() const { return registers * per_register(); }
  // The row-major index of the element in slot s of `lane`.
  int element(int lane, int s) const { return (s * kLanes + lane) % elements(); }
};

Operand operand(MmaShape shape, WmmaMatrix x, Type t) {
  const ptx::WmmaDims dims = *ptx::wmma_dims(shape);  // the decoder checked the shape
  return {t, dims.rows(x), dims.cols(x), t == Type::f16 || t == Type::bf16 ? 16 : 32,
          ptx::wmma_fragment_registers(shape, x, t)};
}

// The bits of slot s, from the lane's fragment registers.
std::uint32_t slot_bits(Warp& w, const std::vector<Arg>& regs, const Operand& o, int lane, int s) {
  const auto v = static_cast<std::uint32_t>(
      read(w, regs[static_cast<std::size_t>(s / o.per_register())], lane));
  return o.element_bits == 32 ? v : (v >> (16 * (s % 2))) & 0xFFFFu;
}

// Every element of the matrix from the fragment (the first slot that holds
// each), decoded.
std::vector<double> gather(Warp& w, const std::vector<Arg>& regs, const Operand& o) {
  std::vector<double> values(static_cast<std::size_t>(o.elements()));
  for (int e = 0; e < o.elements(); ++e) {
    const int lane = e % kLanes, s = e / kLanes;
    std::uint32_t bits = slot_bits(w, regs, o, lane, s);
    Type t = o.type;
    if (t == Type::tf32) {
      bits &= 0xFFFFE000u;  // a .tf32 element's lower 13 bits are ignored
      t = Type::f32;
    }
    values[static_cast<std::size_t>(e)] = matrix_element_value(t, bits);
  }
  return values;
}

// The address (a register or immediate, the same in every lane) and the
// stride in elements between rows (.row) or columns (.col): the stride
// operand, or the matrix's own width when there is none.
struct Placement {
  std::uint64_t base;
  std::uint64_t stride;
  bool column_major;
};

Placement placement(const Inst& in, Warp& w, const Operand& o, std::size_t address_operand) {
  const bool column_major = (in.vec & 1) != 0;
  const bool has_stride = in.ops.size() == 3;
  Placement p{address_of(w, in.op0(address_operand), 0),
              has_stride ? static_cast<std::uint32_t>(read(w, in.op0(2), 0))
                         : static_cast<std::uint64_t>(column_major ? o.rows : o.cols),
              column_major};
  // PTX ISA 9.7.14.4.2: the address and stride are the same in every thread.
  for (int lane = 1; lane < kLanes; ++lane) {
    const std::uint64_t base = address_of(w, in.op0(address_operand), lane);
    const std::uint64_t stride =
        has_stride ? static_cast<std::uint32_t>(read(w, in.op0(2), lane)) : p.stride;
    if (base != p.base || stride != p.stride)
      throw AccessFault{lane, "wmma address " + hex(base) + " and stride " +
                                  std::to_string(stride) + " differ from lane 0's (" + hex(p.base) +
                                  ", " + std::to_string(p.stride) +
                                  "): every thread of the warp must give the same"};
  }
  return p;
}

std::byte* element_address(Warp& w, const Inst& in, const Placement& p, const Operand& o, int lane,
                           int e, bool write) {
  const std::uint64_t row = static_cast<std::uint64_t>(e / o.cols);
  const std::uint64_t col = static_cast<std::uint64_t>(e % o.cols);
  const std::uint64_t index = p.column_major ? col * p.stride + row : row * p.stride + col;
  const std::uint32_t bytes = static_cast<std::uint32_t>(o.element_bits / 8);
  std::byte* at = access(w, lane, in.space, p.base + index * bytes, bytes, bytes, write);
  note_shared_access(w, lane, at, bytes, write);
  return at;
}

WmmaMatrix matrix_of(WmmaOp op) {
  switch (op) {
    case WmmaOp::load_a:
      return WmmaMatrix::a;
    case WmmaOp::load_b:
      return WmmaMatrix::b;
    case WmmaOp::load_c:
      return WmmaMatrix::c;
    default:
      return WmmaMatrix::d;
  }
}

void load(const Inst& in, Warp& w) {
  const auto shape = static_cast<MmaShape>(in.mode);
  const Operand o = operand(shape, matrix_of(static_cast<WmmaOp>(in.extent)), in.type());
  const Placement p = placement(in, w, o, 1);
  const auto& dst = in.ops[0];
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = 0; r < o.registers; ++r) {
      std::uint64_t v = 0;
      for (int i = 0; i < o.per_register(); ++i) {
        const int s = r * o.per_register() + i;
        const std::byte* at = element_address(w, in, p, o, lane, o.element(lane, s), false);
        v |= load_bytes(at, static_cast<std::uint32_t>(o.element_bits / 8)) << (o.element_bits * i);
      }
      write(w, dst[static_cast<std::size_t>(r)], lane, v);
    }
}

void store(const Inst& in, Warp& w) {
  const auto shape = static_cast<MmaShape>(in.mode);
  const Operand o = operand(shape, WmmaMatrix::d, in.type());
  const Placement p = placement(in, w, o, 0);
  for (int lane = 0; lane < kLanes; ++lane)
    for (int s = 0; s < o.slots(); ++s)
      store_bytes(element_address(w, in, p, o, lane, o.element(lane, s), true),
                  static_cast<std::uint32_t>(o.element_bits / 8),
                  slot_bits(w, in.ops[1], o, lane, s));
}

void mma(const Inst& in, Warp& w) {
  const auto shape = static_cast<MmaShape>(in.mode);
  const ptx::WmmaDims dims = *ptx::wmma_dims(shape);
  const Type dt = in.types[0], ct = in.types[in.ntypes - 1];
  const Type ab = in.ntypes == 4 ? in.types[1] : Type::f16;
  const Operand a_op = operand(shape, WmmaMatrix::a, ab), b_op = operand(shape, WmmaMatrix::b, ab);
  const Operand c_op = operand(shape, WmmaMatrix::c, ct), d_op = operand(shape, WmmaMatrix::d, dt);
  const std::vector<double> a = gather(w, in.ops[1], a_op), b = gather(w, in.ops[2], b_op),
                            c = gather(w, in.ops[3], c_op);
  // mma's layouts (Inst::vec) must be those A and B were loaded with
  // (9.7.14.4.3); they only place elements in memory, and the loads wrote the
  // fragments in row-major element order whatever the layout.
  const int m_dim = dims.m, n_dim = dims.n, k_dim = dims.k;
  // A's rows and B's columns, contiguous in k, with their exponents.
  std::vector<double> columns(static_cast<std::size_t>(n_dim * k_dim));
  for (int k = 0; k < k_dim; ++k)
    for (int n = 0; n < n_dim; ++n)
      columns[static_cast<std::size_t>(n * k_dim + k)] = b[static_cast<std::size_t>(k * n_dim + n)];
  std::vector<int> a_exp(a.size()), b_exp(columns.size());
  const int ab_min = element_min_exponent(ab);
  std::vector<Factors> rows(static_cast<std::size_t>(m_dim)), cols(static_cast<std::size_t>(n_dim));
  for (int m = 0; m < m_dim; ++m) {
    const std::size_t at = static_cast<std::size_t>(m * k_dim);
    rows[static_cast<std::size_t>(m)] = {&a[at], &a_exp[at],
                                         exponents(&a[at], k_dim, ab_min, &a_exp[at])};
  }
  for (int n = 0; n < n_dim; ++n) {
    const std::size_t at = static_cast<std::size_t>(n * k_dim);
    cols[static_cast<std::size_t>(n)] = {&columns[at], &b_exp[at],
                                         exponents(&columns[at], k_dim, ab_min, &b_exp[at])};
  }
  // tf32: two steps of four products (see the top of this file).
  const TensorCoreSum& form = dt == Type::f32 ? kHopperHalfSum : kHopperHalfToHalfSum;
  const TensorCoreSum rule{ab == Type::tf32 ? 4 : k_dim, form.aligned_bits, form.result_bits};
  std::vector<std::uint32_t> d(static_cast<std::size_t>(m_dim * n_dim));
  for (int m = 0; m < m_dim; ++m)
    for (int n = 0; n < n_dim; ++n) {
      const double acc = c[static_cast<std::size_t>(m * n_dim + n)];
      const Factors& row = rows[static_cast<std::size_t>(m)];
      const Factors& col = cols[static_cast<std::size_t>(n)];
      std::uint32_t& out = d[static_cast<std::size_t>(m * n_dim + n)];
      const double sum = tensor_core_sum(acc, row, col, k_dim, rule);
      out = dt == Type::f32 ? accumulator_bits(sum)
                            : encode_float(sum, kF16, Rounding::rn, false);  // as mma.sync
    }
  const auto& dst = in.ops[0];
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = 0; r < d_op.registers; ++r) {
      std::uint64_t v = 0;
      for (int i = 0; i < d_op.per_register(); ++i)
        v |=
            std::uint64_t{
                d[static_cast<std::size_t>(d_op.element(lane, r * d_op.per_register() + i))]}
            << (d_op.element_bits * i);
      write(w, dst[static_cast<std::size_t>(r)], lane, v);
    }
}

}  // namespace

void exec_wmma(const Inst& in, Warp& w) {
  switch (static_cast<WmmaOp>(in.extent)) {
    case WmmaOp::mma:
      return mma(in, w);
    case WmmaOp::store_d:
      return store(in, w);
    default:
      return load(in, w);
  }
}

}  // namespace warpforge::sim
