// `warpforge demo`: the documented examples, built with the DSL.
#include <iostream>

#include "command.hpp"
#include "kernels/registry.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::cli {
namespace {

int run_demo(const std::vector<std::string>& args) {
  bool quiet = !args.empty() && args[0] == "--quiet";
  auto ptxas = ptx::find_ptxas();
  int failures = 0;
  for (const auto& k : examples::builtin_kernels()) {
    std::string text = k.build(k.default_target).to_ptx();
    std::cout << "== " << k.name << ": " << k.description << "\n";
    if (!quiet) std::cout << text << "\n";
    if (!ptxas) {
      std::cout << "   ptxas: not found (install the CUDA toolkit to assemble)\n";
      continue;
    }
    auto result = ptx::run_ptxas(text, std::string(ptx::name(k.default_target)));
    std::cout << "   ptxas " << ptx::name(k.default_target) << ": " << (result.ok ? "accepted" : "REJECTED") << "\n";
    if (!result.ok) {
      std::cout << result.log;
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

const Registration registration({
    "demo",
    "build the documented example kernels and assemble them",
    "usage: warpforge demo [--quiet]\n\n"
    "Builds the mma.sync m16n8k8 demo and the single-warp bf16 GEMM with the DSL,\n"
    "prints their PTX (not with --quiet) and reports whether ptxas accepts it.\n",
    run_demo,
});

}  // namespace
}  // namespace warpforge::cli
