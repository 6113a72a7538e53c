// ops::Attention's forward (the sm90a and sm80 kernels) on the simulator
// against the fp64 reference and its bound, over the correctness cases of the issue: head_dim 64/128/256,
// sequence lengths that are not multiples of the blocks (1 to 300), causal
// and sliding windows (rows that see no key), both alignments, GQA and MQA,
// both memory orders and padded rows, varlen batches with KV lengths of 1,
// large logits, f16.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "../../src/ops/attention/sm80_softmax.hpp"
#include "../../src/ops/attention/sm80_tiles.hpp"
#include "ops/attention_cases.hpp"
#include "ops/expect_contains.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/sim/simulator.hpp"

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

// The sm90a kernel's persistent CTAs on a simulator of two SMs: two CTAs
// walk 12 items each (2 sequences x 3 heads x 4 blocks of 128 queries, the
// last ragged), each reusing Q's buffer and the ring across items; causal,
// pairs of a head's blocks (the last with the first, ...), and with an odd
// block count (3: the middle block alone); head_dim 128 (three stages).
TEST(AttentionForwardSimPersistent, TwoCtasWalkEveryItem) {
  const runtime::Device two_sms(sim::make_backend({.sm_count = 2}));
  std::mt19937 rng(std::random_device{}());
  AttentionCase c{.name = "persistent", .batch = 2, .heads_q = 3, .heads_kv = 3, .seq_q = 400, .seq_k = 150};
  auto t = make_attention_inputs(two_sms, c, rng);
  Attention probe({.q = t.q.view, .k = t.k.view, .v = t.v.view, .o = t.q.view}, c.options);
  EXPECT_CONTAINS(probe.describe(), "persistent CTAs, one an SM");
  check_attention_forward(two_sms, c, rng, AttentionKernel::sm90a);
  c.options.causal = true;
  Attention paired({.q = t.q.view, .k = t.k.view, .v = t.v.view, .o = t.q.view}, c.options);
  EXPECT_CONTAINS(paired.describe(), "over pairs of a head's last and first");
  check_attention_forward(two_sms, c, rng, AttentionKernel::sm90a);
  c.seq_q = 300;
  check_attention_forward(two_sms, c, rng, AttentionKernel::sm90a);
  // head_dim 128: three stages of 128 keys (the last block ragged), GQA.
  AttentionCase wide{.name = "persistent d128", .heads_q = 4, .heads_kv = 2, .seq_q = 300, .seq_k = 400,
                     .head_dim = 128};
  check_attention_forward(two_sms, wide, rng, AttentionKernel::sm90a);
}

// The persistent CTA's hand-overs under the simulator's race checker (which
// orders shared-memory accesses as the PTX memory model does): one SM, so one
// CTA walks every item, Q's buffer reloaded for each while K's and V's rings
// turn; not causal, and causal (pairs of blocks); one key block an item (each
// item's first block its last); head_dim 256 (one item a CTA, two-slot rings
// over three key blocks). The simulator completes a wgmma when it is issued,
// so a buffer freed before its reader's wait_group is not seen here.
TEST(AttentionForwardSimRaces, ThePersistentHandOversAreOrdered) {
  std::mt19937 rng(std::random_device{}());
  const runtime::Device checked(sim::make_backend({.worker_threads = 2, .sm_count = 1, .check_shared_races = true}));
  AttentionCase c{.name = "one CTA", .heads_q = 2, .heads_kv = 1, .seq_q = 300, .seq_k = 200};
  EXPECT_NO_THROW(check_attention_forward(checked, c, rng, AttentionKernel::sm90a));
  c.options.causal = true;
  EXPECT_NO_THROW(check_attention_forward(checked, c, rng, AttentionKernel::sm90a));
  c.options.causal = false;
  c.seq_k = 100;
  EXPECT_NO_THROW(check_attention_forward(checked, c, rng, AttentionKernel::sm90a));
  const AttentionCase wide{.name = "d256", .heads_q = 1, .heads_kv = 1, .seq_q = 60, .seq_k = 230, .head_dim = 256};
  EXPECT_NO_THROW(check_attention_forward(checked, wide, rng, AttentionKernel::sm90a));
}

