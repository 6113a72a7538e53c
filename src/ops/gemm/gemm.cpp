// ops::Gemm: the problem read off the views, the choice of path and
// configuration (heuristic, forced, or autotuned and remembered), and the
// launch.
#include "warpforge/ops/gemm.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

#include "gemm_path.hpp"
#include "gemm_tuning_file.hpp"
#include "problem_from_views.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"

namespace warpforge::ops {
namespace {

std::string join(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += "\n  - " + r;
  return out;
}

std::string path_names() {
  std::string out;
  for (const GemmPath* p : gemm_paths())
    out += (out.empty() ? "" : ", ") + std::string(name(p->kind()));
  return out;
}

const GemmPath* find_path(GemmKernel kind) {
  for (const GemmPath* p : gemm_paths())
    if (p->kind() == kind) return p;
  return nullptr;
}

// A zero-filled stand-in for `v` (same dtype, shape and strides) for timing
// candidates without touching the caller's data.
struct Scratch {
  runtime::Buffer buffer;
  runtime::TensorView view;
  explicit Scratch(const runtime::TensorView& v)
      : buffer(v.device(), std::max<std::size_t>(v.extent_bytes(), 16)),
        view(buffer, v.dtype(), v.shape(), v.strides()) {
    buffer.fill(0);
  }
};

}  // namespace

std::string_view name(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::automatic:
      return "automatic";
    case GemmKernel::sm80:
      return "sm80";
    case GemmKernel::sm90a:
      return "sm90a";
    case GemmKernel::sm100a:
      return "sm100a";
  }
  return "?";
}

std::optional<GemmKernel> parse_gemm_kernel(std::string_view text) {
  for (GemmKernel k :
       {GemmKernel::automatic, GemmKernel::sm80, GemmKernel::sm90a, GemmKernel::sm100a})
    if (text == name(k)) return k;
  if (text == "auto") return GemmKernel::automatic;
  return std::nullopt;
}

std::optional<GemmConfig> parse_gemm_config(std::string_view text) {
  GemmConfig c;
  const std::string copy(text);
  int used = 0;
  const int got = std::sscanf(copy.c_str(), "%dx%dx%d s%d w%dx%d c%dx%d%n", &c.tile_m, &c.tile_n, &c.tile_k,
                              &c.stages, &c.warps_m, &c.warps_n, &c.cluster_m, &c.cluster_n, &used);
  if (got != 8) return std::nullopt;
  std::istringstream words(copy.substr(static_cast<std::size_t>(used)));
  for (std::string word; words >> word;) {
    if (word == "pingpong")
      c.pingpong = true;
    else if (word == "streamk")
      c.stream_k = true;
    else
      return std::nullopt;
  }
  for (int v : {c.tile_m, c.tile_n, c.tile_k, c.stages, c.warps_m, c.warps_n, c.cluster_m, c.cluster_n})
    if (v < 1) return std::nullopt;
  if (c.describe() != text) return std::nullopt;  // no stray spaces, signs, repeats or reordering
  return c;
}

std::string GemmConfig::describe() const {
  return std::to_string(tile_m) + "x" + std::to_string(tile_n) + "x" + std::to_string(tile_k) +
         " s" + std::to_string(stages) + " w" + std::to_string(warps_m) + "x" +
         std::to_string(warps_n) + " c" + std::to_string(cluster_m) + "x" +
         std::to_string(cluster_n) + (pingpong ? " pingpong" : "") + (stream_k ? " streamk" : "");
}

struct Gemm::State {
  runtime::TensorView a, b, d;
  std::optional<runtime::TensorView> c;
  GemmOptions options;
  ProblemFromViews read;
  const GemmPath* path = nullptr;  // after compile()
  GemmConfig config;
  std::unique_ptr<GemmLaunch> launch;

  const runtime::Device& device() const { return a.device(); }

