// The tcgen05 instructions of sm_100a (PTX ISA 9.7.16, "TensorCore 5th
// Generation Family Instructions"), written from the ISA's text alone (no
// Blackwell GPU has run them here) and independently of layout/:
//
// Tensor memory (tensor_memory.hpp): alloc, dealloc and relinquish_alloc_permit
// are warp-wide; alloc writes the block's address to shared memory.
//
// tcgen05.ld / tcgen05.st (warp-wide) move 32-bit cells between tensor memory
// and registers. Register i of lane t, counted from the address's lane and
// column, for .num = N (the ISA's "Matrix fragments" figures for each shape):
//   32x32b:  lane t,                      column i
//   16x64b:  lane t/4 + 8*(t%2),          column 2i + (t/2)%2
//   16x128b: lane t/4 + 8*(i%2),          column 4*(i/2) + t%4
//   16x256b: lane t/4 + 8*((i%4)/2),      column 8*(i/4) + 2*(t%4) + i%2
// Warp w of the CTA reaches only lanes 32*(w%4) .. 32*(w%4)+31 ("Tensor
// Memory": access restrictions); an access outside them is refused. Both
// complete at once, so tcgen05.wait::ld/st have nothing left to wait for.
//
// tcgen05.mma, tcgen05.cp and tcgen05.shift are issued by single threads and
// run asynchronously, in issue order per thread. The simulator reads their
// register operands at issue, checks what it can then (descriptors, shape,
// types), and runs them when the issuing thread executes tcgen05.commit,
// which then arrives once on the mbarrier (on each CTA of the mask for
// .multicast::cluster). A kernel that changes shared memory under an MMA not
// yet committed, or reads D before the commit's mbarrier phase completes,
// races on the GPU; here it sees the old values.
//
// .cta_group::2 (PTX ISA 9.7.16.5, Table 46, and tcgen05.mma): the CTAs of a
// cluster pair up by %cluster_ctarank, ranks 2i and 2i+1, so the cluster's
// size must be even. One thread of either CTA issues mma, cp and shift for
// the pair, whose peer must not have exited; one warp of each CTA performs
// each alloc, dealloc and relinquish_alloc_permit, the k-th of one CTA
// matching the k-th of the other (same instruction, same block). The first
// warp of the two waits until its peer's performs it too (the ISA lets the
// GPU hold it so; here it always waits, so a peer that never comes is a
// deadlock, reported as one): an alloc claims the same columns in both CTAs
// when the first warp arrives, a dealloc or relinquish takes effect in both
// when the second does.
//
// tcgen05.mma (.cta_group::1, M = 128): D is lanes 0..127 (row m in lane m)
// by N columns of f32 from the D address; A (M x K) and B (N x K) come from
// shared memory through sm_100 matrix descriptors (bits 0-13 start >> 4,
// 16-29 LBO >> 4, 32-45 SBO >> 4, 46-48 the fixed 0b001, 49-51 base offset,
// 52 LBO mode, 61-63 swizzle: 0 none, 2 128B, 4 64B, 6 32B) in the canonical
// layouts of smem_matrix.hpp, or A from tensor memory (row m in lane m, K
// packed low to high along the columns). The instruction descriptor (bits
// 4-5 D type or B's scale-factor ID, 7-9 and 10-12 A and B types, 13-14
// negate, 15-16 MN-major, 17-22 N >> 3, 23 scale type, 24-28 M >> 4, 29-30
// A's scale-factor ID) gives the rest. K per instruction: 16 (f16, bf16),
// 8 (tf32), 32 (e4m3, e5m2), 64 (e2m1, two per byte, the first in the low
// nibble). With .cta_group::2, M = 256 (data-path layout A): the pair's even
// CTA holds rows 0..127 of A (its shared memory, or its tensor memory) and
// of D (its tensor memory, lane m), the odd CTA rows 128..255, both at the
// same descriptor and tensor-memory addresses; B's N rows are split the same
// way, rows 0..N/2-1 in the even CTA's shared memory, N/2..N-1 in the odd's.
//
// Block scaling ("Block Scaling" and the scale-factor layout figures): each
// row of A and each column of B has scale_vec factors per instruction, one
// per K/scale_vec elements (1X: 32 of K = 32; 2X: 32 of K = 64; 4X: 16 of
// K = 64), ue8m0 (2^(e-127)) or ue4m3. Row m's factors are bytes SFA_ID,
// SFA_ID+1, ... of the cell at lane m, column (scale-A column) + m/32; column
// n's are bytes SFB_ID, ... of lane 32*q + n%32, column (scale-B column) +
// n/32, in the lane quarter q of the row being computed: the ISA requires the
// factors duplicated into all four quarters (what tcgen05.cp.32x128b.warpx4
// does with the 128x4 shared-memory layout), and a kernel that fills one
// quarter only computes with zeros elsewhere here. With .cta_group::2 each
// CTA's tensor memory holds the factors of its own rows of A and of all N
// columns of B, which tcgen05.cp.cta_group::2 puts there: it copies, in each
// CTA of the pair, from that CTA's shared memory to its tensor memory, at
// the same addresses.
//
// Products are exact in double; each D element is rounded once to f32.
#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include "execute.hpp"
#include "float_format.hpp"
#include "memory_access.hpp"
#include "smem_matrix.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

