// wgmma.mma_async with B in shared memory and A in shared memory or in
// registers (PTX ISA 9.7.15.5), written from the ISA's descriptor, layout
// and register fragment sections, independently of layout/:
//
// Matrix descriptor (9.7.15.5.1.2.3), a 64-bit register:
//   bits 0-13 start address >> 4, 16-29 leading-dimension byte offset (LBO)
//   >> 4, 32-45 stride-dimension byte offset (SBO) >> 4, 49-51 matrix base
//   offset, 62-63 swizzle mode (0 none, 1 128B, 2 64B, 3 32B).
//
// Layouts (9.7.15.5.1.2 "Shared Memory Matrix Layout") and the swizzle:
// smem_matrix.hpp. A swizzled descriptor advanced inside an atom (the next
// K slice) still finds its data, since the swizzle applies to the shared
// address itself; the base offset field, for patterns that do not start on
// their repeat boundary, is refused.
//
// A from registers (9.7.15.5.1.1 "Register Fragments", A): four .b32
// registers per thread, elements packed low to high; warp w holds rows
// 16w..16w+15, with lane l and element i:
//   16-bit (a0..a7):  row 16w + l/4 + 8*((i/2)%2), column 2*(l%4) + i%2 + 8*(i/4)
//   8-bit (a0..a15):  row 16w + l/4 + 8*((i/4)%2), column 4*(l%4) + i%4 + 16*(i/8)
//
// The accumulator fragment (9.7.15.5.1.1 "Register Fragments", D): warp w of
// the warpgroup holds rows 16w..16w+15; with lane l, f32 register i holds
// row 16w + l/4 + 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2; an f16
// accumulator packs the two columns of a pair into register i/2.
//
// A wgmma.mma_async reads its registers (descriptors, scale-d) at issue and
// shared memory as late as the ISA allows: when the wgmma.wait_group that
// retires its group runs. A kernel that lets shared memory change under a
// wgmma still in flight (a stage released before the wait) then computes
// with the new contents, as it may on the GPU. A's registers are read
// asynchronously too, and touching them or the accumulators before the
// wgmma.wait_group that retires the wgmma is undefined (9.7.15.7.3): until
// retirement only another wgmma.mma_async may use its accumulators (as
// accumulators) or its A registers (as A), and any other instruction that
// touches either is refused, so reading A at retirement reads what was
// there at issue. (The other half of the rule, a wgmma.fence between a
// register's last write and the wgmma that reads it (9.7.15.7.1), is not
// checked: the simulator keeps no per-register write history.)
// Products of f16/bf16/fp8 values are exact in double; accumulators are
// updated by the H100's rules (tensor_core_sum.hpp), f16 ones then rounded
// once to f16.
#include <algorithm>
#include <array>
#include <vector>

#include "execute.hpp"
#include "float_format.hpp"
#include "memory_access.hpp"
#include "smem_matrix.hpp"
#include "tensor_core_sum.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

