// The PTX instructions warpforge knows (PTX ISA 9.7): for each opcode, its
// spelling, how many operands it takes, the modifier classes it accepts
// (modifiers.hpp) and the targets that have it. The one table of the ISA:
// the DSL checks `inst()` against it, the simulator's decoder looks opcodes
// and modifiers up in it, and the differential harness enumerates from it
// the opcode and modifier combinations it must cover.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "warpforge/ptx/availability.hpp"
#include "warpforge/ptx/modifiers.hpp"

namespace warpforge::ptx {

enum class Opcode : std::uint8_t {
  // integer and bit manipulation (9.7.1, 9.7.2, 9.7.5, 9.7.6)
  mov,
  add,
  sub,
  mul,
  mad,
  div,
  rem,
  abs,
  neg,
  min,
  max,
  and_,
  or_,
  xor_,
  not_,
  cnot,
  shl,
  shr,
  lop3,
  prmt,
  bfe,
  bfi,
  popc,
  clz,
  brev,
  // comparison and selection (9.7.7)
  setp,
  selp,
  // floating point (9.7.3, 9.7.4) and conversion (9.7.9.21-22)
  fma,
  rcp,
  sqrt,
  rsqrt,
  ex2,
  lg2,
  sin,
  cos,
  tanh,
  cvt,
  cvta,
  // memory (9.7.9, 9.7.13)
  ld,
  ldu,
  st,
  atom,
  red,
  cp,
  mbarrier,
  prefetch,
  prefetchu,
  mapa,
  // synchronization (9.7.13)
  bar,
  barrier,
  membar,
  fence,
  nanosleep,
  // warp collectives and matrices (9.7.8, 9.7.14, 9.7.15)
  shfl,
  vote,
  redux,
  activemask,
  elect,
  mma,
  wmma,
  ldmatrix,
  stmatrix,
  wgmma,
  setmaxnreg,
  tcgen05,  // 9.7.16: tensor memory and the fifth-generation tensor core
  // textures and surfaces (9.7.10, 9.7.11)
  tex,
  tld4,
  txq,
  suld,
  sust,
  suq,
  // control flow (9.7.12)
  bra,
  call,
  ret,
  exit,
  trap,
};

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

}  // namespace warpforge::ptx
