#include "row_op_state.hpp"

#include "row_launch.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops::rows {

std::string RowOpState::describe(const std::string& op, std::size_t workspace_bytes) const {
  return describe_op(op, problem, refusals, shape, request, workspace_bytes);
}

void RowOpState::compile(const std::string& op, const std::function<ptx::Module()>& build) {
  if (!refusals.empty()) throw OpsError(op + " refused " + problem + ":" + join(refusals));
  if (!module) module.emplace(device, build());
}

void RowOpState::check_views(const std::string& op, std::initializer_list<const runtime::TensorView*> given) const {
  const auto why = views.mismatches(given, device, op);
  if (!why.empty()) throw OpsError(op + "::execute refused:" + join(why));
}

}  // namespace warpforge::ops::rows