SmemMatrix decode_descriptor(std::uint64_t d, const char* operand) {
  static constexpr std::array<std::uint32_t, 4> kSpan = {0, 128, 64, 32};
  const std::uint64_t base_offset = (d >> 49) & 7;
  if (base_offset != 0)
    throw SimError(std::string("matrix descriptor of ") + operand + " " + hex(d) +
                   " has base offset " + std::to_string(base_offset) +
                   "; the simulator takes 0 (swizzle patterns starting on their repeat boundary)");
  return {(d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4, kSpan[d >> 62]};
}

// A is a vector of four registers, or one descriptor (decode.cpp validates).
bool a_in_registers(const Inst& in) {
  return in.ops[1].size() == 4;
}

// Reads the warp's 16 rows of A (its part of the warpgroup's 64) from the
// four fragment registers `regs` into out[row][k], rows counted from the
// warp's first.
void load_register_a(Warp& w, const std::vector<Arg>& regs, Type t, std::uint32_t k_dim,
                     double negate, std::vector<double>& out) {
  const bool wide = ptx::bits(t) == 16;
  const std::uint32_t per_reg = wide ? 2 : 4, bits = wide ? 16 : 8;
  out.assign(std::size_t{16} * k_dim, 0.0);
  for (int lane = 0; lane < 32; ++lane)
    for (std::uint32_t i = 0; i < 4 * per_reg; ++i) {
      const auto word = static_cast<std::uint32_t>(read(w, regs[i / per_reg], lane));
      const std::uint32_t element = (word >> (bits * (i % per_reg))) & ((1u << bits) - 1);
      const std::uint32_t row = lane / 4 + 8 * ((i / per_reg) % 2);
      const std::uint32_t col =
          per_reg * (lane % 4) + i % per_reg + 4 * per_reg * (i / (2 * per_reg));
      out[std::size_t{row} * k_dim + col] = negate * matrix_element_value(t, element);
    }
}

// The shared address of element (row, k) of an operand.
std::uint64_t element_address(const SmemMatrix& d, bool mn_major, std::uint32_t row,
                              std::uint32_t k, std::uint32_t bytes) {
  return swizzle_address(d.start + smem_matrix_offset(d, mn_major, row, k, bytes), d.swizzle);
}

// Reads rows [row0, row0 + rows) by K of an operand into out[row - row0][k].
void load_operand(Warp& w, std::uint64_t descriptor, const char* name, bool mn_major, Type t,
                  std::uint32_t row0, std::uint32_t rows, std::uint32_t k_dim, double negate,
                  std::vector<double>& out) {
  const SmemMatrix d = decode_descriptor(descriptor, name);
  const std::vector<std::byte>& shared = w.cta->shared;
  const auto bytes = static_cast<std::uint32_t>(ptx::bits(t) / 8);
  out.resize(std::size_t{rows} * k_dim);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t k = 0; k < k_dim; ++k) {
      const std::uint64_t a = element_address(d, mn_major, row0 + r, k, bytes);
      if (a + bytes > shared.size())
        throw SimError(std::string("wgmma operand ") + name + " element (" +
                       std::to_string(row0 + r) + ", " + std::to_string(k) +
                       ") is at shared address " + hex(a) + ", outside the CTA's " +
                       std::to_string(shared.size()) + " bytes of shared memory (descriptor " +
                       hex(descriptor) + ")");
      out[std::size_t{r} * k_dim + k] =
          negate *
          matrix_element_value(t, static_cast<std::uint32_t>(load_bytes(&shared[a], bytes)));
    }
}

// Whether A is in registers, and whether A (in shared memory) and B are
// MN-major (imm-trans-a, imm-trans-b: operands 4.. are imm-scale-a,
// imm-scale-b[, imm-trans-a (A in shared memory), imm-trans-b]; only 16-bit
// types transpose).
struct OperandLayout {
  bool registers, trans_a, trans_b;
};
OperandLayout operand_layout(const Inst& in) {
  const bool half = in.types[1] == Type::f16 || in.types[1] == Type::bf16;
  const bool registers = a_in_registers(in);
  return {registers, half && !registers && in.op0(6).bits != 0,
          half && in.op0(registers ? 6 : 7).bits != 0};
}

// Race checking (shared_races.hpp) of a retiring wgmma: the shared bytes
// this warp's part of it read, its 16 rows of A (in shared memory) and all
// of B, in runs of adjacent bytes (walking K-major operands along K and
// MN-major ones along M/N, each element's bytes are mostly the previous
// one's neighbours).
void note_shared_reads(Warp& w, const PendingWgmma& p) {
  const Inst& in = *p.inst;
  const OperandLayout layout = operand_layout(in);
  const auto walk = [&](std::uint64_t descriptor, bool mn_major, Type t, std::uint32_t row0,
                        std::uint32_t rows) {
    const SmemMatrix d = decode_descriptor(descriptor, "");
    const auto bytes = static_cast<std::uint32_t>(ptx::bits(t) / 8);
    std::uint64_t begin = 0, end = 0;
    const auto element = [&](std::uint32_t r, std::uint32_t k) {
      const std::uint64_t a = element_address(d, mn_major, row0 + r, k, bytes);
      if (a != end) {
        if (end > begin) record_wgmma_read(w, p, begin, end - begin);
        begin = a;
      }
      end = a + bytes;
    };
    const std::uint32_t k_dim = in.vec;
    if (mn_major) {
      for (std::uint32_t k = 0; k < k_dim; ++k)
        for (std::uint32_t r = 0; r < rows; ++r) element(r, k);
    } else {
      for (std::uint32_t r = 0; r < rows; ++r)
        for (std::uint32_t k = 0; k < k_dim; ++k) element(r, k);
    }
    if (end > begin) record_wgmma_read(w, p, begin, end - begin);
  };
  if (!layout.registers)
    walk(p.desc_a, layout.trans_a, in.types[1], 16 * static_cast<std::uint32_t>(p.warp_in_group),
         16);
  walk(p.desc_b, layout.trans_b, in.types[2], 0, in.extent);
}

