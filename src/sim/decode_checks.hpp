// Internal: the checks of a decoded instruction's operands (their count,
// their parts, the immediates that must be), for decode.cpp. Each returns
// why the instruction is not simulated as written, or "".
#pragma once

#include <string>

#include "program.hpp"

namespace warpforge::sim {

// `cache_hint`: the instruction has .L2::cache_hint, whose 64-bit policy
// operand comes last.
std::string check_operands(const Inst& d, bool cache_hint);

}  // namespace warpforge::sim