// Runs f, turning a SimError into a fault of `lane` (so the message names the thread).
template <class F>
decltype(auto) for_thread(int lane, F&& f) {
  try {
    return f();
  } catch (const SimError& e) {
    throw AccessFault{lane, e.what()};
  }
}

// An operand that all threads of an .aligned instruction must give alike.
std::uint64_t uniform(Warp& w, const Arg& a, std::uint32_t active, const char* what, bool address) {
  const int first = std::countr_zero(active);
  const std::uint64_t v = address ? address_of(w, a, first) : read(w, a, first);
  for_lanes(active, [&](int l) {
    const std::uint64_t mine = address ? address_of(w, a, l) : read(w, a, l);
    if (mine != v)
      throw AccessFault{l, std::string(what) + " " + hex(mine) + " differs from lane " +
                               std::to_string(first) + "'s " + hex(v) +
                               "; every thread of the warp gives the same (.aligned)"};
  });
  return v;
}

// ---- the CTA pair -------------------------------------------------------------

bool has_exited(const Cta& cta) {
  for (const Warp& w : cta.warps)
    for (int l = 0; l < 32; ++l)
      if ((w.exists >> l) & 1 && w.state[l] != LaneState::exited) return false;
  return true;
}

// The other CTA of `cta`'s pair (ranks 2i and 2i+1 of the cluster).
Cta& peer_of(Cta& cta) {
  Cluster& cluster = *cta.cluster;
  const std::uint32_t peer = cta.rank ^ 1;
  if (peer >= cluster.ctas.size())
    throw SimError(".cta_group::2 in the CTA of %cluster_ctarank " + std::to_string(cta.rank) +
                   " of a cluster of " + std::to_string(cluster.ctas.size()) +
                   ", which has no CTA of rank " + std::to_string(peer) +
                   " to pair with; a CTA pair is ranks 2i and 2i+1 of a cluster, so "
                   ".cta_group::2 needs clusters of an even number of CTAs");
  return cluster.ctas[peer];
}

// The peer, which must not have exited when the pair's mma, cp or shift is
// issued or runs (PTX ISA 9.7.16.5, Table 46).
Cta& active_peer_of(Cta& cta) {
  Cta& peer = peer_of(cta);
  if (has_exited(peer))
    throw SimError("the peer CTA (%cluster_ctarank " + std::to_string(peer.rank) +
                   ") of this .cta_group::2 operation has exited; it must still be active "
                   "(PTX ISA 9.7.16.5)");
  return peer;
}

// The CTAs whose memories an mma, cp or shift issued in `cta` uses, in
// data-path order: `cta` alone for .cta_group::1; the pair's even CTA, then
// its odd one, for ::2.
std::vector<Cta*> data_path_ctas(Cta& cta, const Inst& in) {
  if (!in.cta_pair) return {&cta};
  Cta& peer = active_peer_of(cta);
  if (cta.rank % 2) return {&peer, &cta};
  return {&cta, &peer};
}

std::string describe_request(const Inst& in, std::uint32_t address, std::uint32_t columns) {
  const std::string line = " (PTX line " + std::to_string(in.line) + ")";
  switch (static_cast<Tcgen05Op>(in.mode)) {
    case Tcgen05Op::alloc:
      return "tcgen05.alloc.cta_group::2 of " + std::to_string(columns) + " columns" + line;
    case Tcgen05Op::dealloc:
      return "tcgen05.dealloc.cta_group::2 of " + std::to_string(columns) + " columns at " +
             hex(address) + line;
    default:
      return "tcgen05.relinquish_alloc_permit.cta_group::2" + line;
  }
}

