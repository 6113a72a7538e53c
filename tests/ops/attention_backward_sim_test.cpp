// ops::AttentionBackward on the simulator (its sm90a and sm80 kernels): dQ, dK, dV of the forward's own
// O and lse against the fp64 reference's gradients within their bound, over
// the forward's cases (head_dim 64/128/256, ragged lengths, causal and
// sliding windows with rows that see no key, both alignments, GQA/MQA,
// varlen, both layouts, f16, large logits), fast (dQ by f32 atomics) and
// deterministic (dQ in a pass of its own: the same bits every run).
#include <gtest/gtest.h>

#include "ops/attention_cases.hpp"
#include "../../src/ops/attention/sm90a_backward_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

class AttentionBackwardSim : public ::testing::TestWithParam<std::tuple<int, bool, AttentionKernel>> {};

// The op's choice (sm90a on the simulator's sm_90a, every head_dim), and sm80 forced.
TEST_P(AttentionBackwardSim, MatchesTheFp64GradientsWithinTheirBound) {
  std::mt19937 rng(std::random_device{}());
  const auto [index, deterministic, kernel] = GetParam();
  const AttentionCase c = backward_cases()[static_cast<std::size_t>(index)];
  check_attention_backward(runtime::Device::sim(), c, rng, deterministic, nullptr, kernel);
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionBackwardSim,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(backward_cases().size())),
                                            ::testing::Bool(),
                                            ::testing::Values(AttentionKernel::automatic, AttentionKernel::sm80)),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool, AttentionKernel>>& info) {
                           std::string n = backward_cases()[static_cast<std::size_t>(std::get<0>(info.param))].name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n + (std::get<1>(info.param) ? "_deterministic_" : "_atomics_") +
                                  std::string(name(std::get<2>(info.param)));
                         });

