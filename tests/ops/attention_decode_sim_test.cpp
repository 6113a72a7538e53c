// ops::AttentionDecode on the simulator against the fp64 reference and its
// bound: grouped-query packing from 1 to 64 rows a KV head, 1 to 8 query
// tokens, page sizes 16 to 256 (and one that is not a power of two), KV
// lengths of 1 and of the query tokens alone, the split kernel writing O
// itself (one split) or partials combined by their log-sum-exps in the CTA
// that finishes last (splits chosen or given, more splits than blocks, which
// leaves some empty; each case run twice, so its counters reset), causal,
// not causal, sliding window, f16, large logits; on an sm_80 simulator too.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>

#include "ops/attention_decode_cases.hpp"
#include "ops/expect_contains.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

class AttentionDecodeSim : public ::testing::TestWithParam<int> {};

TEST_P(AttentionDecodeSim, MatchesTheFp64ReferenceWithinItsBound) {
  std::mt19937 rng(std::random_device{}());
  check_decode(runtime::Device::sim(), decode_cases()[static_cast<std::size_t>(GetParam())], rng);
}

// The simulator is an sm_90a device, whose decode is built for sm_90a (the
// copies' L2 prefetch); the sm_80 build, which every other device takes, on
// an sm_80 simulator.
TEST(AttentionDecodeSimAmpere, SplitsAndOneSplitMatchTheReference) {
  std::mt19937 rng(std::random_device{}());
  const runtime::Device ampere(sim::make_backend({.target = ptx::Target::sm_80}));
  for (const auto& c : decode_cases())
    if (c.name == "one split" || c.name == "more splits than blocks" || c.name == "GQA 4:1 one token")
      check_decode(ampere, c, rng);
}

