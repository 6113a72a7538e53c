// nvcc's own PTX for CUDA sources of tests/corpus (sim_calls.cu, sim_warp.cu,
// reduce_cg.cu, wmma.cu, wmma_forms.cu, printf.cu, mma_sync.cu), run through
// the runtime on any device: the simulator's tests (nvcc_kernels_test.cpp)
// compare the results with host references, the GPU tests
// (tests/gpu/nvcc_kernels_gpu_test.cpp) with the simulator's, bit for bit,
// and the differential harness's nvcc family (tools/difftest/nvcc_family.cpp)
// records them on a GPU for CI's replay. The PTX is nvcc's, recorded in
// tests/corpus/ptx by scripts/record-ptx-corpus.sh (tests/corpus/corpus.cmake;
// tools/difftest/nvcc_ptx.cmake for the harness); without it the tests skip,
// saying so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "warpforge/ptx/parser.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::testing::nvcc_kernels {

// The corpus file `<stem>.<target>.<variant>.ptx`, parsed; nothing when the
// build did not write it.
inline std::optional<ptx::Module> corpus_module(const std::string& name) {
  const std::filesystem::path file =
      std::filesystem::path(WARPFORGE_PTX_CORPUS_DIR) / (name + ".ptx");
  if (!std::filesystem::exists(file)) return std::nullopt;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return ptx::parse(text.str());
}

template <class T>
runtime::Buffer upload(const runtime::Device& d, const std::vector<T>& values) {
  runtime::Buffer b = d.allocate(values.size() * sizeof(T));
  b.upload(values);
  return b;
}

// Poisoned output: 0xFF bytes (a NaN for floats, -1 for integers).
inline runtime::Buffer poisoned(const runtime::Device& d, std::size_t bytes) {
  runtime::Buffer b = d.allocate(bytes);
  b.fill(0xFF);
  return b;
}

// sim_calls.cu `calls`: one thread per pair of `pairs` (x, y interleaved),
// 64 threads a block. out: rotate(p) x, y and dot(rotate(p), p) per thread;
// fibs: fib(i % period).
struct CallsResult {
  std::vector<float> out;
  std::vector<std::int32_t> fibs;
};
inline CallsResult run_calls(const runtime::Device& d, const ptx::Module& m,
                             const std::vector<float>& pairs, int period) {
  const std::size_t n = pairs.size() / 2;
  runtime::Module module(d, m);
  runtime::Buffer in = upload(d, pairs), out = poisoned(d, 3 * n * 4), fibs = poisoned(d, n * 4);
  module.launch("_Z5callsPK4PairPfPii",
                {.grid = {static_cast<std::uint32_t>(n / 64)}, .block = {64}},
                {in, out, fibs, std::int32_t{period}});
  d.synchronize();
  return {out.download<float>(3 * n), fibs.download<std::int32_t>(n)};
}

// sim_calls.cu `fp8_convert`: per float pair, the e4m3x2 (low) and e5m2x2
// (high) codes, and the e4m3 pair decoded back to floats. 32 threads a block.
struct Fp8Result {
  std::vector<std::uint32_t> codes;
  std::vector<float> e4m3_values;
};
inline Fp8Result run_fp8_convert(const runtime::Device& d, const ptx::Module& m,
                                 const std::vector<float>& pairs) {
  const std::size_t n = pairs.size() / 2;
  runtime::Module module(d, m);
  runtime::Buffer in = upload(d, pairs), codes = poisoned(d, n * 4), values = poisoned(d, n * 8);
  module.launch("_Z11fp8_convertPK6float2PjPS_",
                {.grid = {static_cast<std::uint32_t>(n / 32)}, .block = {32}}, {in, codes, values});
  d.synchronize();
  return {codes.download<std::uint32_t>(n), values.download<float>(2 * n)};
}

// sim_warp.cu `warp_ops`: one warp; six results a lane (see the source).
inline std::vector<std::int32_t> run_warp_ops(const runtime::Device& d, const ptx::Module& m,
                                              const std::vector<std::int32_t>& in) {
  runtime::Module module(d, m);
  runtime::Buffer input = upload(d, in), out = poisoned(d, 6 * 32 * 4);
  module.launch("_Z8warp_opsPKiPi", {.grid = {1}, .block = {32}}, {input, out});
  d.synchronize();
  return out.download<std::int32_t>(6 * 32);
}

// reduce_cg.cu: `block_sum` of `in` with one block of 256 threads (one
// atomicAdd, so the order of the additions is the kernel's alone), and
// `warp_max` of 64 values (four 16-thread tiles).
struct ReduceResult {
  float sum;
  std::vector<std::int32_t> maxima;
};
inline ReduceResult run_reduce_cg(const runtime::Device& d, const ptx::Module& m,
                                  const std::vector<float>& in,
                                  const std::vector<std::int32_t>& values) {
  runtime::Module module(d, m);
  runtime::Buffer input = upload(d, in), sum = upload(d, std::vector<float>{0.0f});
  module.launch("_Z9block_sumPKfPfi", {.grid = {1}, .block = {256}},
                {input, sum, static_cast<std::int32_t>(in.size())});
  runtime::Buffer ints = upload(d, values), maxima = poisoned(d, values.size() / 16 * 4);
  module.launch("_Z8warp_maxPKiPi",
                {.grid = {1}, .block = {static_cast<std::uint32_t>(values.size())}},
                {ints, maxima});
  d.synchronize();
  return {sum.download<float>(1)[0], maxima.download<std::int32_t>(values.size() / 16)};
}

