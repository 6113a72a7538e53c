// Prints the PTX of ops::Gemm's sm90a kernel as the op builds it for a
// bf16 GEMM (A row-major, B column-major, bf16 D, M = N = K = 4096) under a
// configuration given as GemmConfig::describe() spells it, with the shared
// memory an H100/H200 grants a block (the simulator's sm_90a): the C++ side
// of scripts/compare_python_gemm_ptx.sh, which compares it with the GEMM
// written in Python on the template (examples/python/warp_specialized_gemm.py).
//
//   sm90a_gemm_ptx '128x256x64 s4 w2x1 c2x1' > cpp.ptx
#include <cstdio>
#include <iostream>

#include "../src/ops/gemm/gemm_problem.hpp"
#include "../src/ops/gemm/sm90a_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

using namespace warpforge;

int main(int argc, char** argv) {
  const std::optional<ops::GemmConfig> config =
      argc == 2 ? ops::parse_gemm_config(argv[1]) : std::nullopt;
  if (!config) {
    std::cerr << "usage: sm90a_gemm_ptx 'MxNxK sS wAxB cCxD [pingpong] [streamk]'\n";
    return 2;
  }
  const std::int64_t n = 4096;
  ops::GemmProblem p{.m = n,
                     .n = n,
                     .k = n,
                     .l = 1,
                     .ab_dtype = runtime::DType::bf16,
                     .d_dtype = runtime::DType::bf16};
  p.a = {.row_major = true, .ld = n, .batch_stride = n * n};
  p.b = {.row_major = false, .ld = n, .batch_stride = n * n};
  p.d = {.row_major = true, .ld = n, .batch_stride = n * n};
  try {
    const runtime::Device sim(sim::make_backend({}));
    const ops::Sm90aSpec spec =
        ops::sm90a_spec(p, *config, sim.properties().shared_bytes_per_block_optin);
    std::cout << ops::build_sm90a_gemm(spec).to_ptx();
  } catch (const Error& e) {
    std::cerr << "sm90a_gemm_ptx: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
