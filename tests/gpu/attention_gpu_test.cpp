// Attention on a GPU: every correctness case the simulator runs
// (tests/ops/attention_cases.hpp, attention_decode_cases.hpp), on the device
// with fresh random inputs: the forward and the backward (fast and
// deterministic) on both kernels (sm90a where the GPU is one), decode; then shapes of a
// device's size (sequences of 1k to 2k, every head_dim, large logits, a
// ragged varlen batch, decode at 8k keys a sequence), each against the fp64
// reference within its bound. The Sanitize* tests are the small and ragged
// shapes scripts/gpu-attn-bwd.sh and gpu-attn-decode.sh run under
// compute-sanitizer.
#include <gtest/gtest.h>

#include "gpu_fixture.hpp"
#include "ops/attention_cases.hpp"
#include "ops/attention_decode_cases.hpp"

namespace warpforge::ops::testing {
namespace {

class AttentionGpu : public runtime::gpu_testing::GpuTest {
 protected:
  std::vector<AttentionKernel> forward_kernels(const runtime::Device& dev) const {
    if (dev.target() == ptx::Target::sm_90a) return {AttentionKernel::sm90a, AttentionKernel::sm80};
    return {AttentionKernel::sm80};
  }
  // The backward's kernels: sm90a on an sm_90a GPU, sm80 always.
  std::vector<AttentionKernel> backward_kernels(const runtime::Device& dev) const { return forward_kernels(dev); }
  std::mt19937 rng{std::random_device{}()};
};

TEST_F(AttentionGpu, ForwardCasesOnEveryKernel) {
  const runtime::Device dev = runtime::Device::cuda(0);
  for (const AttentionCase& c : forward_cases())
    for (AttentionKernel kernel : forward_kernels(dev)) {
      SCOPED_TRACE(c.name + " on " + std::string(name(kernel)));
      check_attention_forward(dev, c, rng, kernel);
    }
}

// The sm90a forward's persistent CTAs (one an SM) walking more units than
// the GPU has SMs, each CTA reusing Q's buffer and the ring across its
// items: 2 sequences x 40 heads x 3 blocks of 128 queries (240 items, the
// last block ragged), at head_dim 64 and 128, without a mask and causal
// (160 pairs of blocks, the middle one alone).
TEST_F(AttentionGpu, ForwardPersistentCtasWalkSeveralItems) {
  const runtime::Device dev = runtime::Device::cuda(0);
  if (dev.target() != ptx::Target::sm_90a) GTEST_SKIP() << "the sm90a kernel needs an sm_90a GPU";
  for (std::int64_t d : {64, 128})
    for (bool causal : {false, true}) {
      const AttentionCase c{.name = "persistent d" + std::to_string(d) + (causal ? " causal" : ""), .batch = 2,
                            .heads_q = 40, .heads_kv = 8, .seq_q = 300, .seq_k = 333, .head_dim = d,
                            .options = {.causal = causal}};
      SCOPED_TRACE(c.name);
      check_attention_forward(dev, c, rng, AttentionKernel::sm90a);
    }
}

TEST_F(AttentionGpu, BackwardCasesFastAndDeterministic) {
  const runtime::Device dev = runtime::Device::cuda(0);
  for (const AttentionCase& c : backward_cases())
    for (bool deterministic : {false, true})
      for (AttentionKernel kernel : backward_kernels(dev)) {
        SCOPED_TRACE(c.name + (deterministic ? " deterministic" : " atomics") + " on " + std::string(name(kernel)));
        check_attention_backward(dev, c, rng, deterministic, nullptr, kernel);
      }
}

TEST_F(AttentionGpu, DeterministicBackwardGivesTheSameBits) {
  const runtime::Device dev = runtime::Device::cuda(0);
  const AttentionCase c{.name = "GQA", .heads_q = 4, .heads_kv = 1, .seq_q = 700, .seq_k = 900, .head_dim = 128};
  AttentionInputs in = make_attention_inputs(dev, c, rng);
  EXPECT_EQ(check_attention_backward(dev, c, rng, true, &in), check_attention_backward(dev, c, rng, true, &in));
}

TEST_F(AttentionGpu, DecodeCases) {
  const runtime::Device dev = runtime::Device::cuda(0);
  for (const DecodeCase& c : decode_cases()) {
    SCOPED_TRACE(c.name);
    check_decode(dev, c, rng);
  }
}

TEST_F(AttentionGpu, DeviceSizedShapes) {
  const runtime::Device dev = runtime::Device::cuda(0);
  const std::vector<AttentionCase> cases = {
      {.name = "1k causal d128", .batch = 2, .heads_q = 1, .heads_kv = 1, .seq_q = 1024, .seq_k = 1024,
       .head_dim = 128, .options = {.causal = true}},
      {.name = "2k d64 GQA", .heads_q = 2, .heads_kv = 1, .seq_q = 2000, .seq_k = 2048, .head_dim = 64},
      {.name = "1k d256 window", .heads_q = 1, .heads_kv = 1, .seq_q = 1000, .seq_k = 1000, .head_dim = 256,
       .options = {.causal = true, .window_left = 300}},
      {.name = "large logits 1k", .heads_q = 1, .heads_kv = 1, .seq_q = 1024, .seq_k = 1024, .head_dim = 128,
       .gain = 30},
      {.name = "varlen ragged", .heads_q = 2, .heads_kv = 1, .head_dim = 128, .options = {.causal = true}},
  };
  std::vector<AttentionCase> all = cases;
  all.back().lens_q = {1, 700, 129, 64, 1000}, all.back().lens_k = {1, 700, 300, 64, 1000};
  for (const AttentionCase& c : all)
    for (AttentionKernel kernel : forward_kernels(dev)) {
      SCOPED_TRACE(c.name + " on " + std::string(name(kernel)));
      check_attention_forward(dev, c, rng, kernel);
    }
  for (const AttentionCase& c : all)
    for (AttentionKernel kernel : backward_kernels(dev)) {
      SCOPED_TRACE(c.name + " backward on " + std::string(name(kernel)));
      check_attention_backward(dev, c, rng, false, nullptr, kernel);
    }
  const DecodeCase long_decode{.name = "8k keys", .heads_q = 32, .heads_kv = 8, .q_tokens = 1, .head_dim = 128,
                               .page_size = 256, .kv_lens = {8192, 5000}};
  check_decode(dev, long_decode, rng);
}

// For compute-sanitizer (memcheck, racecheck, synccheck): a few small and
// ragged shapes of every kernel: the forward and the backward on each of
// their kernels, decode on the TMA-fed kernel and (pages of 24) the
// cp.async one. scripts/gpu-attn-decode.sh runs AttentionGpu.Sanitize*
// under each tool.
TEST_F(AttentionGpu, SanitizeSmallAndRagged) {
  const runtime::Device dev = runtime::Device::cuda(0);
  const auto fwd = forward_cases(), bwd = backward_cases();
  for (std::size_t i : {std::size_t{1}, std::size_t{11}, std::size_t{18}})
    for (AttentionKernel kernel : forward_kernels(dev)) check_attention_forward(dev, fwd[i], rng, kernel);
  for (std::size_t i : {std::size_t{1}, std::size_t{10}})
    for (AttentionKernel kernel : backward_kernels(dev))
      for (bool deterministic : {false, true})
        check_attention_backward(dev, bwd[i], rng, deterministic, nullptr, kernel);
  const auto dec = decode_cases();
  for (std::size_t i : {std::size_t{1}, std::size_t{7}, std::size_t{10}, std::size_t{11}}) {
    SCOPED_TRACE(dec[i].name);
    check_decode(dev, dec[i], rng);
  }
}

// The sm90a forward alone, for scripts/gpu-attn-fwd.sh's sanitizer runs:
// head_dim 256 over three key blocks (K's and V's two-slot rings wrap), a
// ragged causal d128 (persistent CTAs over pairs of blocks), varlen causal,
// and d64 without a mask (176-key blocks, the three-slot rings wrapping)
// over several items a CTA.
TEST_F(AttentionGpu, SanitizeForwardSmallAndRagged) {
  const runtime::Device dev = runtime::Device::cuda(0);
  if (dev.target() != ptx::Target::sm_90a) GTEST_SKIP() << "the sm90a kernel needs an sm_90a GPU";
  auto fwd = forward_cases();
  fwd.push_back({.name = "d64 dense, ragged", .heads_q = 2, .heads_kv = 1, .seq_q = 300, .seq_k = 900});
  for (std::size_t i : {std::size_t{2}, std::size_t{1}, std::size_t{18}, fwd.size() - 1}) {
    SCOPED_TRACE(fwd[i].name);
    check_attention_forward(dev, fwd[i], rng, AttentionKernel::sm90a);
  }
}

// The backward's first kernel alone (sm90a on an sm_90a GPU; the sm80
// kernels are in SanitizeSmallAndRagged), for scripts/gpu-attn-bwd.sh's
// sanitizer runs: a causal ragged case, a sliding window with GQA, varlen
// with empty and one-row sequences, and three query blocks a CTA (each
// shared buffer and hand-over barrier used again); fast and deterministic.
// HeadDim256: the 64-key design (one ring slot, the warpgroups' shared dSᵀ
// halves): causal GQA with a ragged key block, and three query blocks.
void sanitize_backward(const std::vector<AttentionCase>& cases, std::mt19937& rng) {
  const runtime::Device dev = runtime::Device::cuda(0);
  const AttentionKernel kernel =
      dev.target() == ptx::Target::sm_90a ? AttentionKernel::sm90a : AttentionKernel::sm80;
  for (const AttentionCase& c : cases)
    for (bool deterministic : {false, true}) check_attention_backward(dev, c, rng, deterministic, nullptr, kernel);
}

TEST_F(AttentionGpu, SanitizeBackwardSmallAndRagged) {
  std::vector<AttentionCase> cases;
  for (std::size_t i : {std::size_t{1}, std::size_t{4}, std::size_t{10}}) cases.push_back(backward_cases()[i]);
  cases.push_back({.name = "d64 causal, three query blocks", .seq_q = 300, .seq_k = 130, .options = {.causal = true}});
  sanitize_backward(cases, rng);
}

TEST_F(AttentionGpu, SanitizeBackwardHeadDim256) {
  sanitize_backward({backward_cases()[11], {.name = "d256, three query blocks", .heads_q = 1, .heads_kv = 1,
                                            .seq_q = 150, .seq_k = 70, .head_dim = 256}},
                    rng);
}

}  // namespace
}  // namespace warpforge::ops::testing
