// The AMD CDNA processors the backend compiles for (LLVM's -mcpu names; see
// LLVM's AMDGPUUsage, "Processors"): gfx90a (CDNA2, MI200) and gfx942 (CDNA3,
// MI300). Both are wave64 with MFMA and LDS of 64 KiB per workgroup.
#pragma once

#include <optional>
#include <string>

namespace warpforge::amdgpu {

enum class Target { gfx90a, gfx942 };

std::string to_string(Target t);
std::optional<Target> parse_target(const std::string& name);
// Parses or throws a TargetError naming the value and the accepted targets.
Target require_target(const std::string& name);
const char* accepted_targets();  // "gfx90a, gfx942"

}  // namespace warpforge::amdgpu