// Runs one retired wgmma: reads A and B from shared memory now, and
// updates its accumulators.
void mma_async(const PendingWgmma& p, Warp& w) {
  const Inst& in = *p.inst;
  const Type dt = in.types[0], at = in.types[1], bt = in.types[2];
  const std::uint32_t n_dim = in.extent, k_dim = in.vec;
  const bool half = at == Type::f16 || at == Type::bf16;
  const auto [registers, trans_a, trans_b] = operand_layout(in);
  const auto sign = [&](std::size_t i) {  // imm-scale-a, imm-scale-b
    return static_cast<std::int64_t>(in.op0(i).bits) < 0 ? -1.0 : 1.0;
  };
  const bool accumulate = p.accumulate;
  std::vector<double> a, b;
  const auto row0 = static_cast<std::uint32_t>(16 * p.warp_in_group);
  try {
    if (registers)
      load_register_a(w, in.ops[1], at, k_dim, sign(4), a);
    else
      load_operand(w, p.desc_a, "A", trans_a, at, row0, 16, k_dim, sign(4), a);
    load_operand(w, p.desc_b, "B", trans_b, bt, 0, n_dim, k_dim, sign(5), b);
  } catch (const SimError& e) {
    throw SimError(std::string("retiring the wgmma.mma_async at PTX line ") +
                   std::to_string(in.line) + ": " + e.what());
  }

  const auto& dst = in.ops[0];
  const bool f32 = dt == Type::f32;
  // Exponents of A's rows and B's columns, once, for the H100's sums.
  const int kk = static_cast<int>(k_dim);
  std::vector<int> a_exp(a.size()), b_exp(b.size());
  std::vector<Factors> rows(16), cols(n_dim);
  const int a_min = element_min_exponent(at), b_min = element_min_exponent(bt);
  for (std::size_t r = 0; r < 16; ++r)
    rows[r] = {&a[r * k_dim], &a_exp[r * k_dim],
               exponents(&a[r * k_dim], kk, a_min, &a_exp[r * k_dim])};
  for (std::size_t c = 0; c < n_dim; ++c)
    cols[c] = {&b[c * k_dim], &b_exp[c * k_dim],
               exponents(&b[c * k_dim], kk, b_min, &b_exp[c * k_dim])};
  for (int lane = 0; lane < 32; ++lane) {
    for (std::size_t i = 0; i < dst.size(); ++i) {
      // f32: one element per register; f16: two adjacent columns per register
      const int per_reg = f32 ? 1 : 2;
      std::uint64_t packed = 0;
      const std::uint64_t old = read(w, dst[i], lane);
      for (int h = 0; h < per_reg; ++h) {
        const std::size_t e =
            i * per_reg + h;  // the element's index among the lane's N/2 f32 slots
        const std::uint32_t row = lane / 4 + 8 * ((e % 4) / 2);
        const std::uint32_t col = static_cast<std::uint32_t>(8 * (e / 4) + 2 * (lane % 4) + e % 2);
        double sum = 0;
        if (accumulate)
          sum = f32 ? f32_of(static_cast<std::uint32_t>(old))
                    : matrix_element_value(Type::f16,
                                           static_cast<std::uint32_t>(old >> (16 * h)) & 0xFFFF);
        // The H100's sums (tensor_core_sum.hpp); into f16 accumulators the
        // sum is rounded to f16 once, below.
        const TensorCoreSum& rule = f32 ? (half ? kHopperHalfSum : kHopperFp8Sum)
                                        : (half ? kHopperHalfToHalfSum : kHopperFp8HalfSum);
        sum = tensor_core_sum(sum, rows[row], cols[col], kk, rule);
        packed |=
            f32 ? accumulator_bits(sum) : encode_float(sum, kF16, Rounding::rn, false) << (16 * h);
      }
      write(w, dst[i], lane, packed);
    }
  }
}

// Marks the registers of a wgmma in flight: its accumulators and, when A is
// in registers, A's.
void mark_pending(Warp& w, const Inst& in) {
  for (const Arg& d : in.ops[0]) w.wgmma_pending[d.slot] = {in.line, false};
  if (a_in_registers(in))
    for (const Arg& a : in.ops[1]) w.wgmma_pending[a.slot] = {in.line, true};
  w.wgmma_busy = true;
}

// Marks the pending registers again from the wgmma still in flight.
void remark_pending(Warp& w) {
  std::fill(w.wgmma_pending.begin(), w.wgmma_pending.end(), WgmmaRegisterUse{});
  w.wgmma_busy = false;
  for (const auto& group : w.wgmma_groups)
    for (const PendingWgmma& p : group) mark_pending(w, *p.inst);
  for (const PendingWgmma& p : w.wgmma_open) mark_pending(w, *p.inst);
}

