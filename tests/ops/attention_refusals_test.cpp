// Every reason ops::Attention refuses a problem, each asserted by its
// message: check_support() lists them, compile() throws OpsError with them,
// execute() refuses views that differ from the construction's; describe()
// names the kernel; and the bound check itself fails where it must.
#include <gtest/gtest.h>

#include "ops/attention_cases.hpp"
#include "ops/expect_contains.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::TensorView;

class AttentionRefusal : public ::testing::Test {
 protected:
  runtime::Device dev = runtime::Device::sim();
  std::vector<runtime::Buffer> keep;

  TensorView tensor(DType t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
    std::int64_t extent = 1;
    if (strides.empty()) strides = TensorView::contiguous_strides(shape);
    for (std::size_t i = 0; i < shape.size(); ++i) extent += (shape[i] - 1) * strides[i];
    keep.emplace_back(dev, static_cast<std::size_t>(extent) * runtime::bits(t) / 8 + 16);
    return TensorView(keep.back(), t, shape, strides);
  }
  TensorView qkv(std::int64_t heads = 2, std::int64_t seq = 16, std::int64_t d = 64, DType t = DType::bf16) {
    return tensor(t, {1, heads, seq, d});
  }

  // The reasons given, checked against compile()'s message.
  static std::vector<std::string> reasons(Attention& op) {
    auto why = op.check_support();
    try {
      op.compile();
      ADD_FAILURE() << "compile() accepted a refused problem";
    } catch (const OpsError& e) {
      for (const auto& w : why) EXPECT_CONTAINS(e.what(), w);
    }
    EXPECT_CONTAINS(op.describe(), "refuses");
    return why;
  }
  static std::string only_reason(Attention& op) {
    auto why = reasons(op);
    std::string all;
    for (const auto& w : why) all += "\n  " + w;
    EXPECT_EQ(why.size(), 1u) << all;
    return why.empty() ? std::string() : why.front();
  }
};

TEST_F(AttentionRefusal, Dtypes) {
  auto q = qkv(2, 16, 64, DType::f32), k = qkv(), v = qkv(), o = qkv(2, 16, 64, DType::f32);
  Attention op({.q = q, .k = k, .v = v, .o = o});
  auto why = reasons(op);
  ASSERT_GE(why.size(), 2u);
  EXPECT_EQ(why[0], "Q is f32; attention takes bf16 or f16");
  auto h = qkv(2, 16, 64, DType::f16), b = qkv();
  Attention mixed({.q = b, .k = h, .v = b, .o = b});
  EXPECT_EQ(only_reason(mixed), "K is f16 and Q bf16; they must be of one dtype");
}

TEST_F(AttentionRefusal, HeadDims) {
  auto q = qkv(2, 16, 96), k = qkv(2, 16, 96), v = qkv(2, 16, 96), o = qkv(2, 16, 96);
  Attention op({.q = q, .k = k, .v = v, .o = o});
  EXPECT_EQ(only_reason(op), "head_dim = 96; attention takes 64, 128 or 256");
  auto k128 = qkv(2, 16, 128), q64 = qkv();
  Attention mixed({.q = q64, .k = k128, .v = q64, .o = q64});
  EXPECT_EQ(only_reason(mixed), "K's head_dim is 128 and Q's 64; they must be equal");
}

TEST_F(AttentionRefusal, Heads) {
  auto q = qkv(3), k = qkv(2), o = qkv(3);
  Attention op({.q = q, .k = k, .v = k, .o = o});
  EXPECT_EQ(only_reason(op), "heads_q = 3, heads_kv = 2; heads_kv must be >= 1 and divide heads_q (grouped-query attention)");
  auto v1 = qkv(1);
  Attention kv({.q = q, .k = qkv(3), .v = v1, .o = o});
  EXPECT_EQ(only_reason(kv), "V has 1 heads and K 3; they must be equal");
}

TEST_F(AttentionRefusal, Strides) {
  // Rows of 64 + 4 elements: 8-byte steps, not the 16 bytes the copies move.
  auto q = tensor(DType::bf16, {1, 2, 16, 64}, {2 * 16 * 68, 16 * 68, 68, 1}), k = qkv();
  Attention op({.q = q, .k = k, .v = k, .o = k});
  EXPECT_CONTAINS(only_reason(op), "Q's stride 68 (dimension 2 of bf16[1, 2, 16, 64]");
  auto t = tensor(DType::bf16, {1, 2, 16, 64}, {2 * 16 * 64, 16 * 64, 1, 16});
  Attention transposed({.q = k, .k = t, .v = k, .o = k});
  EXPECT_EQ(reasons(transposed).front(), "K's head_dim stride is 16; it must be 1 (head_dim contiguous)");
}