// A .cta_group::2 alloc, dealloc or relinquish_alloc_permit by the warp of
// `w` whose first thread is `thread` (see the header comment): returns the
// block's address and sets `wait` when the warp is the first of the two.
std::uint32_t pair_allocation(const Inst& in, Warp& w, std::uint32_t thread, std::uint32_t address,
                              std::uint32_t columns, bool& wait) {
  Cta& cta = *w.cta;
  Cta& peer = peer_of(cta);
  const auto op = static_cast<Tcgen05Op>(in.mode);
  std::deque<PairRequest>& theirs = peer.tmem.unmatched;
  wait = theirs.empty();
  if (wait) {
    if (has_exited(peer))
      throw SimError(describe_request(in, address, columns) +
                     ", which one warp of each CTA of the pair performs, after the peer CTA "
                     "(%cluster_ctarank " +
                     std::to_string(peer.rank) + ") exited");
    if (op == Tcgen05Op::alloc) address = TensorMemory::allocate_pair(cta.tmem, peer.tmem, columns);
    if (op == Tcgen05Op::dealloc) cta.tmem.check_block(address, columns);
    cta.tmem.unmatched.push_back({&in, thread, address, columns});
    return address;
  }
  const PairRequest other = theirs.front();
  if (other.inst->mode != in.mode || other.columns != columns ||
      (op == Tcgen05Op::dealloc && other.address != address))
    throw SimError(describe_request(in, address, columns) + " meets the peer CTA's " +
                   describe_request(*other.inst, other.address, other.columns) +
                   "; the warps of a CTA pair perform the same .cta_group::2 alloc, dealloc and "
                   "relinquish_alloc_permit in the same order (PTX ISA 9.7.16.5)");
  theirs.pop_front();
  if (op == Tcgen05Op::dealloc) {
    cta.tmem.deallocate(address, columns);
    peer.tmem.deallocate(address, columns);
  }
  if (op == Tcgen05Op::relinquish) {
    cta.tmem.relinquish(in.line);
    peer.tmem.relinquish(other.inst->line);
  }
  return other.address;
}

// ---- ld / st ----------------------------------------------------------------

struct Cell {
  std::uint32_t lane, column;
};

Cell data_path_cell(Tcgen05Shape shape, std::uint32_t t, std::uint32_t i) {
  switch (shape) {
    case Tcgen05Shape::lanes32_bits32:
      return {t, i};
    case Tcgen05Shape::lanes16_bits64:
      return {t / 4 + 8 * (t % 2), 2 * i + (t / 2) % 2};
    case Tcgen05Shape::lanes16_bits128:
      return {t / 4 + 8 * (i % 2), 4 * (i / 2) + t % 4};
    case Tcgen05Shape::lanes16_bits256:
      return {t / 4 + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (t % 4) + i % 2};
  }
  return {0, 0};
}

void load_store(const Inst& in, Warp& w, std::uint32_t active, bool load) {
  const auto shape = static_cast<Tcgen05Shape>(in.vec);
  const char* name = load ? "tcgen05.ld" : "tcgen05.st";
  const auto taddr =
      static_cast<std::uint32_t>(uniform(w, in.op0(load ? 1 : 0), active, "the address", true));
  const std::uint32_t lane0 = TensorMemory::lane_of(taddr),
                      column0 = TensorMemory::column_of(taddr);
  const std::uint32_t rows = shape == Tcgen05Shape::lanes32_bits32 ? 32 : 16;
  const std::uint32_t quarter = w.index % 4;
  if (lane0 < 32 * quarter || lane0 + rows > 32 * quarter + 32)
    throw AccessFault{std::countr_zero(active),
                      std::string(name) + " of lanes " + std::to_string(lane0) + "-" +
                          std::to_string(lane0 + rows - 1) + " by warp " + std::to_string(w.index) +
                          ", which reaches only tensor-memory lanes " +
                          std::to_string(32 * quarter) + "-" + std::to_string(32 * quarter + 31) +
                          " (warp w reaches lanes 32*(w%4) .. 32*(w%4)+31)"};
  TensorMemory& tmem = w.cta->tmem;
  const std::vector<Arg>& data = in.ops[load ? 0 : 1];
  for_lanes(active, [&](int t) {
    for (std::uint32_t i = 0; i < data.size(); ++i) {
      const Cell c = data_path_cell(shape, static_cast<std::uint32_t>(t), i);
      std::uint32_t& cell = for_thread(t, [&]() -> std::uint32_t& {
        return tmem.cell(lane0 + c.lane, column0 + c.column, name);
      });
      if (load)
        write(w, data[i], t, cell);
      else
        cell = static_cast<std::uint32_t>(read(w, data[i], t));
    }
  });
}

// ---- descriptors ---------------------------------------------------------------

[[noreturn]] void refuse_descriptor(std::uint64_t d, const char* operand, const std::string& why) {
  throw SimError(std::string("shared-memory descriptor of ") + operand + " " + hex(d) + ": " + why);
}

