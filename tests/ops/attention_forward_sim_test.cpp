// ops::Attention's forward (the sm90a and sm80 kernels) on the simulator
// against the fp64 reference and its bound, over the correctness cases of the issue: head_dim 64/128/256,
// sequence lengths that are not multiples of the blocks (1 to 300), causal
// and sliding windows (rows that see no key), both alignments, GQA and MQA,
// both memory orders and padded rows, varlen batches with KV lengths of 1,
// large logits, f16.
#include <gtest/gtest.h>

#include "ops/attention_cases.hpp"

namespace warpforge::ops::testing {
namespace {

std::vector<AttentionCase> forward_cases() {
  AttentionOptions causal{.causal = true};
  std::vector<AttentionCase> cases = {
      {.name = "d64 square", .seq_q = 64, .seq_k = 64},
      {.name = "d128 ragged causal", .seq_q = 100, .seq_k = 100, .head_dim = 128, .options = causal},
      {.name = "d256 batch 2", .batch = 2, .heads_q = 1, .heads_kv = 1, .seq_q = 40, .seq_k = 70, .head_dim = 256},
      {.name = "f16 d64", .seq_q = 65, .seq_k = 33, .dtype = runtime::DType::f16},
      {.name = "seq-major padded d128", .batch = 2, .seq_q = 30, .seq_k = 90, .head_dim = 128, .seq_major = true, .pad = 8},
      {.name = "MQA causal", .heads_q = 4, .heads_kv = 1, .seq_q = 70, .seq_k = 70, .options = causal},
      {.name = "GQA 2:1 window left", .heads_q = 4, .heads_kv = 2, .seq_q = 90, .seq_k = 90,
       .options = {.causal = true, .window_left = 16}},
      {.name = "window both sides", .seq_q = 130, .seq_k = 130, .options = {.window_left = 8, .window_right = 8}},
      {.name = "causal short queries (bottom-right)", .seq_q = 37, .seq_k = 150, .options = causal},
      {.name = "causal short queries (top-left)", .seq_q = 37, .seq_k = 150,
       .options = {.causal = true, .alignment = MaskAlignment::top_left}},
      {.name = "causal long queries: rows that see no key", .seq_q = 150, .seq_k = 37, .options = causal},
      {.name = "window past the keys: rows that see no key", .seq_q = 100, .seq_k = 20,
       .options = {.causal = true, .window_left = 4}},
      {.name = "one key", .seq_q = 33, .seq_k = 1},
      {.name = "one query one key", .heads_q = 1, .heads_kv = 1, .seq_q = 1, .seq_k = 1, .head_dim = 128},
      {.name = "seq 300", .heads_q = 1, .heads_kv = 1, .seq_q = 300, .seq_k = 300, .options = causal},
      {.name = "large logits", .seq_q = 80, .seq_k = 120, .head_dim = 128, .gain = 30},
      {.name = "ramp causal (weight on the diagonal)", .seq_q = 100, .seq_k = 100, .options = causal, .ramp = true},
      {.name = "ramp window (weight on both edges)", .seq_q = 100, .seq_k = 100,
       .options = {.window_left = 5, .window_right = 3}, .ramp = true},
      {.name = "varlen causal", .heads_q = 2, .heads_kv = 1, .options = causal},
      {.name = "varlen window seq-major", .heads_q = 2, .heads_kv = 2, .head_dim = 128, .seq_major = true,
       .options = {.window_left = 20, .window_right = 0}},
      {.name = "scale", .seq_q = 50, .seq_k = 50, .options = {.scale = 0.3}},
  };
  cases[18].lens_q = {5, 0, 130, 1}, cases[18].lens_k = {7, 3, 130, 1};
  cases[19].lens_q = {1, 64, 65}, cases[19].lens_k = {1, 80, 60};
  return cases;
}

class AttentionForwardSim : public ::testing::TestWithParam<std::tuple<int, AttentionKernel>> {};

TEST_P(AttentionForwardSim, MatchesTheFp64ReferenceWithinItsBound) {
  std::mt19937 rng(std::random_device{}());
  const auto [index, kernel] = GetParam();
  check_attention_forward(runtime::Device::sim(), forward_cases()[static_cast<std::size_t>(index)], rng, kernel);
}

// Every case on both kernels: sm90a (the warp-specialized template, TMA,
// wgmma; the simulator stands for an sm_90a device) and sm80.
INSTANTIATE_TEST_SUITE_P(Cases, AttentionForwardSim,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(forward_cases().size())),
                                            ::testing::Values(AttentionKernel::sm90a, AttentionKernel::sm80)),
                         [](const ::testing::TestParamInfo<std::tuple<int, AttentionKernel>>& info) {
                           std::string n = forward_cases()[static_cast<std::size_t>(std::get<0>(info.param))].name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n + "_" + std::string(name(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace warpforge::ops::testing
