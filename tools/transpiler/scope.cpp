#include "transpiler/scope.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace warpforge::transpiler {

void Scope::add_range(const std::string& prefix, int count, ptx::Type type, const std::string& cpp_name) {
  frames_.back().ranges.push_back({prefix, count, type, cpp_name});
}

void Scope::add_scalar(const std::string& name, ptx::Type type, const std::string& cpp_name) {
  frames_.back().scalars[name] = RegHandle{Code(cpp_name), type};
}

std::optional<RegHandle> Scope::find(const std::string& ptx_name) const {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
    if (auto it = frame->scalars.find(ptx_name); it != frame->scalars.end()) return it->second;
    for (const auto& r : frame->ranges) {
      if (ptx_name.size() <= r.prefix.size() || ptx_name.compare(0, r.prefix.size(), r.prefix) != 0) continue;
      std::string_view digits(ptx_name.data() + r.prefix.size(), ptx_name.size() - r.prefix.size());
      // %r<N> declares %r0 .. %r(N-1), written without leading zeros.
      if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
          (digits.size() > 1 && digits[0] == '0'))
        continue;
      int index = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec != std::errc() || end != digits.data() + digits.size() || index >= r.count) continue;
      return RegHandle{Code(r.cpp + "[") + Code::hole(index) + Code("]"), r.type};
    }
  }
  return std::nullopt;
}

}  // namespace warpforge::transpiler
