// Helpers for the Hopper tests (TMA, wgmma, clusters): kernels written as
// PTX text and read with ptx::parse, launched with a cluster shape, and the
// simulator's tensor maps.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hopper_kernels.hpp"
#include "sim_harness.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::sim::testing {

// bf16 of a float, rounded to nearest even, and back.
inline std::uint16_t bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
inline float bf16_value(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

class HopperTest : public SimTest {
 protected:
  std::mt19937 rng{std::random_device{}()};

  void run_ptx(const std::string& text, const std::string& kernel, const runtime::LaunchConfig& config,
               const std::vector<runtime::KernelArg>& args) {
    auto loaded = sim.load(ptx::parse(text));
    sim.launch(*loaded, kernel, config, args, nullptr);
  }
  // The message of the SimError that loading or running the kernel throws.
  std::string ptx_error(const std::string& text, const std::string& kernel, const runtime::LaunchConfig& config,
                        const std::vector<runtime::KernelArg>& args) {
    try {
      run_ptx(text, kernel, config, args);
    } catch (const SimError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return "";
  }
  runtime::KernelArg tensor_map_arg(const runtime::TensorMapDesc& desc) {
    runtime::check_tensor_map(desc);
    const runtime::TensorMap map = sim.encode_tensor_map(desc);
    runtime::KernelArg a;
    a.bytes.assign(map.bytes.begin(), map.bytes.end());
    return a;
  }
  std::vector<std::uint16_t> random_bf16(std::size_t n) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) {
      x = bf16_bits(normal(rng));
      if (x == 0 || x == 0x8000) x = bf16_bits(0.5f);  // never zero: a missed element must show
    }
    return v;
  }
};

}  // namespace warpforge::sim::testing