  // The path that runs the problem, with every reason when none does.
  const GemmPath* choose_path(std::vector<std::string>& why) const {
    const GemmProblem& p = read.problem;
    if (options.kernel != GemmKernel::automatic) {
      const GemmPath* path = find_path(options.kernel);
      if (!path) {
        why.push_back("kernel " + std::string(name(options.kernel)) +
                      " is not in this build (available: " + path_names() + ")");
        return nullptr;
      }
      for (const auto& r : path->refusals(p, device()))
        why.push_back("kernel " + std::string(name(options.kernel)) + " refuses: " + r);
      return why.empty() ? path : nullptr;
    }
    std::vector<std::string> all;
    for (const GemmPath* path : gemm_paths()) {
      if (!path->chosen_automatically()) continue;
      auto refused = path->refusals(p, device());
      if (refused.empty()) return path;
      for (const auto& r : refused)
        all.push_back("kernel " + std::string(name(path->kind())) + " refuses: " + r);
    }
    why.insert(why.end(), all.begin(), all.end());
    return nullptr;
  }

  std::vector<std::string> check() const {
    std::vector<std::string> why = read.refusals;
    if (!why.empty()) return why;
    const GemmPath* path = choose_path(why);
    if (path && options.config)
      for (const auto& r : path->config_refusals(*options.config, read.problem, device()))
        why.push_back("configuration " + options.config->describe() + " for kernel " +
                      std::string(name(path->kind())) + ": " + r);
    return why;
  }

  std::string tuning_key() const {
    return device().properties().name + " | " + read.problem.describe();
  }

  // Times every candidate of every path that accepts the problem (the forced
  // one only, when a kernel is forced) and returns the fastest.
  TunedChoice tune() const {
    Scratch sa(a), sb(b), sd(d);
    std::optional<Scratch> sc;
    if (read.problem.has_c) sc.emplace(*c);
    GemmOperands operands{sa.view, sb.view,       sc ? &sc->view : nullptr,
                          sd.view, options.alpha, options.beta};
    std::optional<TunedChoice> best;
    float best_ms = std::numeric_limits<float>::max();
    for (const GemmPath* path : gemm_paths()) {
      if (options.kernel != GemmKernel::automatic && path->kind() != options.kernel) continue;
      if (options.kernel == GemmKernel::automatic && !path->chosen_automatically()) continue;
      if (!path->refusals(read.problem, device()).empty()) continue;
      for (const GemmConfig& config : path->candidates(read.problem, device())) {
        auto launch = path->compile(read.problem, config, device());
        runtime::Stream stream = device().create_stream();
        launch->run(operands, &stream);  // warm-up
        runtime::Event start = device().create_event(), end = device().create_event();
        constexpr int reps = 3;
        start.record(&stream);
        for (int i = 0; i < reps; ++i) launch->run(operands, &stream);
        end.record(&stream);
        const float ms = runtime::Event::elapsed_ms(start, end) / reps;
        if (!best || ms < best_ms) {
          best_ms = ms;
          best = TunedChoice{path->kind(), config};
        }
      }
    }
    if (!best)
      throw OpsError("ops::Gemm autotune: no candidate configuration for " +
                     read.problem.describe());
    return *best;
  }
};

Gemm::Gemm(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
           const runtime::TensorView& d, GemmOptions options)
    : state_(std::make_unique<State>(State{a, b, d, c ? std::optional(*c) : std::nullopt, options,
                                           problem_from_views(a, b, c, d, options)})) {}

Gemm::~Gemm() = default;
Gemm::Gemm(Gemm&&) noexcept = default;
Gemm& Gemm::operator=(Gemm&&) noexcept = default;

std::vector<std::string> Gemm::check_support() const {
  return state_->check();
}

