// What the ops share for checking and describing tensor views: a shape or
// strides as messages write them, and what execute() compares against the
// views an op was built with (GemmAmax, GroupedGemm, Attention).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// "(2, 3, 4)".
inline std::string dims(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

// Everything of a view but its data (and device): what execute() compares.
struct ViewDescription {
  runtime::DType dtype;
  std::vector<std::int64_t> shape, strides;
  friend bool operator==(const ViewDescription&, const ViewDescription&) = default;
};
inline std::optional<ViewDescription> view_description(const runtime::TensorView* v) {
  if (!v) return std::nullopt;
  return ViewDescription{v->dtype(), v->shape(), v->strides()};
}

}  // namespace warpforge::ops
