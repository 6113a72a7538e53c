// A kernel whose parameters have every size and alignment a launch packs:
//   .entry mixed(.param .u8 flag, .param .u32 n, .param .u64 count,
//                .param .f32 alpha, .param .u64 .ptr .global .align 16 out,
//                .param .align 64 .b8 map[128], .param .s16 h, .param .f64 beta)
// with its arguments' values; for the runtime's tests (fake backend) and the
// CUDA backend's (fake driver).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/kernel_arg.hpp"

namespace warpforge::runtime::testing {

inline ptx::Variable param_of(ptx::Type type, std::string name) {
  return ptx::Variable{.space = ptx::Space::param, .type = type, .name = std::move(name)};
}
// .param .u64 .ptr .global .align 16 <name>
inline ptx::Variable pointer_param(std::string name) {
  ptx::Variable p = param_of(ptx::Type::u64, std::move(name));
  p.ptr = true;
  p.ptr_space = ptx::Space::global;
  p.ptr_align = 16;
  return p;
}
// .param .align 64 .b8 <name>[128]: a TMA descriptor
inline ptx::Variable tensor_map_param(std::string name) {
  ptx::Variable p = param_of(ptx::Type::b8, std::move(name));
  p.align = 64;
  p.dims = {128};
  return p;
}

inline ptx::Module mixed_params_kernel(const std::string& target = "sm_90a") {
  using ptx::Type;
  ptx::Function f;
  f.name = "mixed";
  f.params = {param_of(Type::u8, "flag"),    param_of(Type::u32, "n"),  param_of(Type::u64, "count"),
              param_of(Type::f32, "alpha"),  pointer_param("out"),      tensor_map_param("map"),
              param_of(Type::s16, "h"),      param_of(Type::f64, "beta")};
  f.body = ptx::Block{{ptx::Instruction::parse_opcode("ret")}};
  ptx::Module m;
  m.target = {target};
  m.items.push_back(f);
  return m;
}

// Distinct values for each parameter, and the bytes each must arrive as.
struct MixedParamsValues {
  std::uint8_t flag = 0xA5;
  std::uint32_t n = 0x11223344u;
  std::uint64_t count = 0x0102030405060708ull;
  float alpha = -2.75f;
  DevicePtr out = 0;  // set by the test: a buffer's address
  std::array<std::uint8_t, 128> map{};
  std::int16_t h = -12345;
  double beta = 1.0 / 3.0;

  MixedParamsValues() {
    for (std::size_t i = 0; i < map.size(); ++i) map[i] = static_cast<std::uint8_t>(3 * i + 1);
  }
  std::vector<Arg> args() const {
    return {flag, n, count, alpha, Arg::pointer(out), Arg::bytes_of(map), h, beta};
  }
  static std::vector<std::uint8_t> bytes_of(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    return {b, b + n};
  }
  // The bytes of parameter i, as the kernel declares its size.
  std::vector<std::vector<std::uint8_t>> expected() const {
    return {bytes_of(&flag, 1), bytes_of(&n, 4),  bytes_of(&count, 8), bytes_of(&alpha, 4),
            bytes_of(&out, 8),  bytes_of(map.data(), 128), bytes_of(&h, 2), bytes_of(&beta, 8)};
  }
};

}  // namespace warpforge::runtime::testing
