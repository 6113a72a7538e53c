// The fragment atoms `warpforge layout` can draw, by name: every operand of
// the mma.sync, ldmatrix, wgmma and MFMA atoms that layout/ defines.
#pragma once

#include <string>
#include <vector>

#include "warpforge/layout/fragment.hpp"

namespace warpforge::pictures {

struct AtomEntry {
  std::string name;         // "mma.m16n8k16.A"
  std::string description;  // one line: instruction, operand, tile
};

// Every atom by name, in a fixed order; wgmma's accumulator is listed for a
// few N and taken for any (see find_atom).
std::vector<AtomEntry> atom_catalogue();

// The atom named `name`, or wgmma.m64n<N>k16.D for any N wgmma accepts.
// Throws LayoutError for an unknown name, listing the names.
layout::Fragment find_atom(const std::string& name);

}  // namespace warpforge::pictures
