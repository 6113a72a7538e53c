#include "row_launch.hpp"

#include "row_views.hpp"

#include <algorithm>

namespace warpforge::ops::rows {

std::int64_t resident_groups(const RowShape& shape, std::int64_t groups, runtime::Module& module,
                             const std::string& kernel, std::uint32_t dynamic_shared_bytes) {
  if (shape.ctas == 1) return groups;
  runtime::LaunchConfig config = row_launch(shape, groups);
  config.dynamic_shared_bytes = dynamic_shared_bytes;
  return std::min<std::int64_t>(groups, std::max(1, module.max_active_clusters(kernel, config)));
}

void append_args(std::vector<runtime::Arg>& args, std::initializer_list<const runtime::TensorView*> views) {
  for (const runtime::TensorView* v : views)
    if (v) args.emplace_back(*v);
}

std::string describe_op(const std::string& op, const std::string& problem, const std::vector<std::string>& refusals,
                        const RowShape& shape, const RowShapeRequest& request, std::size_t workspace_bytes) {
  if (!refusals.empty()) return op + " refuses " + problem + ":" + join(refusals);
  std::string s = op + " " + problem + ": kernel " + std::string(shape.span()) + " (" + shape.describe() +
                  "), workspace " + std::to_string(workspace_bytes) + " bytes";
  for (const std::string& why : narrower_spans_passed_over(shape, request)) s += "\n  " + why;
  return s;
}

void check_workspace(const runtime::TensorView* given, std::size_t needed, bool caller,
                     const runtime::Device& device, const std::string& op, std::vector<std::string>& why) {
  if (!given) {
    if (needed && caller)
      why.push_back("no workspace given: with caller_workspace, execute() needs one of " + std::to_string(needed) +
                    " bytes (workspace_bytes())");
    return;
  }
  if (!(given->device() == device))
    why.push_back("the workspace is on " + given->device().describe() + ": " + op + " was built for " +
                  device.describe());
  else if (!given->is_contiguous() || given->extent_bytes() < needed)
    why.push_back("the workspace is " + given->describe() + ": it must be contiguous, of " + std::to_string(needed) +
                  " bytes or more (workspace_bytes())");
  else if (given->address() % 16 != 0)
    why.push_back("the workspace starts at an address that is not 16-byte aligned");
}

runtime::DevicePtr workspace_address(const runtime::TensorView* given, const std::optional<runtime::Buffer>& own) {
  if (given) return given->address();
  return own ? own->address() : 0;
}

}  // namespace warpforge::ops::rows
