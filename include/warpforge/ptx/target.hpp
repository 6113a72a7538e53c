// The GPU targets warpforge emits for, and the PTX ISA version each one gets
// (PTX ISA 13 "Release Notes": the first version that has the target and every
// instruction warpforge wraps for it).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace warpforge::ptx {

enum class Target { sm_80, sm_89, sm_90a, sm_100a };

struct PtxVersion {
  int major;
  int minor;
};

std::string_view name(Target t);                        // "sm_90a"
std::optional<Target> parse_target(std::string_view s);  // inverse of name()
int sm_number(Target t);                                // 80, 89, 90, 100
bool arch_specific(Target t);                           // the 'a' targets
PtxVersion ptx_version(Target t);
const std::vector<Target>& all_targets();

}  // namespace warpforge::ptx
