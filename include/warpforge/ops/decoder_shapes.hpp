// The GEMM shapes that decoder LLMs run, for benchmarks (bench_gemm
// --sweep llm, python -m warpforge.bench --sweep llm): the four projections
// of two published decoder sizes — hidden 4096 with intermediate 14336, and
// hidden 8192 with intermediate 28672, grouped-query attention with 8 KV
// heads of 128 — at M (tokens) from 1 to 8192. B is K x N.
#pragma once

#include <cstdint>
#include <vector>

namespace warpforge::ops {

struct GemmShape {
  std::int64_t m, n, k;
};

// (N, K) of each projection: QKV, O, gate and up together, down; for the
// 4096 model, then the 8192 one.
const std::vector<GemmShape>& decoder_projections();
// M of the sweep: decode (1 to 256) to prefill (512 to 8192).
const std::vector<std::int64_t>& decoder_tokens();
// Every projection at every M, projection-major.
std::vector<GemmShape> decoder_sweep();

}  // namespace warpforge::ops
