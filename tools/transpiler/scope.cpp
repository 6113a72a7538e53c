#include "transpiler/scope.hpp"

#include "warpforge/ptx/scopes.hpp"

namespace warpforge::transpiler {

void Scope::add_range(const std::string& prefix, int count, ptx::Type type,
                      const std::string& cpp_name) {
  frames_.back().ranges.push_back({prefix, count, type, cpp_name});
}

void Scope::add_scalar(const std::string& name, ptx::Type type, const std::string& cpp_name) {
  frames_.back().scalars[name] = RegHandle{Code(cpp_name), type};
}

std::optional<RegHandle> Scope::find(const std::string& ptx_name) const {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
    if (auto it = frame->scalars.find(ptx_name); it != frame->scalars.end()) return it->second;
    for (const auto& r : frame->ranges)
      if (auto index = ptx::range_index(ptx_name, r.prefix, r.count))
        return RegHandle{Code(r.cpp + "[") + Code::hole(*index) + Code("]"), r.type};
  }
  return std::nullopt;
}

}  // namespace warpforge::transpiler
