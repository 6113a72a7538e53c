// A state-space variable declaration (PTX ISA 5.1 "State Spaces", 5.4
// "Variables"): registers, shared/local/global/const buffers, and parameters
// (kernel and function parameters are variables in the .param space).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/ptx/operand.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::ptx {

// State spaces (PTX ISA 5.1); `generic` is no declaration's space but the
// space of an instruction that names none (addresses resolved per access, 6.4.1).
enum class Space : std::uint8_t { reg, sreg, const_, global, local, param, shared, tex, generic };
std::string_view name(Space s);  // "reg", "shared", "const" ..., "generic"

enum class Linkage : std::uint8_t { none, visible, extern_, weak, common };
std::string_view name(Linkage l);  // "" for none, else "visible", "extern" ...

// An initializer: a scalar operand, or a braced list of initializers.
struct Initializer {
  std::optional<Operand> value;      // set for a scalar
  std::vector<Initializer> elements;  // set for a braced list
  friend bool operator==(const Initializer&, const Initializer&) = default;
};

struct Variable {
  Space space = Space::reg;
  Linkage linkage = Linkage::none;
  Type type = Type::b32;
  std::string name;
  int align = 0;                                 // .align N; 0 = not written
  int vector_width = 0;                          // .v2/.v4; 0 = scalar
  std::optional<int> range;                      // %r<N>: declares %r0 .. %r(N-1)
  std::vector<std::optional<std::int64_t>> dims;  // [N] or [] for each array dimension
  std::optional<Initializer> init;
  // Kernel-parameter pointer attributes (PTX ISA 5.1.6.4): .ptr [.space] [.align N]
  bool ptr = false;
  std::optional<Space> ptr_space;
  int ptr_align = 0;
  // Variable attributes (PTX ISA 5.4.8 ".attribute"): "managed", or
  // "unified(hi, lo)" with the two 64-bit halves of the UUID as written.
  std::vector<std::string> attributes;

  // Size in bytes of the whole variable (element bits × vector × array dims);
  // throws PtxError for unsized arrays ([]).
  std::int64_t size_bytes() const;

  friend bool operator==(const Variable&, const Variable&) = default;
};

}  // namespace warpforge::ptx
