// Helpers shared by the instruction wrappers (private to src/dsl): the
// vocabulary's enumerators under short names, the types instructions take.
#pragma once

#include <string>

#include "warpforge/ptx/instruction.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::dsl::detail {

using O = ptx::Opcode;
using M = ptx::Mod;
using ptx::mod;

// Arithmetic needs a typed integer: a bit type of width N reads as uN.
inline ptx::Type arith_type(ptx::Type t) {
  switch (t) {
    case ptx::Type::b16: return ptx::Type::u16;
    case ptx::Type::b32: return ptx::Type::u32;
    case ptx::Type::b64: return ptx::Type::u64;
    default: return t;
  }
}

// Logic and shifts left take a bit type of the same width.
inline ptx::Type bits_type(ptx::Type t) {
  switch (ptx::bits(t)) {
    case 16: return ptx::Type::b16;
    case 32: return ptx::Type::b32;
    case 64: return ptx::Type::b64;
    default: return t;
  }
}

inline std::string type_name(ptx::Type t) { return std::string(ptx::name(t)); }

}  // namespace warpforge::dsl::detail
