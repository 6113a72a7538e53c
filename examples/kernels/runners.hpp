// Runs the documented examples on a device (a GPU or the simulator) and checks
// their results against the references: what `warpforge demo`, the simulator
// tests (CI) and the GPU tests share. Outputs are poisoned (all bytes 0xFF,
// a NaN) before each launch, so an element the kernel never writes fails.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "warpforge/runtime/device.hpp"

namespace warpforge::examples {

struct ExampleResult {
  std::string name;    // "bf16_gemm_m16n8k16 64x32x64"
  bool passed = false;
  std::string detail;  // "rows 9 ... 24 exact", "max |err| 3.1e-05, 0 of 2048 outside tolerance"
  std::vector<float> output;
};

ExampleResult run_mma_demo(const runtime::Device& device);
std::vector<ExampleResult> run_bf16_gemm(const runtime::Device& device, std::mt19937& rng);
ExampleResult run_warp_gemm_16x8x16(const runtime::Device& device, std::mt19937& rng);
ExampleResult run_warp_gemm_64x32x32(const runtime::Device& device, std::mt19937& rng);
// stream_read over 1000 random vectors (no multiple of its four-vector
// steps) on 3 CTAs of 64 threads: every warp's fold equal to the host's.
ExampleResult run_stream_read(const runtime::Device& device, std::mt19937& rng);

// Every example above, in order.
std::vector<ExampleResult> run_all_examples(const runtime::Device& device, std::mt19937& rng);

}  // namespace warpforge::examples
