// Priority-ordered dispatch over candidate implementations of a tile
// primitive. Each candidate states why it refuses the operands (an empty list
// means it fits); the first that fits emits. When none fits, the TileError
// lists every candidate with all of its reasons.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace warpforge::tile {

struct Candidate {
  std::string name;
  std::function<std::vector<std::string>()> refusals;
  std::function<void()> emit;
};

// Returns the name of the candidate that emitted.
std::string dispatch(const std::string& primitive, const std::vector<Candidate>& candidates);

}  // namespace warpforge::tile
