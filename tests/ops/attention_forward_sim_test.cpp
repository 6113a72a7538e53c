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
