// Shared by the AMDGPU tests: simulated device buffers, random inputs, LLVM.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "warpforge/amdgpu/llvm_ir.hpp"
#include "warpforge/amdgpu/toolchain.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/sim/amdgpu/wave_simulator.hpp"

// EXPECT_CONTAINS(text, part): text (a std::string or C string) holds part.
#define EXPECT_CONTAINS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << (text) << "'"                                \
      << " does not contain '" << (part) << "'"

namespace warpforge::amdgpu::testing {

inline std::mt19937& rng() {
  static std::mt19937 r(std::random_device{}());
  return r;
}

// 0.1·N(0,1) rounded to bf16 (REFERENCE.md's inputs), as bits and as floats.
struct Bf16Matrix {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;
};
inline Bf16Matrix random_bf16(std::size_t count, bool f16 = false) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Bf16Matrix m;
  for (std::size_t i = 0; i < count; ++i) {
    float x = 0.1f * normal(rng());
    std::uint16_t b = f16 ? ops::f32_to_f16_bits(x) : ops::f32_to_bf16_bits(x);
    m.bits.push_back(b);
    m.values.push_back(f16 ? ops::f16_bits_to_f32(b) : ops::bf16_bits_to_f32(b));
  }
  return m;
}

// A buffer in simulated global memory.
template <typename T>
std::uint64_t upload(sim::GlobalMemory& mem, const std::vector<T>& host) {
  std::uint64_t address = mem.allocate(host.size() * sizeof(T));
  std::memcpy(mem.find(address, host.size() * sizeof(T)), host.data(), host.size() * sizeof(T));
  return address;
}
template <typename T>
std::vector<T> download(sim::GlobalMemory& mem, std::uint64_t address, std::size_t count) {
  std::vector<T> host(count);
  std::memcpy(host.data(), mem.find(address, count * sizeof(T)), count * sizeof(T));
  return host;
}
// An f32 buffer poisoned with NaN, so that an element never written shows.
inline std::uint64_t poisoned_f32(sim::GlobalMemory& mem, std::size_t count) {
  return upload(mem, std::vector<float>(count, std::numeric_limits<float>::quiet_NaN()));
}

// |got - want| <= atol + rtol·|want| for every element; the first miss is reported.
inline ::testing::AssertionResult all_close(const std::vector<float>& got,
                                            const std::vector<double>& want, double atol = 1e-2,
                                            double rtol = 1e-2) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

// The disassembly of the kernel compiled for `target`; a missing LLVM fails
// the test with the install hint (CI installs it through make's install-deps).
inline std::string compiled_disassembly(const KernelIR& kernel, Target target) {
  try {
    return disassemble(compile_to_code_object(to_llvm_ir(kernel, target), target), target);
  } catch (const ToolchainError& e) {
    ADD_FAILURE() << e.what();
    return "";
  }
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

}  // namespace warpforge::amdgpu::testing
