// The simulator's pre-decoded form of a kernel: what load() makes of the PTX IR
// so that launch() never looks at a string. Registers are slots, opcodes and
// modifiers are enums and flags, labels are instruction indices (PCs),
// immediates are bit patterns of the operand's type, symbols are addresses in
// their state space.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "warpforge/ptx/modifiers.hpp"
#include "warpforge/ptx/special_register.hpp"
#include "warpforge/ptx/types.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::sim {

// What an instruction executes: first every opcode of the vocabulary
// (WARPFORGE_PTX_OPCODES, include/warpforge/ptx/vocabulary.hpp), with
// ptx::Opcode's values, for the opcodes whose instructions all execute one
// way (decode_forms.cpp's table runs ldu as ld; membar, nanosleep and
// prefetch as fence; a kernel's ret as exit; call and ret are a device
// function's call and return; what it refuses never reaches an Inst); then
// the forms of the opcodes whose modifiers pick among several operations
// (bar, barrier, cp, tcgen05), and the simulator's own operations. Who runs
// each is operations.cpp's. Modes: wmma's extent holds a WmmaOp, wgmma's
// mode a WgmmaOp, mbarrier's a MbarrierOp, tcgen05's a Tcgen05Op.
#define WARPFORGE_SIM_OP(name) name,
enum class Op : std::uint8_t {
  WARPFORGE_PTX_OPCODES(WARPFORGE_SIM_OP)
  // cp.async (PTX ISA 9.7.9.25)
  cp_async,
  cp_async_commit,
  cp_async_wait_group,
  cp_async_wait_all,
  // bar.sync, barrier.sync and friends (9.7.13.1); barrier.cluster (9.7.13.3)
  bar_sync,
  bar_arrive,
  bar_warp_sync,
  cluster_arrive,
  cluster_wait,
  // the tensor memory accelerator and bulk copies
  tensor_copy,  // cp.async.bulk.tensor; mode: TensorCopyDir
  bulk_copy,  // cp.async.bulk.shared::cluster.shared::cta (shared memory into a CTA of the cluster)
  bulk_reduce,  // cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 (queued in the bulk group)
  bulk_commit,  // cp.async.bulk.commit_group
  bulk_wait,    // cp.async.bulk.wait_group[.read]
  // tcgen05's .sync.aligned warp-wide operations (alloc, dealloc, relinquish,
  // ld, st, wait); the single-thread ones (mma, cp, shift, commit, fence) are
  // Op::tcgen05 (tcgen05.cpp)
  tcgen05_sync,
  // device-side printf: a call of vprintf(format, arguments) (the CUDA ABI's printf)
  vprintf,
  // an argument or return value copied between a device function call's
  // frames (decode_calls.cpp); the last (operations.cpp sizes its table by it)
  frame_copy,
};
#undef WARPFORGE_SIM_OP
static_assert(static_cast<int>(Op::cp_async) == ptx::kOpcodeCount,
              "Op's first values are ptx::Opcode's");

// The operation of an opcode that executes as itself.
constexpr Op op_of(ptx::Opcode opcode) {
  return static_cast<Op>(opcode);
}

// The vocabulary's enumerations (ptx/modifiers.hpp, ptx/special_register.hpp).
// An access's state space: generic addresses are resolved per access (PTX ISA
// 6.4.1 "Generic Addressing").
using ptx::AtomOp;
using ptx::BoolOp;
using ptx::Cmp;
using ptx::MmaShape;
using ptx::MulMode;
using ptx::Rounding;
using ptx::ShflMode;
using ptx::Space;
using ptx::SReg;
using ptx::VoteMode;

// One scalar operand. An address operand [base+offset] is an Arg whose value
// (register or immediate) plus `offset` is the address.
struct Arg {
  // shared_symbol: a shared variable's address, `bits` plus the reading
  // CTA's Cta::shared_tag (it differs between the CTAs of a cluster).
  enum class Kind : std::uint8_t { sink, reg, imm, sreg, shared_symbol };
  Kind kind = Kind::sink;
  bool negated = false;  // !%p
  SReg sreg = SReg::tid_x;
  std::uint32_t slot = 0;
  std::uint64_t bits = 0;
  std::int64_t offset = 0;
};

// Operation-specific sub-modes, kept in Inst::mode: Cmp, MulMode, ShflMode,
// VoteMode, AtomOp, MmaShape above, and these.

// An f32 fma that stands for a product (mul.f32 a·b, or div.full.f32 a/b,
// the product a·rcp(b)) and the add or sub of it and c that ptxas contracts
// with it (contraction.hpp): its operands are a, b, c; Inst::mode is the
// form, with kContractedQuotient for div.full's product.
enum class ContractedSum : std::uint8_t {
  none,
  product_plus_addend,   // p + c, c + p
  product_minus_addend,  // p - c
  addend_minus_product,  // c - p
};
constexpr std::uint8_t kContractedQuotient = 4;
enum class MbarrierOp : std::uint8_t {
  init,
  arrive,
  arrive_expect_tx,
  expect_tx,
  complete_tx,
  test_wait,
  try_wait,
  cp_async_arrive,
  inval
};

