// A one-thread kernel whose body leaves its results in %o0, %o1, ... (b32),
// which the harness stores to out[0..n) and returns. The body may use out's
// words as scratch global memory before that, and 32 bytes of shared memory
// at [buf].
#pragma once

#include "sim_harness.hpp"

namespace warpforge::sim::testing {

class ScalarKernel : public SimTest {
 protected:
  std::vector<std::uint32_t> results(const std::string& body, int n) {
    KernelSource k("scalar");
    k.param(ptx::Type::u64, "out")
        .regs(ptx::Type::b32, "%o", n)
        .regs(ptx::Type::b32, "%r", 8)
        .regs(ptx::Type::b64, "%rd", 8)
        .regs(ptx::Type::f32, "%f", 8)
        .regs(ptx::Type::f64, "%fd", 4)
        .regs(ptx::Type::b16, "%h", 8)
        .regs(ptx::Type::pred, "%p", 8)
        .shared(ptx::Type::b64, "buf", 4);
    std::string code = body + "\nld.param.u64 %rd7, [out];\n";
    for (int i = 0; i < n; ++i)
      code += "st.global.u32 [%rd7+" + std::to_string(4 * i) + "], %o" + std::to_string(i) + ";\n";
    k.code(code);
    auto out = zeros<std::uint32_t>(static_cast<std::size_t>(n));
    run(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(out)});
    return download<std::uint32_t>(out, static_cast<std::size_t>(n));
  }
};

inline std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace warpforge::sim::testing