TEST(AttentionBackwardSimDeterminism, TheDeterministicModeGivesTheSameBits) {
  std::mt19937 rng(std::random_device{}());
  const runtime::Device dev = runtime::Device::sim();
  const AttentionCase c{.name = "GQA", .heads_q = 2, .heads_kv = 1, .seq_q = 70, .seq_k = 130};
  AttentionInputs in = make_attention_inputs(dev, c, rng);
  const auto first = check_attention_backward(dev, c, rng, true, &in);
  const auto second = check_attention_backward(dev, c, rng, true, &in);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

// The sm90a backward's shared-memory hand-overs (dSᵀ between the consumer
// warpgroups through a named barrier, dQ from each consumer warpgroup to its
// writer and the TMA ring through mbarriers, dQ read by the writer's TMA
// reduce-adds when their group retires) on a
// simulator that checks every shared access against the orderings the PTX
// memory model gives them (sim/shared_races.hpp): several query blocks a
// CTA, so each buffer is written again after its reader freed it (and the
// gradients checked against fp64).
TEST(AttentionBackwardSimRaces, TheSm90aHandOversAreOrdered) {
  std::mt19937 rng(std::random_device{}());
  // 4 SMs: CTAs in groups of 4 / key blocks (head, sequence) pairs (KeyBlockWork).
  const runtime::Device checked(
      sim::make_backend({.worker_threads = 2, .sm_count = 4, .check_shared_races = true}));
  for (const AttentionCase& c :
       {AttentionCase{.name = "d128 GQA causal", .heads_q = 2, .heads_kv = 1, .seq_q = 200, .seq_k = 150,
                      .head_dim = 128, .options = {.causal = true}},
        // 128-query blocks, the second ragged and cut by the diagonal.
        AttentionCase{.name = "d64 causal", .heads_q = 2, .heads_kv = 2, .seq_q = 300, .seq_k = 130, .head_dim = 64,
                      .options = {.causal = true}},
        // 64-key blocks, each warpgroup half of dK's and dV's columns and of
        // Sᵀ's and dPᵀ's queries (Pᵀ and dSᵀ meet in shared memory), one
        // ring slot; three pairs in groups of two, the last alone.
        AttentionCase{.name = "d256", .batch = 3, .heads_q = 1, .heads_kv = 1, .seq_q = 150, .seq_k = 70,
                      .head_dim = 256}}) {
    SCOPED_TRACE(c.name);
    EXPECT_NO_THROW(check_attention_backward(checked, c, rng, false, nullptr, AttentionKernel::sm90a));
  }
  // d256 deterministic: Pᵀ and dSᵀ still go through shared memory (for dV and dK), without dQ's hand-over.
  const AttentionCase det{.name = "d256 deterministic", .heads_q = 1, .heads_kv = 1, .seq_q = 150, .seq_k = 70,
                          .head_dim = 256};
  EXPECT_NO_THROW(check_attention_backward(checked, det, rng, true, nullptr, AttentionKernel::sm90a));
}

TEST(AttentionBackwardSimWorkspace, IsDescribedAndSized) {
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer buffer(dev, 1 << 20);
  runtime::TensorView x(buffer, runtime::DType::bf16, {1, 2, 40, 64});
  runtime::TensorView lse(buffer, runtime::DType::f32, {1, 2, 40});
  const AttentionBackwardTensors t{.q = x, .k = x, .v = x, .o = x, .lse = lse, .d_o = x, .dq = x, .dk = x, .dv = x};
  AttentionBackward fast(t), det(t, {.deterministic = true});
  EXPECT_EQ(fast.workspace_bytes(), 2u * 40 * 4 + 40u * 2 * 64 * 4);  // D, then dq_accum
  EXPECT_EQ(det.workspace_bytes(), 2u * 40 * 4);
  EXPECT_NE(fast.describe().find("dQ added by TMA reduce-adds"), std::string::npos) << fast.describe();
  EXPECT_NE(det.describe().find("deterministic"), std::string::npos) << det.describe();
  AttentionBackward caller(t, {.caller_workspace = true});
  EXPECT_THROW(caller.execute(t), OpsError);
  // The simulator is an sm_90a device: head_dim 64 takes the sm90a backward.
  EXPECT_NE(fast.describe().find("kernel sm90a"), std::string::npos) << fast.describe();
  // head_dim 256 too, on 64-key blocks whose dK and dV columns the warpgroups split.
  runtime::TensorView x256(buffer, runtime::DType::bf16, {1, 2, 40, 256});
  const AttentionBackwardTensors t256{.q = x256, .k = x256, .v = x256, .o = x256, .lse = lse, .d_o = x256,
                                      .dq = x256, .dk = x256, .dv = x256};
  const std::string d256 = AttentionBackward(t256).describe();
  EXPECT_NE(d256.find("kernel sm90a"), std::string::npos) << d256;
  EXPECT_NE(d256.find("64-key blocks (each warpgroup half of dK's and dV's columns)"), std::string::npos) << d256;
  // d256 adds dQ with the writer warps' reds (the TMA reduce-add measured slower there: dq_by_tma_reduce).
  EXPECT_NE(d256.find("dQ added with f32 atomics by two writer warps"), std::string::npos) << d256;
}

// The dK/dV kernel's builder refuses a spec it cannot build (specs come
// from sm90a_backward_spec; a hand-made one names what is wrong).
TEST(AttentionBackwardSimWorkspace, TheSm90aKernelRefusesSpecsItCannotBuild) {
  const auto refusal = [](const Sm90aBackwardSpec& spec) {
    try {
      build_sm90a_backward_kv(spec);
    } catch (const OpsError& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  EXPECT_NE(refusal({.head_dim = 96}).find("head_dim 64, 128 or 256, not 96"), std::string::npos);
  EXPECT_NE(refusal({.head_dim = 256, .block_n = 128}).find("64-key blocks, not 128"), std::string::npos);
  EXPECT_EQ(refusal({.head_dim = 64, .block_m = 128}), "no refusal");
}

}  // namespace
}  // namespace warpforge::ops::testing
