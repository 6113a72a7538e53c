// What the row ops' classes share around their kernels: optional tensors as
// launch arguments, describe()'s text, and the caller's or the op's workspace.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "row_shape.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/kernel_arg.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops::rows {

inline const runtime::TensorView* optional_view(const std::optional<runtime::TensorView>& v) {
  return v ? &*v : nullptr;
}

// Appends the views that are there (not null) as kernel arguments: the
// kernels declare a parameter for each tensor of the problem, in its order.
void append_args(std::vector<runtime::Arg>& args, std::initializer_list<const runtime::TensorView*> views);

// "<op> <problem>: kernel <span> (<shape>), workspace N bytes" and why the
// narrower spans were not taken; or the refusals.
std::string describe_op(const std::string& op, const std::string& problem, const std::vector<std::string>& refusals,
                        const RowShape& shape, const RowShapeRequest& request, std::size_t workspace_bytes);

// Appends why `given` cannot serve as a workspace of `needed` bytes (or why
// none was given where the op owns none: `caller`).
void check_workspace(const runtime::TensorView* given, std::size_t needed, bool caller,
                     const runtime::Device& device, const std::string& op, std::vector<std::string>& why);
// The row groups a persistent launch of `kernel` in `shape` takes: `groups`,
// or for a row a cluster no more than the device keeps resident at once
// (runtime::Module::max_active_clusters). A GPC holds a whole number of
// clusters, so fewer fit than SMs / the cluster's SMs; a group more would
// run its rows after the others finished theirs: twice the time.
std::int64_t resident_groups(const RowShape& shape, std::int64_t groups, runtime::Module& module,
                             const std::string& kernel, std::uint32_t dynamic_shared_bytes = 0);

// The workspace an execution uses: the caller's, else the op's own (0 if none).
runtime::DevicePtr workspace_address(const runtime::TensorView* given, const std::optional<runtime::Buffer>& own);

}  // namespace warpforge::ops::rows
