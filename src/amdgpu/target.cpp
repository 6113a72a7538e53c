#include "warpforge/amdgpu/target.hpp"

#include "warpforge/error.hpp"

namespace warpforge::amdgpu {

std::string to_string(Target t) {
  return t == Target::gfx90a ? "gfx90a" : "gfx942";
}

std::optional<Target> parse_target(const std::string& name) {
  if (name == "gfx90a") return Target::gfx90a;
  if (name == "gfx942") return Target::gfx942;
  return std::nullopt;
}

const char* accepted_targets() {
  return "gfx90a, gfx942";
}

Target require_target(const std::string& name) {
  if (auto t = parse_target(name)) return *t;
  throw TargetError("unknown AMDGPU target '" + name + "'; accepted: " + accepted_targets());
}

}  // namespace warpforge::amdgpu