enum class WgmmaOp : std::uint8_t { fence, commit_group, wait_group, mma_async };
// tensormap (PTX ISA 9.7.9.27-28): Inst::mode holds the TensormapOp and, for
// replace, Inst::extent the field (TensorMapField, tensor_map_encoding.hpp).
enum class TensormapOp : std::uint8_t { replace, cp_fenceproxy };
// wmma (PTX ISA 9.7.14.4): Inst::mode holds the MmaShape and Inst::vec the
// layouts, bit 0 set for .col in the first (a load's or store's only
// layout, or mma's A layout) and bit 1 for .col in mma's B layout.
enum class WmmaOp : std::uint8_t { load_a, load_b, load_c, mma, store_d };
// tcgen05 operations (PTX ISA 9.7.16). For mma, Inst::vec holds the
// Tcgen05Kind, Inst::extent the .scale_vec (0 without block scaling, else 1,
// 2 or 4) and Inst::trans whether A is in tensor memory; for ld and st, vec
// holds the Tcgen05Shape and extent the .num; for cp, vec holds the
// Tcgen05CopyShape; for commit, multicast marks .multicast::cluster; cta_pair
// marks .cta_group::2 on every instruction that names a .cta_group.
enum class Tcgen05Op : std::uint8_t {
  alloc,
  dealloc,
  relinquish,
  ld,
  st,
  wait,
  mma,
  cp,
  shift,
  commit,
  fence
};
enum class Tcgen05Kind : std::uint8_t { f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };
enum class Tcgen05Shape : std::uint8_t {
  lanes32_bits32,
  lanes16_bits64,
  lanes16_bits128,
  lanes16_bits256
};
enum class Tcgen05CopyShape : std::uint8_t {
  rows128_bits256,
  rows4_bits256,
  rows128_bits128,
  rows64_bits128_warpx2_02_13,
  rows64_bits128_warpx2_01_23,
  rows32_bits128_warpx4
};
// shared_to_global_add: cp.reduce.async.bulk.tensor's .add (PTX ISA 9.7.9.25.5.2).
enum class TensorCopyDir : std::uint8_t { global_to_shared, shared_to_global, shared_to_global_add };

// Device function calls run in copies of the function's body, one per call
// depth (decode.cpp's collect_call), to this depth; a call deeper than that
// (recursion) decodes to a trap with mode kTrapCallDepth, an error if a
// thread reaches it.
constexpr int kMaxCallDepth = 24;
constexpr std::uint8_t kTrapCallDepth = 1;

struct Inst {
  Op op = Op::mov;
  std::array<ptx::Type, 4> types{};  // type modifiers in written order
  std::uint8_t ntypes = 0;
  Space space = Space::generic;
  Rounding rounding = Rounding::none;
  bool integral = false;  // .rni/.rzi/.rmi/.rpi
  bool ftz = false, sat = false, satfinite = false, relu = false, trans = false, to = false;
  bool approx = false;    // .approx (not .full): the H100's rule where one is modelled
  bool parity = false;    // mbarrier waits on a phase parity; cp.async.mbarrier.arrive .noinc
  bool widen = false;     // ld of a signed type into 64-bit registers: sign-extends to 64 bits
  std::uint8_t vec = 1;   // .v2/.v4; ldmatrix/stmatrix .x1/.x2/.x4; wgmma.mma_async: K of m64nNkK
  std::uint8_t mode = 0;  // Cmp, MulMode, ShflMode, VoteMode, AtomOp, MmaShape, MbarrierOp
  BoolOp combine = BoolOp::none;
  std::uint32_t target = 0;  // bra: destination PC
  std::uint16_t extent = 0;  // wgmma.mma_async: N of m64nNk*; cp.async.bulk.tensor: the rank
  bool multicast = false;    // cp.async.bulk.tensor .multicast::cluster
  bool cta_pair = false;     // tcgen05 .cta_group::2 (the CTA pair of a cluster)
  bool guarded = false;
  Arg guard;
  // Operands in PTX order; a vector {a, b} or a pair p|q is one operand of
  // several parts.
  std::vector<std::vector<Arg>> ops;
  int line = 0;      // line in ptx::emit(module)
  std::string text;  // the instruction as emitted, for messages
  std::uint32_t source = 0;  // Kernel::sources index of its .loc position (0: none)

  ptx::Type type() const { return types[0]; }
  const Arg& op0(std::size_t i) const { return ops[i][0]; }
};

struct ParamInfo {
  std::string name;
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

// A variable the kernel names by symbol, resolved to its state space address.
struct SymbolInfo {
  Space space = Space::global;
  std::uint64_t address = 0;
};

struct Kernel {
  std::string name;
  std::vector<Inst> code;
  std::uint32_t register_slots = 0;
  std::vector<ParamInfo> params;
  std::uint32_t param_bytes = 0;
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t dynamic_shared_offset = 0;  // where `.extern .shared` arrays start
  std::uint32_t local_bytes = 0;            // per thread
  // "file:line:column" of the PTX's .loc directives (source_lines.hpp); [0] is "".
  std::vector<std::string> sources;
};

}  // namespace warpforge::sim