// The TMA-fed kernel's producer warp, the four computing warps' barriers
// and the zeroing of a page's unused rows, under the simulator's check of
// shared-memory races (any access two warps make unordered is a fault).
TEST(AttentionDecodeSimRaces, TheTmaKernelHasNoSharedMemoryRace) {
  std::mt19937 rng(std::random_device{}());
  const runtime::Device checked(sim::make_backend({.check_shared_races = true}));
  for (const auto& c : decode_cases())
    if (c.name == "one split" || c.name == "15 rows a KV head") check_decode(checked, c, rng);
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionDecodeSim, ::testing::Range(0, static_cast<int>(decode_cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string n = decode_cases()[static_cast<std::size_t>(info.param)].name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

TEST(AttentionDecodeRefusal, EveryReasonIsNamed) {
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer buffer(dev, 1 << 20);
  using runtime::DType;
  runtime::TensorView q(buffer, DType::bf16, {2, 6, 1, 96}), cache(buffer, DType::bf16, {4, 16, 4, 96}),
      o(buffer, DType::f16, {2, 6, 1, 96}), table(buffer, DType::i64, {2, 2}), lens(buffer, DType::i32, {3});
  AttentionDecode op({.q = q, .k_cache = cache, .v_cache = cache, .block_table = table, .kv_lens = lens, .o = o},
                     {.scale = 0.0, .window_left = -3, .splits = 5000});
  const auto why = op.check_support();
  std::string all;
  for (const auto& w : why) all += w + "\n";
  for (const char* part : {"O is f16 and Q bf16; they must be of one dtype", "head_dim = 96; decode takes 64, 128 or 256",
                           "heads_q = 6, heads_kv = 4; heads_kv must be >= 1 and divide heads_q",
                           "block_table is i64[2, 2]", "kv_lens is i32[3]", "scale = 0.000000; it must be finite and > 0",
                           "window_left = -3; it is -1 or >= 0", "splits = 5000; 0 (chosen) or 1 to 4096"})
    EXPECT_CONTAINS(all, part);
  EXPECT_EQ(why.size(), 8u) << all;
  EXPECT_THROW(op.compile(), OpsError);
  EXPECT_CONTAINS(op.describe(), "AttentionDecode refuses");
  runtime::TensorView wide(buffer, DType::bf16, {1, 16, 8, 64}), kc(buffer, DType::bf16, {4, 16, 1, 64}),
      t2(buffer, DType::i32, {1, 4}), l1(buffer, DType::i32, {1});
  AttentionDecode rows({.q = wide, .k_cache = kc, .v_cache = kc, .block_table = t2, .kv_lens = l1, .o = wide});
  ASSERT_EQ(rows.check_support().size(), 1u);
  EXPECT_EQ(rows.check_support()[0],
            "heads_q / heads_kv x q_tokens = 128 rows a KV head; decode takes up to 64 (1 to 8 tokens at up to 8 "
            "query heads a KV head)");
}

// Which kernel runs, and why the cp.async one where the TMA-fed one cannot:
// a page that is no power of two of keys from 16 (24), pages shorter than a
// warp's keys (17 to 32 rows a KV head split 64-key blocks between two warps
// of 32 keys), an sm_80 device.
TEST(AttentionDecodeRefusal, TheCpAsyncKernelSaysWhyNotTheTmaOne) {
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer buffer(dev, 1 << 22);
  using runtime::DType;
  auto describe = [&](const runtime::Device& d, runtime::Buffer& buf, std::int64_t heads_q, std::int64_t page_size) {
    runtime::TensorView q(buf, DType::bf16, {1, heads_q, 4, 64}), cache(buf, DType::bf16, {4, page_size, 1, 64}),
        table(buf, DType::i32, {1, 4}), lens(buf, DType::i32, {1});
    return AttentionDecode({.q = q, .k_cache = cache, .v_cache = cache, .block_table = table, .kv_lens = lens, .o = q})
        .describe();
  };
  EXPECT_CONTAINS(describe(dev, buffer, 1, 16), "TMA stages fed by a producer warp, copies of 16 keys");
  EXPECT_CONTAINS(describe(dev, buffer, 1, 256), "copies of 64 keys");
  EXPECT_CONTAINS(describe(dev, buffer, 1, 24),
                  "cp.async stages (not the TMA-fed kernel: page_size 24 is not 16, 32 or a multiple of 64");
  EXPECT_CONTAINS(describe(dev, buffer, 6, 16),
                  "(not the TMA-fed kernel: pages of 16 keys are shorter than a warp's 32 keys of a block (24 rows");
  const runtime::Device ampere(sim::make_backend({.target = ptx::Target::sm_80}));
  runtime::Buffer ampere_buffer(ampere, 1 << 22);
  EXPECT_CONTAINS(describe(ampere, ampere_buffer, 1, 16), "(not the TMA-fed kernel: the device is not sm_90");
}

// execute() keeps its launch's arguments between calls and remakes the TMA
// kernel's maps where a cache moved: an op built on one cache, run on
// another of the same shape, writes what an op built on that one writes.
TEST(AttentionDecodeSimTma, TheMapsFollowACacheThatMoved) {
  const runtime::Device dev = runtime::Device::sim();
  using runtime::DType;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_bf16 = [&](runtime::Buffer& b, std::size_t n) {
    std::vector<std::uint16_t> bits(n);
    for (auto& x : bits) x = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(normal(rng)) >> 16);
    b.copy_from_host(bits.data(), n * 2);
  };
  const std::size_t cache_n = 4 * 64 * 1 * 128, q_n = 4 * 128;
  runtime::Buffer q_buf(dev, q_n * 2), a_k(dev, cache_n * 2), a_v(dev, cache_n * 2), b_k(dev, cache_n * 2),
      b_v(dev, cache_n * 2), o1(dev, q_n * 2), o2(dev, q_n * 2), table_buf(dev, 16), lens_buf(dev, 4);
  for (auto* b : {&q_buf, &a_k, &a_v, &b_k, &b_v}) random_bf16(*b, b == &q_buf ? q_n : cache_n);
  const std::int32_t table[] = {2, 0, 3, 1}, len = 200;
  table_buf.copy_from_host(table, 16);
  lens_buf.copy_from_host(&len, 4);
  auto view = [](runtime::Buffer& b, std::vector<std::int64_t> shape) { return runtime::TensorView(b, DType::bf16, shape); };
  const runtime::TensorView q = view(q_buf, {1, 4, 1, 128}), table_v(table_buf, DType::i32, {1, 4}),
      lens_v(lens_buf, DType::i32, {1}), ak = view(a_k, {4, 64, 1, 128}), av = view(a_v, {4, 64, 1, 128}),
      bk = view(b_k, {4, 64, 1, 128}), bv = view(b_v, {4, 64, 1, 128}), out1 = view(o1, {1, 4, 1, 128}),
      out2 = view(o2, {1, 4, 1, 128});
  // (AttentionDecodeTensors holds references: the views above outlive them.)
  auto tensors = [&](const runtime::TensorView& k, const runtime::TensorView& v, const runtime::TensorView& o) {
    return AttentionDecodeTensors{.q = q, .k_cache = k, .v_cache = v, .block_table = table_v, .kv_lens = lens_v, .o = o};
  };
  AttentionDecode moved(tensors(ak, av, out1), {.splits = 2});
  EXPECT_CONTAINS(moved.describe(), "TMA stages");
  AttentionDecode fresh(tensors(bk, bv, out2), {.splits = 2});
  fresh.execute(tensors(bk, bv, out2));
  std::vector<std::uint16_t> got(q_n), want(q_n);
  o2.copy_to_host(want.data(), q_n * 2);
  // By views, then by addresses alone (execute_at: the Python paths').
  for (bool by_address : {false, true}) {
    o1.fill(0);
    moved.execute(tensors(ak, av, out1));
    if (by_address)
      moved.execute_at({q.address(), b_k.address(), b_v.address(), table_buf.address(), lens_buf.address(), o1.address(), 0});
    else
      moved.execute(tensors(bk, bv, out1));
    dev.synchronize();
    o1.copy_to_host(got.data(), q_n * 2);
    EXPECT_EQ(got, want) << (by_address ? "execute_at" : "execute");
  }
}

// execute_at checks what an address can say: alignment, the tensors the op
// was built with, a workspace where the caller owes one.
TEST(AttentionDecodeRefusal, TheAddressPathNamesWhatIsWrong) {
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer buffer(dev, 1 << 20);
  using runtime::DType;
  runtime::TensorView q(buffer, DType::bf16, {1, 4, 1, 64}), cache(buffer, DType::bf16, {4, 16, 1, 64}),
      table(buffer, DType::i32, {1, 4}), lens(buffer, DType::i32, {1});
  AttentionDecode op({.q = q, .k_cache = cache, .v_cache = cache, .block_table = table, .kv_lens = lens, .o = q},
                     {.splits = 2, .caller_workspace = true});
  const runtime::DevicePtr at = buffer.address();
  try {
    op.execute_at({at + 2, at, at, at, at, at, at});
    FAIL() << "refused nothing";
  } catch (const OpsError& e) {
    EXPECT_CONTAINS(e.what(), "Q starts at a misaligned address");
    EXPECT_CONTAINS(e.what(), "lse is given; the op was built without it");
    EXPECT_CONTAINS(e.what(), "no workspace given: with caller_workspace, execute() needs one of");
  }
}

// The GPU sweep's tiling (WARPFORGE_DECODE_TILING): one the kernel cannot
// take is a refusal that names it and what it would accept.
TEST(AttentionDecodeRefusal, ATilingTheKernelCannotTakeIsNamed) {
  const runtime::Device dev = runtime::Device::sim();
  runtime::Buffer buffer(dev, 1 << 20);
  using runtime::DType;
  runtime::TensorView q(buffer, DType::bf16, {1, 4, 1, 64}), cache(buffer, DType::bf16, {4, 16, 1, 64}),
      table(buffer, DType::i32, {1, 4}), lens(buffer, DType::i32, {1});
  const AttentionDecodeTensors t{.q = q, .k_cache = cache, .v_cache = cache, .block_table = table, .kv_lens = lens,
                                 .o = q};
  for (const char* bad : {"32,3", "64", "64,1", "x"}) {
    ::setenv("WARPFORGE_DECODE_TILING", bad, 1);
    const auto why = AttentionDecode(t).check_support();
    ASSERT_EQ(why.size(), 1u) << bad;
    EXPECT_CONTAINS(why[0], "WARPFORGE_DECODE_TILING '" + std::string(bad) +
                                "': expected BLOCK_N,STAGES, block_n a multiple of 64 up to 256");
  }
  ::setenv("WARPFORGE_DECODE_TILING", "128,2", 1);
  EXPECT_TRUE(AttentionDecode(t).check_support().empty());
  ::unsetenv("WARPFORGE_DECODE_TILING");
}

}  // namespace
}  // namespace warpforge::ops::testing