TEST_F(AttentionRefusal, Shapes) {
  auto q = qkv(2, 16), k = qkv(2, 16), o = qkv(2, 8), v = qkv(2, 9);
  Attention op({.q = q, .k = k, .v = v, .o = o});
  auto why = reasons(op);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_CONTAINS(why[0], "O is bf16[1, 2, 8, 64]");
  EXPECT_CONTAINS(why[1], "V is bf16[1, 2, 9, 64]");
  auto three = tensor(DType::bf16, {2, 16, 64});
  Attention rank({.q = three, .k = k, .v = k, .o = three});
  EXPECT_CONTAINS(reasons(rank).front(), "attention takes (batch, heads, seq, head_dim), rank 4");
}

TEST_F(AttentionRefusal, Lse) {
  auto q = qkv();
  auto wrong = tensor(DType::bf16, {1, 2, 16}), shape = tensor(DType::f32, {1, 16, 2});
  Attention a({.q = q, .k = q, .v = q, .o = q, .lse = &wrong});
  EXPECT_EQ(only_reason(a), "lse is bf16; it must be f32");
  Attention b({.q = q, .k = q, .v = q, .o = q, .lse = &shape});
  EXPECT_EQ(only_reason(b), "lse is f32[1, 16, 2] strides [32, 2, 1]; it must have shape (1, 2, 16) (batch, heads_q, seq_q)");
}

TEST_F(AttentionRefusal, Varlen) {
  auto q = tensor(DType::bf16, {40, 2, 64});
  auto cu = tensor(DType::i32, {3}), cu_wide = tensor(DType::i64, {3});
  Attention one({.q = q, .k = q, .v = q, .o = q, .cu_seqlens_q = &cu});
  EXPECT_CONTAINS(reasons(one).front(), "only cu_seqlens_q is given; varlen attention takes both");
  Attention no_max({.q = q, .k = q, .v = q, .o = q, .cu_seqlens_q = &cu, .cu_seqlens_k = &cu});
  EXPECT_EQ(only_reason(no_max), "max_seqlen_q = 0, max_seqlen_k = 0; varlen attention needs both >= 1 (they size the grid)");
  Attention wide({.q = q, .k = q, .v = q, .o = q, .cu_seqlens_q = &cu_wide, .cu_seqlens_k = &cu},
                 {.max_seqlen_q = 20, .max_seqlen_k = 20});
  EXPECT_EQ(only_reason(wide), "cu_seqlens_q is i64; it must be i32");
  auto d = qkv();
  Attention dense({.q = d, .k = d, .v = d, .o = d}, {.max_seqlen_q = 16});
  EXPECT_EQ(only_reason(dense), "max_seqlen_q/_k are given without cu_seqlens; they belong to varlen attention");
}

TEST_F(AttentionRefusal, ScaleAndMask) {
  auto q = qkv();
  Attention negative({.q = q, .k = q, .v = q, .o = q}, {.scale = -0.5});
  EXPECT_CONTAINS(only_reason(negative), "scale = -0.500000; it must be finite and > 0");
  Attention nan({.q = q, .k = q, .v = q, .o = q}, {.scale = std::nan("")});
  EXPECT_CONTAINS(only_reason(nan), "it must be finite and > 0");
  Attention both({.q = q, .k = q, .v = q, .o = q}, {.causal = true, .window_right = 3});
  EXPECT_EQ(only_reason(both), "causal with window_right = 3; causal means window_right = 0 (give one or the other)");
  Attention window({.q = q, .k = q, .v = q, .o = q}, {.window_left = -2});
  EXPECT_EQ(only_reason(window), "window (-2, -1); each side is -1 (unbounded) or >= 0");
}

TEST_F(AttentionRefusal, Devices) {
  runtime::Device other = runtime::Device::sim();
  auto q = qkv();
  runtime::Buffer elsewhere(other, 2 * 16 * 64 * 2);
  TensorView k(elsewhere, DType::bf16, {1, 2, 16, 64});
  Attention op({.q = q, .k = k, .v = q, .o = q});
  EXPECT_CONTAINS(only_reason(op), "every tensor must be on one device");
}

TEST_F(AttentionRefusal, DescribeNamesTheKernel) {
  auto q = qkv();
  Attention op({.q = q, .k = q, .v = q, .o = q}, {.causal = true});
  EXPECT_TRUE(op.check_support().empty());
  // The simulator stands for an sm_90a device: automatic takes the sm90a kernel.
  EXPECT_CONTAINS(op.describe(), "Attention bf16 b1 hq2 hkv2 sq16 sk16 d64 window(-1,0) scale 0.125: kernel sm90a, 128 query rows");
  EXPECT_EQ(op.workspace_bytes(), 0u);
  Attention named({.q = q, .k = q, .v = q, .o = q}, {.kernel = AttentionKernel::sm80});
  EXPECT_CONTAINS(named.describe(), "kernel sm80, 64x64 blocks");
  // A simulator standing for sm_100a has no wgmma: automatic passes sm90a over, saying why.
  const runtime::Device blackwell(sim::make_backend({.target = ptx::Target::sm_100a}));
  runtime::Buffer buffer(blackwell, 1 << 16);
  TensorView b(buffer, DType::bf16, {1, 2, 16, 64});
  Attention other({.q = b, .k = b, .v = b, .o = b});
  EXPECT_CONTAINS(other.describe(), "kernel sm80");
  EXPECT_CONTAINS(other.describe(), "not sm90a:\n  - device simulator");
  Attention forced({.q = b, .k = b, .v = b, .o = b}, {.kernel = AttentionKernel::sm90a});
  ASSERT_EQ(forced.check_support().size(), 1u);
  EXPECT_CONTAINS(forced.check_support()[0], "kernel sm90a refuses: device simulator");
}

