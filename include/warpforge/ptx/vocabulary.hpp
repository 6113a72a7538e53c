// The PTX instructions (PTX ISA 9.7, through ISA 9.0): for each opcode, its
// spelling, how many operands it takes, the modifier classes it accepts
// (modifiers.hpp) and the targets that have it. The one table of the ISA:
// the IR stores an Opcode, the parser reads spellings into it (and refuses
// any other), the DSL checks `inst()` against it, the simulator's decoder
// and the transpiler switch on it, and the differential harness enumerates
// from it the opcode and modifier combinations it must cover.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "warpforge/ptx/availability.hpp"
#include "warpforge/ptx/modifiers.hpp"

namespace warpforge::ptx {

// Every opcode, once, in the order of the enumeration (X(name) each; names
// that are C++ keywords end in an underscore): Opcode below is made from this
// list, and so is the simulator's sim::Op (src/sim/program.hpp), whose first
// values are Opcode's.
// clang-format off
#define WARPFORGE_PTX_OPCODES(X) \
  /* integer and bit manipulation (9.7.1, 9.7.2, 9.7.5, 9.7.6) */ \
  X(mov) X(add) X(sub) X(mul) X(mad) X(div) X(rem) X(abs) X(neg) X(min) X(max) X(and_) \
  X(or_) X(xor_) X(not_) X(cnot) X(shl) X(shr) X(lop3) X(prmt) X(bfe) X(bfi) X(popc) X(clz) \
  X(brev) X(addc) X(subc) X(madc) X(mul24) X(mad24) X(sad) X(bfind) X(fns) X(bmsk) X(szext) \
  X(dp4a) X(dp2a) X(shf) \
  /* comparison and selection (9.7.7) */ \
  X(setp) X(selp) X(set) X(slct) \
  /* floating point (9.7.3, 9.7.4) and conversion (9.7.9.21-22) */ \
  X(fma) X(rcp) X(sqrt) X(rsqrt) X(ex2) X(lg2) X(sin) X(cos) X(tanh) X(testp) X(copysign) \
  X(cvt) X(cvta) \
  /* memory (9.7.9, 9.7.13) */ \
  X(ld) X(ldu) X(st) X(atom) X(red) X(cp) X(mbarrier) X(prefetch) X(prefetchu) X(mapa) \
  X(getctarank) X(isspacep) X(applypriority) X(discard) X(createpolicy) X(multimem) \
  X(tensormap) \
  /* synchronization (9.7.13) */ \
  X(bar) X(barrier) X(membar) X(fence) X(nanosleep) X(griddepcontrol) X(clusterlaunchcontrol) \
  /* warp collectives and matrices (9.7.8, 9.7.14, 9.7.15) */ \
  X(shfl) X(vote) X(redux) X(activemask) X(elect) X(match) X(mma) X(wmma) X(ldmatrix) \
  X(stmatrix) X(movmatrix) X(wgmma) X(setmaxnreg) \
  /* 9.7.16: tensor memory and the fifth-generation tensor core */ \
  X(tcgen05) \
  /* textures and surfaces (9.7.10, 9.7.11) */ \
  X(tex) X(tld4) X(txq) X(istypep) X(suld) X(sust) X(sured) X(suq) \
  /* stack (9.7.17) and video (9.7.18) instructions */ \
  X(stacksave) X(stackrestore) X(alloca) X(vadd) X(vsub) X(vabsdiff) X(vmin) X(vmax) X(vshl) \
  X(vshr) X(vmad) X(vset) X(vadd2) X(vsub2) X(vavrg2) X(vabsdiff2) X(vmin2) X(vmax2) X(vset2) \
  X(vadd4) X(vsub4) X(vavrg4) X(vabsdiff4) X(vmin4) X(vmax4) X(vset4) \
  /* control flow (9.7.12) and the miscellaneous (9.7.19) */ \
  X(bra) X(brx) X(call) X(ret) X(exit) X(trap) X(brkpt) X(pmevent)
// clang-format on

#define WARPFORGE_PTX_OPCODE_ENUMERATOR(name) name,
enum class Opcode : std::uint8_t { WARPFORGE_PTX_OPCODES(WARPFORGE_PTX_OPCODE_ENUMERATOR) };
#undef WARPFORGE_PTX_OPCODE_ENUMERATOR
#define WARPFORGE_PTX_OPCODE_COUNT(name) +1
inline constexpr int kOpcodeCount = 0 WARPFORGE_PTX_OPCODES(WARPFORGE_PTX_OPCODE_COUNT);
#undef WARPFORGE_PTX_OPCODE_COUNT

// Operand counts include the destination; a vector {a, b} or an address [a]
// counts as one.
struct Arity {
  int min;
  int max;
};

struct OpcodeInfo {
  Opcode opcode;
  std::string_view name;  // "mma"
  Arity arity;
  ModifierClasses modifiers;
  Availability availability;  // of the opcode's oldest form; some forms need more (the DSL's
                              // wrappers say which)
};

// Every opcode, in the order of the enum.
std::span<const OpcodeInfo> vocabulary();
const OpcodeInfo& info(Opcode op);
std::string_view name(Opcode op);
// nullptr for a spelling that is no opcode of the table.
const OpcodeInfo* find_opcode(std::string_view name);
// The enumerator's name ("and_"), for code that writes C++.
std::string_view enumerator(Opcode op);

}  // namespace warpforge::ptx
