#include "warpforge/ops/gemm_amax.hpp"

#include "../view_checks.hpp"
#include "gemm_amax_path.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops {
namespace {

using runtime::TensorView;


std::string join(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += "\n  - " + r;
  return s;
}

}  // namespace

SplitKWorkspace::SplitKWorkspace(const runtime::Device& device, std::size_t bytes, bool owned) : bytes_(bytes) {
  if (bytes_ && owned) {
    owned_.emplace(device, bytes_);
    owned_->fill(0);  // nothing waiting, counters at 0; every launch leaves them so
  }
}

void SplitKWorkspace::append_arg(std::vector<runtime::Arg>& args, const GemmAmaxOperands& o) const {
  if (!bytes_) return;
  if (o.workspace)
    args.emplace_back(*o.workspace);
  else
    args.emplace_back(*owned_);  // GemmAmax::execute refuses a run with neither
}

std::string describe_k_split(int splits, bool cluster) {
  std::string s = "K split " + std::to_string(splits) + " ways";
  if (splits == 1) return s;
  return s + (cluster ? " (a cluster of the splits adds their sums in shared memory)"
                      : " (their sums added through the workspace)");
}

runtime::DevicePtr SplitKWorkspace::address(const GemmAmaxOperands& o) const {
  if (!bytes_) return 0;
  return o.workspace ? o.workspace->address() : owned_->address();
}

std::string_view name(GemmAmaxKernel kernel) {
  switch (kernel) {
    case GemmAmaxKernel::automatic:
      return "auto";
    case GemmAmaxKernel::skinny:
      return "skinny";
    case GemmAmaxKernel::prepass:
      return "prepass";
    case GemmAmaxKernel::swapped:
      return "swapped";
    case GemmAmaxKernel::sm90a:
      return "sm90a";
    case GemmAmaxKernel::sm80:
      return "sm80";
    case GemmAmaxKernel::sm100a:
      return "sm100a";
    case GemmAmaxKernel::stream:
      return "stream";
  }
  return "?";
}

std::string_view name(GemmAmaxPrecision precision) {
  return precision == GemmAmaxPrecision::fast ? "fast" : "exact";
}

std::optional<GemmAmaxKernel> parse_gemm_amax_kernel(std::string_view text) {
  for (GemmAmaxKernel k : {GemmAmaxKernel::automatic, GemmAmaxKernel::skinny, GemmAmaxKernel::prepass,
                           GemmAmaxKernel::swapped, GemmAmaxKernel::sm90a, GemmAmaxKernel::sm80, GemmAmaxKernel::sm100a,
                           GemmAmaxKernel::stream})
    if (text == name(k)) return k;
  return std::nullopt;
}

std::optional<GemmAmaxPrecision> parse_gemm_amax_precision(std::string_view text) {
  for (GemmAmaxPrecision p : {GemmAmaxPrecision::exact, GemmAmaxPrecision::fast})
    if (text == name(p)) return p;
  return std::nullopt;
}

struct GemmAmax::State {
  runtime::Device device;
  GemmAmaxProblem problem;
  std::vector<std::string> refusals;
  std::vector<ViewDescription> views;  // a, b, sfa, sfb, c, amax
  const GemmAmaxPath* path = nullptr;
  // The kernels tried before `path`, each with its reasons.
  std::vector<std::pair<std::string_view, std::vector<std::string>>> passed_over;
  std::unique_ptr<GemmAmaxLaunch> launch;
  bool caller_workspace = false;
};

GemmAmax::GemmAmax(const TensorView& a, const TensorView& b, const TensorView& sfa,
                   const TensorView& sfb, const TensorView& c, const TensorView& amax,
                   GemmAmaxOptions options)
    : state_(std::make_unique<State>(State{a.device(), {}, {}, {}})) {
  state_->problem = describe_gemm_amax(a, b, sfa, sfb, c, amax, options, state_->refusals);
  state_->caller_workspace = options.caller_workspace;
  // The first kernel of the family that accepts the problem; sm80 last,
  // whose refusals are the problem's (it runs everything the rules allow).
  state_->path = &sm80_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::skinny) state_->path = &skinny_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::prepass) state_->path = &prepass_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::swapped) state_->path = &swapped_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::sm90a) state_->path = &sm90a_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::sm100a) state_->path = &sm100a_gemm_amax_path();
  if (options.kernel == GemmAmaxKernel::stream) state_->path = &stream_gemm_amax_path();
  // On an sm_100a device the tcgen05 kernel is tried first (its passed_over
  // says where automatic does not take it yet).
  std::vector<const GemmAmaxPath*> candidates = {
      &skinny_gemm_amax_path(), &prepass_gemm_amax_path(), &swapped_gemm_amax_path(), &sm90a_gemm_amax_path()};
  if (a.device().target() == ptx::Target::sm_100a)
    candidates.insert(candidates.begin(), &sm100a_gemm_amax_path());
  if (state_->refusals.empty() && options.kernel == GemmAmaxKernel::automatic)
    for (const GemmAmaxPath* path : candidates) {
      std::vector<std::string> why = path->refusals(state_->problem, a.device());
      if (why.empty()) {
        if (auto slower = path->passed_over(state_->problem, a.device())) {
          state_->passed_over.push_back({path->name(), {*slower}});
          continue;
        }
        state_->path = path;
        break;
      }
      state_->passed_over.push_back({path->name(), std::move(why)});
    }
  for (auto& why : state_->path->refusals(state_->problem, a.device()))
    state_->refusals.push_back(std::move(why));
  state_->views = {*view_description(&a), *view_description(&b), *view_description(&sfa),
                   *view_description(&sfb), *view_description(&c), *view_description(&amax)};
}

