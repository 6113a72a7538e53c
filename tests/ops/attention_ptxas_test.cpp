// Every attention kernel assembles with ptxas the way the CUDA driver
// compiles it (tests/ops/driver_ptxas.hpp): the sm90a forward for each
// head_dim and mask, and the sm90a backward's dK/dV kernel for each head_dim
// in both modes, without spills or serialized wgmma; the TMA-fed
// decode kernel without spills; the sm80 kernels
// (forward, decode, backward) for each head_dim, with what they spill
// reported (the sm_80 backward trades registers for simplicity at head_dim
// 128 and up).
#include <gtest/gtest.h>

#include <tuple>

#include "ops/driver_ptxas.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "../../src/ops/attention/decode_kernel.hpp"
#include "../../src/ops/attention/decode_tma_kernel.hpp"
#include "../../src/ops/attention/sm80_backward_kernels.hpp"
#include "../../src/ops/attention/sm80_forward_kernel.hpp"
#include "../../src/ops/attention/sm90a_backward_kernel.hpp"
#include "../../src/ops/attention/sm90a_forward_kernel.hpp"

namespace warpforge::ops::testing {
namespace {

bool have_ptxas() { return ptx::find_cuda_tool("ptxas").has_value(); }

TEST(AttentionPtxas, Sm90aForwardAssemblesWithoutSpillsOrSerializedWgmma) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  // head_dim 64 at 8k queries on three consumer warpgroups, at 64 on two.
  for (const auto& [d, seq_q] : {std::pair{64, 8192}, std::pair{64, 64}, std::pair{128, 1024}, std::pair{256, 1024}})
    for (bool causal : {false, true}) {
      AttentionProblem p;
      p.head_dim = d;
      p.seq_q = p.seq_k = seq_q;
      p.has_lse = true;
      p.window_right = causal ? 0 : -1;
      p.window_left = causal ? 64 : -1;
      const Sm90aAttentionSpec spec = sm90a_attention_spec(p);
      expect_fast_assembly(build_sm90a_attention_forward(spec).to_ptx(), spec.kernel_name());
    }
}

TEST(AttentionPtxas, Sm90aBackwardAssemblesWithoutSpillsOrSerializedWgmma) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  for (int d : {64, 128, 256})
    for (bool deterministic : {false, true})
      for (bool causal : {false, true}) {
        AttentionProblem p;
        p.head_dim = d;
        p.deterministic = deterministic;
        p.window_right = causal ? 0 : -1;
        const Sm90aBackwardSpec spec = sm90a_backward_spec(p);
        expect_fast_assembly(build_sm90a_backward_kv(spec).to_ptx(), spec.kernel_name());
      }
}

// The TMA-fed decode kernel (sm_90a, setmaxnreg) at its default tiling:
// the benchmarked shape (head_dim 128, 4 rows a KV head) and the one of the
// most registers (head_dim 256, 16 rows: four query tokens).
TEST(AttentionPtxas, DecodeTmaAssemblesWithoutSpills) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  for (const auto& [d, tokens, stages] : {std::tuple{128, 1, 6}, std::tuple{256, 4, 3}}) {
    const DecodeSpec spec{.head_dim = d, .group = 4, .q_tokens = tokens, .block_n = 64, .stages = stages,
                          .split_output = true, .sm90a = true, .tma = true, .page_rows = 64};
    expect_fast_assembly(build_decode_tma(spec).to_ptx(), spec.kernel_name());
  }
}

TEST(AttentionPtxas, Sm80KernelsAssemble) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  for (int d : {64, 128, 256}) {
    AttentionProblem p;
    p.head_dim = d;
    p.has_lse = true;
    p.window_right = 0;
    std::vector<std::pair<std::string, ptx::Module>> kernels = {
        {"forward", build_sm80_attention_forward(sm80_attention_spec(p))},
        {"decode", build_decode_split({.head_dim = d, .group = 4, .q_tokens = 2, .split_output = true})},
        // Hopper's build: the copies' L2 prefetch.
        {"decode sm90a",
         build_decode_split({.head_dim = d, .group = 4, .q_tokens = 2, .split_output = true, .sm90a = true})},
        {"decode sm90a one split", build_decode_split({.head_dim = d, .group = 4, .q_tokens = 2, .sm90a = true})}};
    for (bool deterministic : {false, true}) {
      p.deterministic = deterministic;
      const Sm80BackwardSpec b = sm80_backward_spec(p);
      kernels.push_back({b.name("rows"), build_sm80_backward_rows(b)});
      kernels.push_back({b.name("kv"), build_sm80_backward_kv(b)});
      kernels.push_back({b.name(deterministic ? "dq" : "finish"),
                         deterministic ? build_sm80_backward_dq(b) : build_sm80_backward_finish(b)});
    }
    for (const auto& [what, module] : kernels) {
      const ptx::PtxasResult r = recorded_ptxas(module.to_ptx(), "sm_90a", {"-c", "-v"});
      EXPECT_TRUE(r.ok) << what << " d" << d << ":\n" << r.log;
      const auto used = r.log.find("Used"), spill = r.log.find("bytes spill stores");
      if (used != std::string::npos && spill != std::string::npos)
        std::printf("%s d%d: %s; %s\n", what.c_str(), d, r.log.substr(used, r.log.find('\n', used) - used).c_str(),
                    r.log.substr(r.log.rfind(',', spill - 1) + 2, spill - r.log.rfind(',', spill - 1) + 16).c_str());
    }
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
