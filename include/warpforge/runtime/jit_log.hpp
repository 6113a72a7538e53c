// Makes a PTX JIT log readable: ptxas names the lines it refuses as
// "ptxas application ptx input, line 12; error   : ..."; each such log line
// is followed by that line of the PTX text, quoted with its number.
#pragma once

#include <string>
#include <string_view>

namespace warpforge::runtime {

std::string explain_jit_log(std::string_view log, std::string_view ptx);

}  // namespace warpforge::runtime