GemmAmax::~GemmAmax() = default;
GemmAmax::GemmAmax(GemmAmax&&) noexcept = default;
GemmAmax& GemmAmax::operator=(GemmAmax&&) noexcept = default;

std::vector<std::string> GemmAmax::check_support() const {
  return state_->refusals;
}

std::string_view GemmAmax::kernel_name() const {
  return state_->path->name();
}

std::string GemmAmax::describe() const {
  if (!state_->refusals.empty()) return "GemmAmax refuses " + state_->problem.describe() + ":" + join(state_->refusals);
  std::string s = "GemmAmax " + state_->problem.describe() + ": kernel " + std::string(state_->path->name()) + ", " +
                  state_->path->configuration(state_->problem, state_->device) + ", workspace " +
                  std::to_string(workspace_bytes()) + " bytes";
  for (const auto& [name, why] : state_->passed_over) s += "\n  not " + std::string(name) + ":" + join(why);
  return s;
}

std::size_t GemmAmax::workspace_bytes() const {
  return state_->refusals.empty() ? state_->path->workspace_bytes(state_->problem, state_->device) : 0;
}

void GemmAmax::compile() {
  if (!state_->refusals.empty())
    throw OpsError("GemmAmax refused " + state_->problem.describe() + ":" + join(state_->refusals));
  if (!state_->launch)
    state_->launch = state_->path->compile(state_->problem, state_->device, !state_->caller_workspace);
}

void GemmAmax::execute(const TensorView& a, const TensorView& b, const TensorView& sfa,
                       const TensorView& sfb, const TensorView& c, const TensorView& amax,
                       runtime::Stream* stream, const TensorView* workspace) {
  compile();
  const TensorView* given[] = {&a, &b, &sfa, &sfb, &c, &amax};
  const char* names[] = {"A", "B", "SFA", "SFB", "C", "amax"};
  std::vector<std::string> mismatches;
  for (int i = 0; i < 6; ++i) {
    if (!(*view_description(given[i]) == state_->views[static_cast<std::size_t>(i)]))
      mismatches.push_back(
          std::string(names[i]) + " is " + given[i]->describe() +
          ": execute() needs views of the dtype, shape and strides GemmAmax was built with");
    else if (!(given[i]->device() == state_->device))
      mismatches.push_back(std::string(names[i]) + " is on " + given[i]->device().describe() +
                           ": GemmAmax was built for " + state_->device.describe());
    else if ((i == 0 || i == 1 || i == 4) && given[i]->address() % 16 != 0)  // A, B, C
      mismatches.push_back(std::string(names[i]) +
                           " starts at an address that is not 16-byte aligned");
  }
  const std::size_t needed = workspace_bytes();
  if (workspace) {
    if (!(workspace->device() == state_->device))
      mismatches.push_back("the workspace is on " + workspace->device().describe() +
                           ": GemmAmax was built for " + state_->device.describe());
    else if (!workspace->is_contiguous() || workspace->extent_bytes() < needed)
      mismatches.push_back("the workspace is " + workspace->describe() + ": it must be contiguous, of " +
                           std::to_string(needed) + " bytes or more (workspace_bytes())");
    else if (workspace->address() % 16 != 0)
      mismatches.push_back("the workspace starts at an address that is not 16-byte aligned");
  } else if (needed && state_->caller_workspace) {
    mismatches.push_back("no workspace given: with GemmAmaxOptions::caller_workspace, execute() needs one of " +
                         std::to_string(needed) + " bytes (workspace_bytes()), zero-filled before its first use");
  }
  if (!mismatches.empty()) throw OpsError("GemmAmax::execute refused:" + join(mismatches));
  state_->launch->run({a, b, sfa, sfb, c, amax, workspace}, stream);
}

GemmAmaxResult gemm_amax(const TensorView& a, const TensorView& b, const TensorView& sfa,
                         const TensorView& sfb, GemmAmaxOptions options, runtime::Stream* stream) {
  const runtime::Device& device = a.device();
  // M, N, L from A and B as GemmAmax reads them (u8 FP4 counts bytes along K only).
  const std::int64_t m = a.rank() == 3 ? a.shape()[0] : 0, n = b.rank() == 3 ? b.shape()[0] : 0,
                     l = a.rank() == 3 ? a.shape()[2] : 0;
  const bool fp4_c =
      options.c_dtype == runtime::DType::e2m1 || options.c_dtype == runtime::DType::u8;
  const runtime::DType c_dtype = fp4_c ? runtime::DType::u8 : options.c_dtype;
  // FP4 C is returned as u8 bytes (M, N/2, L): an e2m1 view of (M, N, L) with
  // L > 1 has no stride-1 last dimension (runtime/tensor.hpp).
  const std::int64_t cols = fp4_c ? (n + 1) / 2 : n;
  std::vector<std::int64_t> shape{m, cols, l}, strides;
  if (options.c_major == CMajor::n)
    strides = {cols, 1, m * cols};
  else
    strides = {1, m, m * cols};
  const std::size_t c_bytes = static_cast<std::size_t>(std::max<std::int64_t>(1, m * cols * l) *
                                                       runtime::bits(c_dtype) / 8);
  auto c_buffer = std::make_shared<runtime::Buffer>(device, c_bytes);
  runtime::Tensor c(TensorView(*c_buffer, c_dtype, shape, strides), c_buffer);
  runtime::Tensor amax = runtime::Tensor::empty(device, runtime::DType::f32, {1});
  const float zero = 0.0f;
  amax.copy_from_host(&zero, sizeof zero);
  GemmAmax op(a, b, sfa, sfb, c, amax, options);
  op.execute(a, b, sfa, sfb, c, amax, stream);
  if (stream)
    stream->synchronize();
  else
    device.synchronize();
  return {std::move(c), std::move(amax)};
}

}  // namespace warpforge::ops