// wmma.cu `wmma_f16_gemm`: D (m×n f32, row-major) = 0.5·A·B, A m×k row-major
// f16 bits, B given as its transpose n×k (column-major B), one warp per
// 16×16 tile.
inline std::vector<float> run_wmma_gemm(const runtime::Device& d, const ptx::Module& m,
                                        const std::vector<std::uint16_t>& a,
                                        const std::vector<std::uint16_t>& bt, int m_dim, int n_dim,
                                        int k_dim) {
  runtime::Module module(d, m);
  runtime::Buffer da = upload(d, a), db = upload(d, bt),
                  dc = poisoned(d, static_cast<std::size_t>(m_dim * n_dim) * 4);
  module.launch(
      "_Z13wmma_f16_gemmPK6__halfS1_Pfii",
      {.grid = {static_cast<std::uint32_t>(n_dim / 16), static_cast<std::uint32_t>(m_dim / 16)},
       .block = {32}},
      {da, db, dc, std::int32_t{n_dim}, std::int32_t{k_dim}});
  d.synchronize();
  return dc.download<float>(static_cast<std::size_t>(m_dim * n_dim));
}

// wmma_forms.cu, one warp each: bf16 m32n8k16 (a 32×16 row-major, b 16×8
// row-major, c 32×8 row-major; D 32×8 column-major), tf32 m16n16k8 (a 16×8
// and b 8×16 column-major f32; D 16×16 row-major) and f16 m8n32k16 (a 8×16
// row-major, b 16×32 column-major, c and D 8×32 row-major, f16 bits).
inline std::vector<float> run_wmma_bf16(const runtime::Device& d, const ptx::Module& m,
                                        const std::vector<std::uint16_t>& a,
                                        const std::vector<std::uint16_t>& b,
                                        const std::vector<float>& c) {
  runtime::Module module(d, m);
  runtime::Buffer da = upload(d, a), db = upload(d, b), dc = upload(d, c),
                  out = poisoned(d, 32 * 8 * 4);
  module.launch("_Z18wmma_bf16_m32n8k16PK13__nv_bfloat16S1_PKfPf", {.grid = {1}, .block = {32}},
                {da, db, dc, out});
  d.synchronize();
  return out.download<float>(32 * 8);
}

inline std::vector<float> run_wmma_tf32(const runtime::Device& d, const ptx::Module& m,
                                        const std::vector<float>& a, const std::vector<float>& b) {
  runtime::Module module(d, m);
  runtime::Buffer da = upload(d, a), db = upload(d, b), out = poisoned(d, 16 * 16 * 4);
  module.launch("_Z18wmma_tf32_m16n16k8PKfS0_Pf", {.grid = {1}, .block = {32}}, {da, db, out});
  d.synchronize();
  return out.download<float>(16 * 16);
}

inline std::vector<std::uint16_t> run_wmma_f16(const runtime::Device& d, const ptx::Module& m,
                                               const std::vector<std::uint16_t>& a,
                                               const std::vector<std::uint16_t>& b,
                                               const std::vector<std::uint16_t>& c) {
  runtime::Module module(d, m);
  runtime::Buffer da = upload(d, a), db = upload(d, b), dc = upload(d, c),
                  out = poisoned(d, 8 * 32 * 2);
  module.launch("_Z17wmma_f16_m8n32k16PK6__halfS1_S1_PS_", {.grid = {1}, .block = {32}},
                {da, db, dc, out});
  d.synchronize();
  return out.download<std::uint16_t>(8 * 32);
}

// printf.cu `report`: one block of values.size() threads, each printing one
// of two lines (printf's output goes where the device sends it: the GPU's
// driver and, by default, the simulator write to stdout at the synchronize).
inline void run_printf_report(const runtime::Device& d, const ptx::Module& m,
                              const std::vector<std::int32_t>& values, double scale) {
  runtime::Module module(d, m);
  runtime::Buffer in = upload(d, values);
  module.launch("_Z6reportPKid",
                {.grid = {1}, .block = {static_cast<std::uint32_t>(values.size())}}, {in, scale});
  d.synchronize();
}

// mma_sync.cu `mma_bf16_tile`: one warp; D (16×8 f32, row-major) = A·B, A
// 16×16 and B 16×8 row-major bf16 bits, through cp.async, ldmatrix (B
// transposed) and one mma.sync.m16n8k16.
inline std::vector<float> run_mma_bf16_tile(const runtime::Device& d, const ptx::Module& m,
                                            const std::vector<std::uint16_t>& a,
                                            const std::vector<std::uint16_t>& b) {
  runtime::Module module(d, m);
  runtime::Buffer da = upload(d, a), db = upload(d, b), out = poisoned(d, 16 * 8 * 4);
  module.launch("_Z13mma_bf16_tilePKtS0_Pf", {.grid = {1}, .block = {32}}, {da, db, out});
  d.synchronize();
  return out.download<float>(16 * 8);
}

}  // namespace warpforge::testing::nvcc_kernels