SmemMatrix decode_smem_descriptor(std::uint64_t d, const char* operand) {
  auto refuse = [&](const std::string& why) { refuse_descriptor(d, operand, why); };
  if (((d >> 46) & 7) != 1)
    refuse("bits 46-48 hold " + std::to_string((d >> 46) & 7) +
           "; an sm_100 descriptor has the fixed value 0b001 there (a wgmma descriptor lacks it)");
  if ((d >> 49) & 7)
    refuse("base offset " + std::to_string((d >> 49) & 7) +
           "; the simulator takes 0 (swizzle patterns starting on their repeat boundary)");
  if ((d >> 52) & 1) refuse("the absolute leading-dimension mode (bit 52) is not simulated");
  std::uint32_t span = 0;
  switch (d >> 61) {
    case 0:
      span = 0;
      break;
    case 2:
      span = 128;
      break;
    case 4:
      span = 64;
      break;
    case 6:
      span = 32;
      break;
    case 1:
      refuse_descriptor(d, operand,
                        "the 128-byte swizzle with 32-byte atoms (mode 1) is not simulated");
    default:
      refuse_descriptor(
          d, operand,
          "swizzle mode " + std::to_string(d >> 61) + " is not defined (0, 1, 2, 4 or 6)");
  }
  return {(d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4, span};
}

// What the instruction descriptor and the kind say about one MMA.
struct MmaForm {
  Tcgen05Kind kind;
  std::uint32_t m, n, k;
  std::uint32_t a_code, b_code;  // the descriptor's type codes
  std::uint32_t element_bits;
  bool a_mn_major, b_mn_major;
  double negate_a, negate_b;
  // block scaling
  std::uint32_t scale_vec;  // 0: none
  bool ue8m0;
  std::uint32_t sfa_id, sfb_id;
};

const char* kind_name(Tcgen05Kind k) {
  static constexpr const char* kNames[] = {"f16", "tf32", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"};
  return kNames[static_cast<int>(k)];
}

MmaForm decode_instruction_descriptor(const Inst& in, std::uint32_t idesc) {
  MmaForm f{};
  f.kind = static_cast<Tcgen05Kind>(in.vec);
  f.scale_vec = in.extent;
  auto refuse = [&](const std::string& why) {
    throw SimError("instruction descriptor " + hex(idesc) +
                   " of a tcgen05.mma.kind::" + kind_name(f.kind) + ": " + why);
  };
  const bool scaled = f.scale_vec != 0;
  if ((idesc >> 2) & 1) refuse("sparse MMAs (bit 2) are not simulated");
  f.a_code = (idesc >> 7) & 7;
  f.b_code = (idesc >> 10) & 7;
  f.negate_a = (idesc >> 13) & 1 ? -1.0 : 1.0;
  f.negate_b = (idesc >> 14) & 1 ? -1.0 : 1.0;
  f.a_mn_major = (idesc >> 15) & 1;
  f.b_mn_major = (idesc >> 16) & 1;
  f.n = ((idesc >> 17) & 63) << 3;
  f.m = ((idesc >> 24) & 31) << 4;
  // The simulated data-path layouts: D (M = 128 with .cta_group::1) and A
  // (M = 256 with ::2); M = 64 and M = 128 over a pair use others.
  const std::uint32_t simulated_m = in.cta_pair ? 256 : 128;
  if (f.m != simulated_m)
    refuse("M = " + std::to_string(f.m) + " with .cta_group::" + (in.cta_pair ? "2" : "1") +
           "; the simulator runs M = 128 with .cta_group::1 and M = 256 with ::2 (the ISA's "
           "M = 256 needs a CTA pair; M = 64, and M = 128 over a pair, use data-path layouts "
           "not simulated)");
  if (f.n < 16 || f.n > 256 || f.n % 16 != 0)
    refuse("N = " + std::to_string(f.n) + "; with M = " + std::to_string(f.m) +
           ", N is a multiple of 16 in 16..256");
  if (!scaled && ((idesc >> 4) & 3) != 1)
    refuse("D type " + std::to_string((idesc >> 4) & 3) +
           " (bits 4-5); the simulator accumulates in f32 (1)");
  auto both = [&](std::initializer_list<std::uint32_t> codes, const char* accepted) {
    for (std::uint32_t code : {f.a_code, f.b_code})
      if (std::find(codes.begin(), codes.end(), code) == codes.end())
        refuse("type code " + std::to_string(code) + "; simulated for this kind: " + accepted);
  };
  switch (f.kind) {
    case Tcgen05Kind::f16:
      both({0, 1}, "0 (f16), 1 (bf16)");
      if (f.a_code != f.b_code) refuse("A and B of kind::f16 are both f16 or both bf16");
      f.k = 16, f.element_bits = 16;
      break;
    case Tcgen05Kind::tf32:
      both({2}, "2 (tf32)");
      f.k = 8, f.element_bits = 32;
      break;
    case Tcgen05Kind::f8f6f4:
    case Tcgen05Kind::mxf8f6f4:
      both({0, 1}, "0 (e4m3), 1 (e5m2); the 6- and 4-bit types of this kind are not simulated");
      f.k = 32, f.element_bits = 8;
      break;
    case Tcgen05Kind::mxf4:
    case Tcgen05Kind::mxf4nvf4:
      both({1}, "1 (e2m1)");
      if (f.a_mn_major || f.b_mn_major) refuse("e2m1 operands are K-major (bits 15-16 clear)");
      f.k = 64, f.element_bits = 4;
      break;
  }
  if (!scaled) return f;
  f.ue8m0 = (idesc >> 23) & 1;
  f.sfb_id = (idesc >> 4) & 3;
  f.sfa_id = (idesc >> 29) & 3;
  if (f.ue8m0 != (f.scale_vec != 4))
    refuse(std::string("scale type ") + (f.ue8m0 ? "ue8m0" : "ue4m3") +
           " (bit 23) with .scale_vec::" + std::to_string(f.scale_vec) +
           "X; scale_vec::1X and 2X take ue8m0, 4X takes ue4m3");
  for (std::uint32_t id : {f.sfa_id, f.sfb_id})
    if (id % f.scale_vec != 0 || id + f.scale_vec > 4)
      refuse("scale-factor ID " + std::to_string(id) + " with .scale_vec::" +
             std::to_string(f.scale_vec) + "X; its " + std::to_string(f.scale_vec) +
             " byte(s) must fit the 4-byte cell from a multiple of " + std::to_string(f.scale_vec));
  return f;
}

// ---- element values -----------------------------------------------------------------

double element_value(const MmaForm& f, std::uint32_t code, std::uint32_t bits) {
  switch (f.kind) {
    case Tcgen05Kind::f16:
      return matrix_element_value(code == 0 ? Type::f16 : Type::bf16, bits);
    case Tcgen05Kind::tf32:
      return f32_of(bits & 0xFFFFE000u);  // tf32: the f32 bits above the low 13
    case Tcgen05Kind::f8f6f4:
    case Tcgen05Kind::mxf8f6f4:
      return matrix_element_value(code == 0 ? Type::e4m3 : Type::e5m2, bits);
    case Tcgen05Kind::mxf4:
    case Tcgen05Kind::mxf4nvf4: {
      // e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; no infinity or NaN.
      static constexpr double kMagnitude[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
      return (bits & 8 ? -1.0 : 1.0) * kMagnitude[bits & 7];
    }
  }
  return 0;
}

double scale_value(bool ue8m0, std::uint32_t byte) {
  if (ue8m0)
    return byte == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                        : std::ldexp(1.0, int(byte) - 127);
  return matrix_element_value(Type::e4m3, byte & 0x7F);  // ue4m3: e4m3 without its sign bit
}

// Appends rows x K elements of an operand in `cta`'s shared memory to out
// (row-major, K along a row).
void load_smem_operand(const Cta& cta, const MmaForm& f, std::uint64_t descriptor, const char* name,
                       bool mn_major, std::uint32_t code, double negate, std::uint32_t rows,
                       std::vector<double>& out) {
  const SmemMatrix d = decode_smem_descriptor(descriptor, name);
  const std::vector<std::byte>& shared = cta.shared;
  const std::uint32_t bytes = std::max<std::uint32_t>(1, f.element_bits / 8);
  const std::size_t base = out.size();
  out.resize(base + std::size_t{rows} * f.k);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t k = 0; k < f.k; ++k) {
      const bool nibble = f.element_bits == 4;
      const std::uint64_t a = swizzle_address(
          d.start + smem_matrix_offset(d, mn_major, r, nibble ? k / 2 : k, bytes), d.swizzle);
      if (a + bytes > shared.size())
        throw SimError(std::string("operand ") + name + " element (" + std::to_string(r) + ", " +
                       std::to_string(k) + ") is at shared address " + hex(a) +
                       ", outside the CTA's " + std::to_string(shared.size()) +
                       " bytes of shared memory (descriptor " + hex(descriptor) + ")");
      auto raw = static_cast<std::uint32_t>(load_bytes(&shared[a], bytes));
      if (nibble) raw = (raw >> (4 * (k % 2))) & 0xF;
      out[base + std::size_t{r} * f.k + k] = negate * element_value(f, code, raw);
    }
}

// Appends 128 rows of A from tensor memory: row m in lane m, K packed along
// the columns.
void load_tmem_a(TensorMemory& tmem, const MmaForm& f, std::uint32_t address,
                 std::vector<double>& out) {
  const std::uint32_t lane0 = TensorMemory::lane_of(address),
                      column0 = TensorMemory::column_of(address);
  const std::uint32_t mask = f.element_bits == 32 ? ~0u : (1u << f.element_bits) - 1;
  const std::size_t base = out.size();
  out.resize(base + std::size_t{TensorMemory::kLanes} * f.k);
  for (std::uint32_t m = 0; m < TensorMemory::kLanes; ++m)
    for (std::uint32_t k = 0; k < f.k; ++k) {
      const std::uint32_t bit = k * f.element_bits;
      const std::uint32_t word = tmem.cell(lane0 + m, column0 + bit / 32, "tcgen05.mma's A");
      out[base + std::size_t{m} * f.k + k] =
          f.negate_a * element_value(f, f.a_code, (word >> (bit % 32)) & mask);
    }
}

// ---- the asynchronous operations ------------------------------------------------------

enum Value { kD, kA, kB, kIdesc, kScaleA, kScaleB, kEnable };

void run_mma(const PendingTcgen05& p, Cta& cta) {
  const Inst& in = *p.inst;
  const MmaForm f = decode_instruction_descriptor(in, static_cast<std::uint32_t>(p.values[kIdesc]));
  // Rows 128h .. 128h+127 of A and D, and B's rows N/parts*h onwards, are in part[h].
  const std::vector<Cta*> part = data_path_ctas(cta, in);
  std::vector<double> a, b;
  for (Cta* c : part) {
    if (in.trans)
      load_tmem_a(c->tmem, f, static_cast<std::uint32_t>(p.values[kA]), a);
    else
      load_smem_operand(*c, f, p.values[kA], "A", f.a_mn_major, f.a_code, f.negate_a,
                        TensorMemory::kLanes, a);
    load_smem_operand(*c, f, p.values[kB], "B", f.b_mn_major, f.b_code, f.negate_b,
                      f.n / static_cast<std::uint32_t>(part.size()), b);
  }

  const auto d = static_cast<std::uint32_t>(p.values[kD]);
  if (TensorMemory::lane_of(d) != 0)
    throw SimError("D address " + hex(d) + " has lane " + std::to_string(TensorMemory::lane_of(d)) +
                   "; D spans lanes 0-127 from lane 0");
  const std::uint32_t vec = std::max<std::uint32_t>(f.scale_vec, 1), block = f.k / vec;
  auto scale = [&](TensorMemory& tmem, std::uint32_t address, std::uint32_t lane,
                   std::uint32_t column, std::uint32_t byte, const char* what) {
    if (TensorMemory::lane_of(address) != 0)
      throw SimError(std::string(what) + " address " + hex(address) + " has lane " +
                     std::to_string(TensorMemory::lane_of(address)) +
                     "; the factors span lanes 0-127 from lane 0");
    const std::uint32_t word = tmem.cell(lane, TensorMemory::column_of(address) + column, what);
    return scale_value(f.ue8m0, (word >> (8 * byte)) & 0xFF);
  };
  for (std::uint32_t m = 0; m < f.m; ++m) {
    TensorMemory& tmem = part[m / TensorMemory::kLanes]->tmem;
    const std::uint32_t lane = m % TensorMemory::kLanes;
    for (std::uint32_t n = 0; n < f.n; ++n) {
      std::uint32_t& cell = tmem.cell(lane, TensorMemory::column_of(d) + n, "tcgen05.mma's D");
      double sum = p.values[kEnable] ? f32_of(cell) : 0.0;
      for (std::uint32_t j = 0; j < vec; ++j) {
        double part_sum = 0;
        for (std::uint32_t k = j * block; k < (j + 1) * block; ++k)
          part_sum += a[std::size_t{m} * f.k + k] * b[std::size_t{n} * f.k + k];
        if (f.scale_vec)
          part_sum *= scale(tmem, static_cast<std::uint32_t>(p.values[kScaleA]), lane, lane / 32,
                            f.sfa_id + j, "A's scale factors") *
                      scale(tmem, static_cast<std::uint32_t>(p.values[kScaleB]),
                            32 * (lane / 32) + n % 32, n / 32, f.sfb_id + j, "B's scale factors");
        sum += part_sum;
      }
      cell = static_cast<std::uint32_t>(bits_of(static_cast<float>(sum)));
    }
  }
}

// tcgen05.cp: rows of 128 or 256 bits from shared memory (row r, byte b at the
// descriptor's K-major position of element (r, b)) into tensor memory, one row
// per lane from the address's lane, or broadcast to 2 or 4 lane quarters.
void run_copy(const PendingTcgen05& p, Cta& cta) {
  const auto shape = static_cast<Tcgen05CopyShape>(p.inst->vec);
  const SmemMatrix d = decode_smem_descriptor(p.values[1], "the tcgen05.cp source");
  const auto taddr = static_cast<std::uint32_t>(p.values[0]);
  std::uint32_t rows = 128, bits = 128;
  std::vector<std::uint32_t> quarters = {0};  // lane offsets each row is written at
  switch (shape) {
    case Tcgen05CopyShape::rows128_bits256:
      bits = 256;
      break;
    case Tcgen05CopyShape::rows4_bits256:
      rows = 4, bits = 256;
      break;
    case Tcgen05CopyShape::rows128_bits128:
      break;
    case Tcgen05CopyShape::rows64_bits128_warpx2_02_13:
      rows = 64;
      break;  // rows 0-31 -> 0-31, 64-95
    case Tcgen05CopyShape::rows64_bits128_warpx2_01_23:
      rows = 64;
      break;  // rows 0-31 -> 0-31, 32-63
    case Tcgen05CopyShape::rows32_bits128_warpx4:
      rows = 32, quarters = {0, 32, 64, 96};
      break;
  }
  auto destinations = [&](std::uint32_t r) -> std::vector<std::uint32_t> {
    if (shape == Tcgen05CopyShape::rows64_bits128_warpx2_02_13)
      return {r % 32 + 32 * (r / 32), r % 32 + 32 * (r / 32) + 64};
    if (shape == Tcgen05CopyShape::rows64_bits128_warpx2_01_23)
      return {r % 32 + 64 * (r / 32), r % 32 + 64 * (r / 32) + 32};
    std::vector<std::uint32_t> out;
    for (std::uint32_t q : quarters) out.push_back(r + q);
    return out;
  };
  // With .cta_group::2, in each CTA of the pair from its own shared memory.
  for (Cta* c : data_path_ctas(cta, *p.inst)) {
    const std::vector<std::byte>& shared = c->shared;
    for (std::uint32_t r = 0; r < rows; ++r)
      for (std::uint32_t word = 0; word < bits / 32; ++word) {
        std::uint32_t value = 0;
        for (std::uint32_t byte = 0; byte < 4; ++byte) {
          const std::uint64_t a = swizzle_address(
              d.start + smem_matrix_offset(d, false, r, 4 * word + byte, 1), d.swizzle);
          if (a >= shared.size())
            throw SimError("tcgen05.cp source row " + std::to_string(r) + " byte " +
                           std::to_string(4 * word + byte) + " is at shared address " + hex(a) +
                           ", outside the CTA's " + std::to_string(shared.size()) +
                           " bytes of shared memory");
          value |= static_cast<std::uint32_t>(shared[a]) << (8 * byte);
        }
        for (std::uint32_t lane : destinations(r))
          c->tmem.cell(TensorMemory::lane_of(taddr) + lane, TensorMemory::column_of(taddr) + word,
                       "tcgen05.cp") = value;
      }
  }
}

// tcgen05.shift.down: rows lane .. lane+30 move down one row (8 columns, the
// implicit .31x256b shape); the row at lane+31 is overwritten.
void run_shift(const PendingTcgen05& p, Cta& cta) {
  const auto taddr = static_cast<std::uint32_t>(p.values[0]);
  const std::uint32_t lane0 = TensorMemory::lane_of(taddr),
                      column0 = TensorMemory::column_of(taddr);
  for (Cta* c : data_path_ctas(cta, *p.inst))  // with .cta_group::2, in each CTA of the pair
    for (std::uint32_t r = 31; r-- > 0;)
      for (std::uint32_t column = 0; column < 8; ++column)
        c->tmem.cell(lane0 + r + 1, column0 + column, "tcgen05.shift") =
            c->tmem.cell(lane0 + r, column0 + column, "tcgen05.shift");
}

// Runs, in issue order, the asynchronous operations `thread` issued.
void complete_pending(Cta& cta, std::uint32_t thread) {
  std::vector<PendingTcgen05> mine;
  std::erase_if(cta.tmem.pending, [&](const PendingTcgen05& p) {
    if (p.thread != thread) return false;
    mine.push_back(p);
    return true;
  });
  for (const PendingTcgen05& p : mine) {
    try {
      switch (static_cast<Tcgen05Op>(p.inst->mode)) {
        case Tcgen05Op::mma:
          run_mma(p, cta);
          break;
        case Tcgen05Op::cp:
          run_copy(p, cta);
          break;
        default:
          run_shift(p, cta);
          break;
      }
    } catch (const SimError& e) {
      throw SimError("running the " + p.inst->text + " of PTX line " +
                     std::to_string(p.inst->line) + " (issued by this thread): " + e.what());
    }
  }
}

void issue(const Inst& in, Warp& w, int lane) {
  PendingTcgen05 p{&in, w.index * 32 + static_cast<std::uint32_t>(lane), {}};
  data_path_ctas(*w.cta, in);  // a .cta_group::2 operation needs its peer CTA, not exited
  switch (static_cast<Tcgen05Op>(in.mode)) {
    case Tcgen05Op::mma: {
      const bool scaled = in.extent != 0;
      p.values[kD] = address_of(w, in.op0(0), lane);
      p.values[kA] = in.trans ? address_of(w, in.op0(1), lane) : read(w, in.op0(1), lane);
      p.values[kB] = read(w, in.op0(2), lane);
      p.values[kIdesc] = read(w, in.op0(3), lane);
      if (scaled) {
        p.values[kScaleA] = address_of(w, in.op0(4), lane);
        p.values[kScaleB] = address_of(w, in.op0(5), lane);
      }
      p.values[kEnable] = read(w, in.op0(scaled ? 6 : 4), lane) != 0;
      // Checked now, so that a bad descriptor names the issuing line.
      decode_instruction_descriptor(in, static_cast<std::uint32_t>(p.values[kIdesc]));
      if (!in.trans) decode_smem_descriptor(p.values[kA], "A");
      decode_smem_descriptor(p.values[kB], "B");
      break;
    }
    case Tcgen05Op::cp:
      p.values[0] = address_of(w, in.op0(0), lane);
      p.values[1] = read(w, in.op0(1), lane);
      decode_smem_descriptor(p.values[1], "the tcgen05.cp source");
      break;
    default:  // shift
      p.values[0] = address_of(w, in.op0(0), lane);
      if (TensorMemory::lane_of(static_cast<std::uint32_t>(p.values[0])) % 32 != 0)
        throw SimError(
            "tcgen05.shift at lane " +
            std::to_string(TensorMemory::lane_of(static_cast<std::uint32_t>(p.values[0]))) +
            "; its 32 rows start at a multiple of 32");
      break;
  }
  w.cta->tmem.pending.push_back(p);
}

void commit(const Inst& in, Warp& w, int lane) {
  complete_pending(*w.cta, w.index * 32 + static_cast<std::uint32_t>(lane));
  const std::uint64_t bar = address_of(w, in.op0(0), lane);
  if (!in.multicast) {
    mbarrier_arrive(access(w, lane, in.space, bar, 8, 8, true), 1);
    return;
  }
  const auto mask = static_cast<std::uint32_t>(read(w, in.op0(1), lane) & 0xFFFF);
  for_lanes(mask, [&](int rank) {
    const std::uint64_t remote =
        cluster_shared_address(static_cast<std::uint32_t>(rank), bar & kOffsetMask);
    mbarrier_arrive(access(w, lane, ptx::Space::shared, remote, 8, 8, true), 1);
  });
}

}  // namespace

bool exec_tcgen05_sync(const Inst& in, Warp& w, std::uint32_t active) {
  TensorMemory& tmem = w.cta->tmem;
  const int first = std::countr_zero(active);
  const std::uint32_t thread = w.index * 32 + static_cast<std::uint32_t>(first);
  bool wait = false;
  switch (static_cast<Tcgen05Op>(in.mode)) {
    case Tcgen05Op::alloc: {
      const auto columns =
          static_cast<std::uint32_t>(uniform(w, in.op0(1), active, "the column count", false));
      const std::uint64_t dst = uniform(w, in.op0(0), active, "the destination address", true);
      const std::uint32_t address = for_thread(first, [&] {
        return in.cta_pair ? pair_allocation(in, w, thread, 0, columns, wait)
                           : tmem.allocate(columns);
      });
      store_bytes(access(w, first, in.space, dst, 4, 4, true), 4, address);
      return !wait;
    }
    case Tcgen05Op::dealloc: {
      const auto taddr =
          static_cast<std::uint32_t>(uniform(w, in.op0(0), active, "the address", false));
      const auto columns =
          static_cast<std::uint32_t>(uniform(w, in.op0(1), active, "the column count", false));
      for_thread(first, [&] {
        if (in.cta_pair)
          pair_allocation(in, w, thread, taddr, columns, wait);
        else
          tmem.deallocate(taddr, columns);
      });
      return !wait;
    }
    case Tcgen05Op::relinquish:
      for_thread(first, [&] {
        if (in.cta_pair)
          pair_allocation(in, w, thread, 0, 0, wait);
        else
          tmem.relinquish(in.line);
      });
      return !wait;
    case Tcgen05Op::ld:
    case Tcgen05Op::st:
      load_store(in, w, active, static_cast<Tcgen05Op>(in.mode) == Tcgen05Op::ld);
      return true;
    default:  // wait::ld / wait::st: loads and stores complete at issue
      return true;
  }
}

bool waits_for_peer_warp(const Warp& w) {
  const std::deque<PairRequest>& mine = w.cta->tmem.unmatched;
  return std::any_of(mine.begin(), mine.end(),
                     [&](const PairRequest& r) { return r.thread / 32 == w.index; });
}

void exec_tcgen05(const Inst& in, Warp& w, std::uint32_t active) {
  const auto op = static_cast<Tcgen05Op>(in.mode);
  if (op == Tcgen05Op::fence)
    return;  // the simulator runs each thread's tcgen05 operations in order
  for_lanes(active, [&](int lane) {
    for_thread(lane, [&] {
      if (op == Tcgen05Op::commit)
        commit(in, w, lane);
      else
        issue(in, w, lane);
    });
  });
}

void check_tensor_memory_released(const Cta& cta) {
  if (!cta.tmem.holds_allocations()) return;
  throw SimError("kernel '" + cta.launch->kernel.name + "', block (" + std::to_string(cta.ctaid.x) +
                 "," + std::to_string(cta.ctaid.y) + "," + std::to_string(cta.ctaid.z) +
                 "): every thread exited with tensor memory still allocated (" +
                 cta.tmem.describe_allocations() +
                 "); a kernel deallocates all it allocates (tcgen05.dealloc) before it exits");
}

}  // namespace warpforge::sim