// A wgmma.mma_async may chain onto the accumulators of those in flight (PTX
// ISA 9.7.15.7.1: same-shape accumulator accesses are ordered) and share
// their A registers, but not read as A what one still writes, nor write
// what one still reads as A: both need the wgmma.wait_group first.
void check_issue(const Inst& in, const Warp& w) {
  auto check = [&](std::size_t operand, bool as_a) {
    for (std::size_t i = 0; i < in.ops[operand].size(); ++i) {
      const WgmmaRegisterUse& use = w.wgmma_pending[in.ops[operand][i].slot];
      if (!use.line || use.a_fragment == as_a) continue;
      throw SimError(std::string(as_a ? "A register " : "accumulator ") + std::to_string(i) +
                     " of this wgmma is " + (use.a_fragment ? "an A register" : "an accumulator") +
                     " of the wgmma.mma_async at PTX line " + std::to_string(use.line) +
                     ", which no wgmma.wait_group has waited for; wait for it first "
                     "(PTX ISA 9.7.15.7.3)");
    }
  };
  check(0, false);
  if (a_in_registers(in)) check(1, true);
}

}  // namespace

void exec_wgmma(const Inst& in, Warp& w, int warp_in_group) {
  switch (static_cast<WgmmaOp>(in.mode)) {
    case WgmmaOp::mma_async: {
      // Descriptors and scale-d are read now (descriptors checked now, so
      // that a bad one names this line); shared memory and A's registers
      // when the group retires.
      if (w.wgmma_busy) check_issue(in, w);
      const bool registers = a_in_registers(in);
      PendingWgmma p{&in, warp_in_group, registers ? 0 : read(w, in.op0(1), 0),
                     read(w, in.op0(2), 0), read(w, in.op0(3), 0) != 0};
      if (!registers) decode_descriptor(p.desc_a, "A");
      decode_descriptor(p.desc_b, "B");
      if (w.cta->races) p.issued = w.cta->races->issue_async_read(w.index);
      w.wgmma_open.push_back(p);
      mark_pending(w, in);
      return;
    }
    case WgmmaOp::commit_group:
      w.wgmma_groups.push_back(std::move(w.wgmma_open));
      w.wgmma_open.clear();
      return;
    case WgmmaOp::wait_group: {
      // Retires all but the `keep` newest committed groups, in issue order.
      const std::size_t keep = in.op0(0).bits;
      if (w.wgmma_groups.size() <= keep) return;
      const auto retired = static_cast<std::ptrdiff_t>(w.wgmma_groups.size() - keep);
      if (SharedRaces* races = w.cta->races.get()) {
        // The warpgroup's warps retire one after another, the first first
        // (warpgroup_collective): one new epoch of its reads for all four,
        // and the join of the four warps' issues of what retires.
        if (warp_in_group == 0) {
          SharedRaces::Clock issues{};
          for (std::uint32_t k = 0; k < 4; ++k) {
            const Warp& member = w.cta->warps[w.index + k];
            for (std::ptrdiff_t g = 0; g < retired; ++g)
              for (const PendingWgmma& p : member.wgmma_groups[static_cast<std::size_t>(g)])
                for (std::size_t c = 0; c < issues.size(); ++c)
                  issues[c] = std::max(issues[c], p.issued[c]);
          }
          races->begin_retirement(w.index / 4, issues);
        }
        for (auto g = w.wgmma_groups.begin(); g != w.wgmma_groups.begin() + retired; ++g)
          for (const PendingWgmma& p : *g) note_shared_reads(w, p);
        races->retired(w.index, w.index / 4);
      }
      for (auto g = w.wgmma_groups.begin(); g != w.wgmma_groups.begin() + retired; ++g)
        for (const PendingWgmma& p : *g) mma_async(p, w);
      w.wgmma_groups.erase(w.wgmma_groups.begin(), w.wgmma_groups.begin() + retired);
      remark_pending(w);
      return;
    }
    case WgmmaOp::fence:
      return;
  }
}

void check_wgmma_registers(const Inst& in, Warp& w) {
  auto check = [&](const Arg& a, const std::string& what) {
    if (a.kind != Arg::Kind::reg || !w.wgmma_pending[a.slot].line) return;
    const WgmmaRegisterUse& use = w.wgmma_pending[a.slot];
    throw SimError(
        what + " is " + (use.a_fragment ? "an A register" : "an accumulator register") +
        " of the wgmma.mma_async at PTX line " + std::to_string(use.line) +
        ", which no wgmma.wait_group has waited for; only another wgmma.mma_async may use it "
        "before then (PTX ISA 9.7.15.7.3)");
  };
  if (in.guarded) check(in.guard, "the guard predicate");
  for (std::size_t i = 0; i < in.ops.size(); ++i)
    for (const Arg& a : in.ops[i]) check(a, "operand " + std::to_string(i + 1));
}

}  // namespace warpforge::sim
