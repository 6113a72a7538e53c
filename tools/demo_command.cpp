// `warpforge demo`: the documented examples, built with the DSL and run on a
// GPU when one is present, else on the CPU simulator.
#include <cstdio>
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "kernels/registry.hpp"
#include "kernels/runners.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::cli::demo_command {
namespace {

runtime::Device pick_device(const std::string& choice) {
  if (choice == "sim") return runtime::Device::sim();
  if (choice == "cuda") return runtime::Device::cuda(0);
  if (!choice.empty()) throw Error("unknown device '" + choice + "'; accepted: cuda, sim");
  return runtime::Device::cuda_count() > 0 ? runtime::Device::cuda(0) : runtime::Device::sim();
}

int run_demo(const std::vector<std::string>& raw) {
  Arguments args("demo", raw);
  const bool show_ptx = args.flag("--ptx");
  const std::string device_choice = args.value("--device").value_or("");
  args.finish();
  runtime::Device device = pick_device(device_choice);
  const auto& props = device.properties();
  std::cout << "device: " << props.name << (device.is_simulator() ? " (CPU simulator; no GPU in use)" : "")
            << ", target " << ptx::name(device.target()) << "\n\n";

  int failures = 0;
  auto ptxas = ptx::find_ptxas();
  std::cout << "built-in kernels (" << (ptxas ? "assembled by ptxas" : "ptxas not found: not assembled") << "):\n";
  for (const auto& k : examples::builtin_kernels()) {
    std::string text = k.build(device.target()).to_ptx();
    if (show_ptx) std::cout << text << "\n";
    std::string verdict = "-";
    if (ptxas) {
      auto r = ptx::run_ptxas(text, std::string(ptx::name(device.target())));
      verdict = r.ok ? "ptxas ok" : "ptxas REJECTED";
      if (!r.ok) {
        std::cout << r.log;
        ++failures;
      }
    }
    std::printf("  %-22s %-14s %s\n", k.name.c_str(), verdict.c_str(), k.description.c_str());
  }

  std::cout << "\nmma.sync m16n8k8 demo, D = A·B (row r should be r + 9):\n";
  auto demo = examples::run_mma_demo(device);
  for (int row = 0; row < 16; ++row) {
    std::cout << "  ";
    for (int col = 0; col < 8; ++col) std::printf("%5.1f", demo.output[row * 8 + col]);
    std::cout << "\n";
  }

  std::mt19937 rng(std::random_device{}());
  std::cout << "\nresults on " << props.name << ":\n";
  for (const auto& r : examples::run_all_examples(device, rng)) {
    std::printf("  %-34s %-5s %s\n", r.name.c_str(), r.passed ? "PASS" : "FAIL", r.detail.c_str());
    failures += r.passed ? 0 : 1;
  }
  std::cout << (failures == 0 ? "\nall examples passed\n" : "\nSOME EXAMPLES FAILED\n");
  return failures == 0 ? 0 : 1;
}

const Registration registration({
    "demo",
    "run the documented examples (GPU if present, else the simulator)",
    "usage: warpforge demo [--device cuda|sim] [--ptx]\n\n"
    "Builds the documented examples with the DSL (the mma.sync m16n8k8 demo, the\n"
    "single-warp bf16 GEMM, the warp::gemm tile-primitive examples), assembles them\n"
    "with ptxas when the CUDA toolkit is present, runs them on the first CUDA GPU or,\n"
    "without one, on the CPU simulator, and checks every result against its reference.\n\n"
    "--device  cuda or sim (default: cuda when a GPU is present, else sim)\n"
    "--ptx     also print each kernel's PTX\n",
    run_demo,
});

}  // namespace
}  // namespace warpforge::cli::demo_command