// The softmax's exp2 on the FMA pipe (d64's share of the exponentials) on
// the simulator, whose add.rm/fma/shl/add compute the GPU's bits: within
// 2^-22 of 2^x relative on [-126, 8] (every 2^-12 step, every integer's
// neighbours, random values), +0 at and below -127 (-inf, the masked
// scores), at most 2^-127 off on [-127, -126); and the even, bounded
// counts the softmax takes.
TEST(AttentionExp2OnFma, WithinEx2ApproxsBoundAndZeroWhereMasked) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> probes{-inf, -1e30f, -300.0f, -127.0f, -126.999f, -126.5f, -126.0f, -1e-30f, -0.0f, 0.0f,
                            1e-30f, 127.0f};
  for (int n = -126 * 4096; n <= 8 * 4096; ++n) probes.push_back(static_cast<float>(n) / 4096.0f);
  for (int j = -126; j <= 8; ++j)
    for (float x : {std::nextafter(float(j), -inf), std::nextafter(float(j), inf)}) probes.push_back(x);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> any(-126.0f, 8.0f);
  while (probes.size() % 128 != 0) probes.push_back(any(rng));

  using namespace dsl;
  Kernel k("exp2_on_fma", Target::sm_80);
  Reg in = k.param_ptr("in", 4), out = k.param_ptr("out");
  Reg i = k.sreg(SReg::ctaid_x) * 128u + k.sreg(SReg::tid_x);
  Reg offset = k.reg(u64);
  k.mul_wide(offset, i, 4);
  Reg x = k.reg(f32);
  k.ld(Space::global, f32, x, at(in + offset));
  attention_sm80::exp2_on_fma(k, x);
  k.st(Space::global, f32, at(out + offset), x);
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer input(dev, probes.size() * 4), output(dev, probes.size() * 4);
  input.upload(probes);
  output.fill(0xAA);
  runtime::Module m(dev, k.module());
  m.launch("exp2_on_fma", {.grid = {static_cast<std::uint32_t>(probes.size() / 128)}, .block = {128}}, {input, output});
  dev.synchronize();
  const auto got = output.download<float>(probes.size());
  for (std::size_t j = 0; j < probes.size(); ++j) {
    const double x = probes[j], want = std::exp2(x), y = got[j];
    if (x <= -127) EXPECT_EQ(std::bit_cast<std::uint32_t>(got[j]), 0u) << "2^" << x;
    else if (x < -126) EXPECT_LE(std::abs(y - want), 0x1p-127) << "2^" << x;
    else EXPECT_LE(std::abs(y - want), 0x1p-22 * want) << "2^" << x << " = " << want << ", got " << y;
  }
  EXPECT_EQ(got[11], 0x1p127f);  // 2^127: the largest exponent the integer add reaches

  Kernel s("softmax", Target::sm_80);
  Reg scale = s.param(f32, "scale_log2");
  auto refusal = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const OpsError& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  EXPECT_CONTAINS(refusal([&] { attention_sm80::OnlineSoftmax(s, scale, 3); }), "fma_exp2 3 is not an even count");
  Kernel t("softmax", Target::sm_80);
  attention_sm80::OnlineSoftmax softmax(t, t.param(f32, "scale_log2"), 10);
  const tile::RegisterTile scores = attention_sm80::c_tile(t, 16, 16, "s");  // 8 scores a thread
  EXPECT_CONTAINS(refusal([&] { softmax.update_scores(t, scores); }), "fma_exp2 10 exceeds the 8 scores");
}

}  // namespace
}  // namespace warpforge::ops::testing
