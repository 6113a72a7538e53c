// PTX's scoping of registers and labels in a function body: a `{ ... }` block
// opens a scope; what it declares (.reg registers, labels) is visible in it and
// in the blocks nested in it, and hides an outer declaration of the same name.
// One block may not declare a name twice (ptxas: "Duplicate definition");
// sibling blocks may each declare it (nvcc's inline assembly declares `%p1` in
// every asm block; Triton places `waitLoop:` in several). A use names the
// innermost visible declaration; a label inside a block is not visible outside
// it (ptxas: "Unknown symbol").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ptx/function.hpp"

namespace warpforge::ptx {

// The index of register `name` in the range `prefix<count>`, which declares
// prefix0 .. prefix(count-1) written without leading zeros (PTX ISA 5.4.1);
// nothing when `name` is not one of them.
std::optional<int> range_index(std::string_view name, std::string_view prefix, int count);

// The body of `f` with every register and label declaration renamed so that
// each name is declared once in the whole function, uses renamed to the
// declaration they name under the rules above: what a flat name table (the
// simulator's) needs. A declaration keeps its name unless one of the same name
// came before it in the body; later ones get `name$N` (ranges `prefix$N_<n>`).
// Problems (names declared twice in one block, registers used where none is
// visible, labels branched to from outside their block) are appended to
// `problems`, each starting "function <name>: ".
Block with_unique_names(const Function& f, std::vector<std::string>& problems);

}  // namespace warpforge::ptx
