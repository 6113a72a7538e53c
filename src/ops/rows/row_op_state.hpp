// What a row op's class keeps around its one kernel: the device, the
// refusals, the views it was built from (to hold execute()'s to them), the
// launch shape, and the compiled module; describe(), compile() and the
// checks of execute() in one voice for every op.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "row_shape.hpp"
#include "row_views.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops::rows {

struct RowOpState {
  explicit RowOpState(runtime::Device d) : device(std::move(d)) {}

  runtime::Device device;
  std::vector<std::string> refusals;
  ViewChecks views;
  std::string problem;  // the problem as describe() names it
  RowShape shape;
  RowShapeRequest request;
  std::optional<runtime::Module> module;

  // "<op> <problem>: kernel <span> (<shape>), workspace N bytes", and why the
  // narrower spans were not taken; or the refusals.
  std::string describe(const std::string& op, std::size_t workspace_bytes = 0) const;
  // Builds the module once; OpsError listing the refusals where there are some.
  void compile(const std::string& op, const std::function<ptx::Module()>& build);
  // OpsError naming every way `given` differs from the construction's views.
  void check_views(const std::string& op, std::initializer_list<const runtime::TensorView*> given) const;
};

// The alignment a kernel's accesses assume of a row tensor's base address.
inline int vector_alignment(const RowShape& s, const std::optional<RowMatrix>& m) {
  return m ? std::min(16, s.vector * m->bytes()) : 0;
}

}  // namespace warpforge::ops::rows