TEST_F(AttentionRefusal, Sm90aCountsItsWorkUnitsInU32) {
  // 2^16 sequences x 256 heads x 128 blocks of 128 queries (head_dim 128)
  // = 2^31 items, over one head's rows (batch and head strides 0: no memory
  // for the rest).
  auto head = tensor(DType::bf16, {1, 1, 16384, 128});
  const TensorView many(keep.back(), DType::bf16, {65536, 256, 16384, 128}, {0, 0, 128, 1});
  Attention op({.q = many, .k = many, .v = many, .o = many}, {.kernel = AttentionKernel::sm90a});
  std::string all;
  for (const auto& w : op.check_support()) all += w + "\n";
  EXPECT_CONTAINS(all, "kernel sm90a refuses: 128 blocks of 128 queries x heads_q 256 x batch 65536 = 2147483648 work "
                       "units; the sm90a kernel counts at most 2^31 - 1");
  // Causal: the units are pairs of blocks, 2^30 of them: no refusal of their count.
  Attention causal({.q = many, .k = many, .v = many, .o = many}, {.causal = true, .kernel = AttentionKernel::sm90a});
  for (const auto& w : causal.check_support()) EXPECT_EQ(w.find("work units"), std::string::npos) << w;
}

TEST_F(AttentionRefusal, ExecuteRefusesOtherViews) {
  auto q = qkv(), bigger = qkv(2, 32);
  Attention op({.q = q, .k = q, .v = q, .o = q});
  try {
    op.execute({.q = q, .k = bigger, .v = q, .o = q});
    ADD_FAILURE() << "execute() took a K of another shape";
  } catch (const OpsError& e) {
    EXPECT_CONTAINS(e.what(), "K is bf16[1, 2, 32, 64]");
  }
  auto lse = tensor(DType::f32, {1, 2, 16});
  try {
    op.execute({.q = q, .k = q, .v = q, .o = q, .lse = &lse});
    ADD_FAILURE() << "execute() took an lse the op was not built with";
  } catch (const OpsError& e) {
    EXPECT_CONTAINS(e.what(), "lse is given");
  }
}

// execute_at checks what an address can say: the tensors the op was built
// with (lse given or not), each base's alignment.
TEST_F(AttentionRefusal, ExecuteAtNamesWhatIsWrong) {
  auto q = qkv();
  Attention op({.q = q, .k = q, .v = q, .o = q});
  const runtime::DevicePtr at = q.address();
  try {
    op.execute_at({at + 8, at, 0, at, at + 2, 0, 0});
    ADD_FAILURE() << "execute_at() took a misaligned Q, no V and an lse";
  } catch (const OpsError& e) {
    EXPECT_CONTAINS(e.what(), "Q starts at an address that is not 16-byte aligned");
    EXPECT_CONTAINS(e.what(), "V is missing (address 0)");
    EXPECT_CONTAINS(e.what(), "lse is given; the op was built without it");
  }
}

// The bound check fails where the result is wrong: the kernel's output of
// a causal problem whose weight sits on the diagonal, against the reference
// of the mask one key wider, and of another scale.
TEST(AttentionBoundCheck, FailsForAMaskOneKeyOffAndAnotherScale) {
  const runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  const AttentionCase c{.seq_q = 40, .seq_k = 40, .options = {.causal = true}, .ramp = true};
  AttentionInputs in = make_attention_inputs(dev, c, rng);
  AttentionTensor o = make_attention_tensor(dev, c, c.heads_q, in.rows_q, true, [](auto...) { return 0.0; });
  attention({.q = in.q.view, .k = in.k.view, .v = in.v.view, .o = o.view}, c.options);
  dev.synchronize();
  const auto got = attention_rows(HostTensor::download(o.view));
  const auto right = attention_reference(in.q.host, in.k.host, in.v.host, nullptr, c.options);
  EXPECT_EQ(check_within_bound(got, right.o, right.o_bound).failures, 0);
  const auto wider = attention_reference(in.q.host, in.k.host, in.v.host, nullptr, {.window_right = 1});
  // Every row but the last of the even heads (weight on the diagonal) moves.
  EXPECT_GT(check_within_bound(got, wider.o, wider.o_bound).failures, 38 * 64);
  const auto scaled = attention_reference(in.q.host, in.k.host, in.v.host, nullptr, {.scale = 0.13, .causal = true});
  EXPECT_GT(check_within_bound(got, scaled.o, scaled.o_bound).failures, 0);
}

}  // namespace
}  // namespace warpforge::ops::testing