void Gemm::compile() {
  State& s = *state_;
  if (s.launch) return;
  auto why = s.check();
  if (!why.empty())
    throw OpsError(
        "ops::Gemm cannot run " +
        (s.read.refusals.empty() ? s.read.problem.describe() : std::string("this problem")) + ":" +
        join(why));
  std::vector<std::string> ignored;
  const GemmPath* path = s.choose_path(ignored);
  GemmConfig config = path->heuristic(s.read.problem, s.device());
  if (s.options.config) {
    config = *s.options.config;
  } else if (s.options.autotune) {
    auto file_path = GemmTuningFile::default_path();
    std::optional<TunedChoice> choice;
    if (file_path) choice = GemmTuningFile(*file_path).find(s.tuning_key());
    // A remembered choice is used only while it still suits this build.
    const GemmPath* remembered = choice ? find_path(choice->kernel) : nullptr;
    if (!remembered ||
        (s.options.kernel != GemmKernel::automatic && remembered->kind() != s.options.kernel) ||
        !remembered->refusals(s.read.problem, s.device()).empty() ||
        !remembered->config_refusals(choice->config, s.read.problem, s.device()).empty()) {
      choice = s.tune();
      if (file_path) GemmTuningFile(*file_path).store(s.tuning_key(), *choice);
    }
    path = find_path(choice->kernel);
    config = choice->config;
  }
  // A heuristic's choice can still be one the device refuses (its shared
  // memory): say so rather than fail at launch.
  if (auto why = path->config_refusals(config, s.read.problem, s.device()); !why.empty())
    throw OpsError("ops::Gemm: kernel " + std::string(name(path->kind())) +
                   " has no configuration for " + s.read.problem.describe() + " on device '" +
                   s.device().properties().name + "'; " + config.describe() +
                   " is refused:" + join(why));
  s.launch = path->compile(s.read.problem, config, s.device());
  s.path = path;
  s.config = config;
}

void Gemm::execute(const runtime::TensorView& a, const runtime::TensorView& b,
                   const runtime::TensorView* c, const runtime::TensorView& d,
                   runtime::Stream* stream) {
  State& s = *state_;
  compile();
  // The views must describe the compiled problem; their base addresses may be
  // aligned differently, as long as no less than the kernel assumed.
  ProblemFromViews now = problem_from_views(a, b, c, d, s.options);
  if (!now.refusals.empty())
    throw OpsError("ops::Gemm::execute: the views are refused:" + join(now.refusals));
  GemmProblem got = now.problem, want = s.read.problem;
  std::vector<std::string> why;
  for (auto [role, g, w] : {std::tuple{"A", &got.a, &want.a},
                            {"B", &got.b, &want.b},
                            {"C", &got.c, &want.c},
                            {"D", &got.d, &want.d}}) {
    if (g->base_alignment < w->base_alignment)
      why.push_back(std::string(role) + "'s address is " + std::to_string(g->base_alignment) +
                    "-byte aligned; the Gemm was compiled for " +
                    std::to_string(w->base_alignment) + "-byte alignment");
    g->base_alignment = w->base_alignment;
  }
  if (!(got == want))
    why.push_back("the views describe " + now.problem.describe() + " (leading dimensions A " +
                  std::to_string(now.problem.a.ld) + ", B " + std::to_string(now.problem.b.ld) +
                  ", D " + std::to_string(now.problem.d.ld) + "); the Gemm was built for " +
                  want.describe() + " (leading dimensions A " + std::to_string(want.a.ld) + ", B " +
                  std::to_string(want.b.ld) + ", D " + std::to_string(want.d.ld) + ")");
  if (!(a.device() == s.device()))
    why.push_back("the views are on " + a.device().describe() + ": the Gemm was built for " + s.device().describe());
  if (!why.empty()) throw OpsError("ops::Gemm::execute:" + join(why));
  s.launch->run(GemmOperands{a, b, c, d, s.options.alpha, s.options.beta}, stream);
}

GemmKernel Gemm::kernel() const {
  if (!state_->path) throw OpsError("ops::Gemm::kernel(): call compile() first");
  return state_->path->kind();
}

const GemmConfig& Gemm::config() const {
  if (!state_->path) throw OpsError("ops::Gemm::config(): call compile() first");
  return state_->config;
}

void gemm(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
          const runtime::TensorView& d, GemmOptions options, runtime::Stream* stream) {
  Gemm g(a, b, c, d, options);
  g.execute(a, b, c, d, stream);
}

}  // namespace warpforge::ops
