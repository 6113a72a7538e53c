// What ops::GroupedGemm refuses, each reason naming the value, the rule and
// what would be accepted; what execute() refuses; prepack_weights' checks
// and layout; the group schedule's host order and bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "../../src/ops/grouped_gemm/group_schedule.hpp"
#include "ops/grouped_gemm_cases.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

// Tensors over one zeroed buffer (views of any shape, dtype and strides).
struct Arena {
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer buffer{device, 1 << 20};
  runtime::TensorView view(DType t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {},
                           std::uint64_t offset = 0) {
    return runtime::TensorView(buffer, t, std::move(shape), std::move(strides), offset);
  }
};

// True when some reason contains every one of `parts`.
bool refused(const std::vector<std::string>& reasons, std::initializer_list<const char*> parts) {
  return std::any_of(reasons.begin(), reasons.end(), [&](const std::string& r) {
    return std::all_of(parts.begin(), parts.end(), [&](const char* p) { return r.find(p) != std::string::npos; });
  });
}

std::string all(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += "\n  " + r;
  return s;
}

TEST(GroupedGemmRefusals, DtypesShapesOffsetsAndOptions) {
  Arena x;
  auto a = x.view(DType::bf16, {64, 32}), b = x.view(DType::bf16, {4, 32, 16}), d = x.view(DType::f32, {64, 16});
  auto offsets = x.view(DType::i32, {4});
  {  // A of f32
    auto a32 = x.view(DType::f32, {64, 32});
    GroupedGemm op({a32, b, &offsets, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"A dtype f32", "bf16 or f16"})) << all(op.check_support());
  }
  {  // offsets of int64, and one too few
    auto o64 = x.view(DType::i64, {4}), o3 = x.view(DType::i32, {3});
    GroupedGemm op({a, b, &o64, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"offsets is", "expected int32"})) << all(op.check_support());
    GroupedGemm op3({a, b, &o3, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op3.check_support(), {"B has 4 groups", "offsets has 3"})) << all(op3.check_support());
  }
  {  // K and D disagree
    auto b_k = x.view(DType::bf16, {4, 40, 16}), d_n = x.view(DType::f32, {64, 17});
    GroupedGemm op({a, b_k, &offsets, d_n}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"A has K 32 but B has K 40"})) << all(op.check_support());
    EXPECT_TRUE(refused(op.check_support(), {"D has shape (64, 17)", "(64, 40)"}) ||
                refused(op.check_support(), {"D has shape (64, 17)"}))
        << all(op.check_support());
  }
  {  // out_dtype disagrees with D; amax for a bf16 problem
    runtime::TensorView amax = x.view(DType::f32, {1});
    GroupedGemm op({a, b, &offsets, d, nullptr, nullptr, &amax}, {.out_dtype = DType::bf16});
    EXPECT_TRUE(refused(op.check_support(), {"D is f32 but options.out_dtype is bf16"})) << all(op.check_support());
    EXPECT_TRUE(refused(op.check_support(), {"amax given", "take none"})) << all(op.check_support());
  }
  {  // mixed bf16 and f16; a stride that is not 16-byte aligned
    auto b16 = x.view(DType::f16, {4, 32, 16});
    auto a_odd = x.view(DType::bf16, {64, 32}, {33, 1});
    GroupedGemm op({a_odd, b16, &offsets, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"A is bf16 but B is f16"})) << all(op.check_support());
    EXPECT_TRUE(refused(op.check_support(), {"A stride 33", "multiples of 16 bytes"})) << all(op.check_support());
  }
  {  // B of another device
    runtime::Device other = runtime::Device::sim();
    runtime::Buffer elsewhere(other, 4 * 32 * 16 * 2);
    runtime::TensorView b_other(elsewhere, DType::bf16, {4, 32, 16});
    GroupedGemm op({a, b_other, &offsets, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"B is on", "one device"})) << all(op.check_support());
  }
}

TEST(GroupedGemmRefusals, TheRaggedDimensionMustNotBeContiguous) {
  Arena x;
  auto offsets = x.view(DType::i32, {4});
  {  // ragged M with A m-major
    auto a = x.view(DType::bf16, {64, 32}, {1, 64}), b = x.view(DType::bf16, {4, 32, 16});
    auto d = x.view(DType::f32, {64, 16});
    GroupedGemm op({a, b, &offsets, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"A is m-major", "make A's K contiguous"})) << all(op.check_support());
  }
  {  // ragged K with A k-major
    auto a = x.view(DType::bf16, {48, 64}), b = x.view(DType::bf16, {64, 16});
    auto d = x.view(DType::f32, {4, 48, 16});
    GroupedGemm op({a, b, &offsets, d}, {.out_dtype = DType::f32});
    EXPECT_TRUE(refused(op.check_support(), {"ragged K with K contiguous in A"})) << all(op.check_support());
  }
}

TEST(GroupedGemmRefusals, BlockScaledOperands) {
  Arena x;
  auto a = x.view(DType::bf16, {8, 256}), d = x.view(DType::bf16, {8, 40}), offsets = x.view(DType::i32, {2});
  const PackedWeightsLayout mxfp4{DType::e2m1, DType::e8m0, 32, 2, 256, 40};
  auto codes = x.view(DType::u8, {mxfp4.code_bytes()}), scales = x.view(DType::e8m0, {mxfp4.scale_bytes()});
  {  // accepted, and the stream kernel takes it
    GroupedGemm op({a, codes, &offsets, d, nullptr, &scales}, {.out_dtype = DType::bf16});
    EXPECT_TRUE(op.check_support().empty()) << all(op.check_support());
    EXPECT_EQ(op.kernel_name(), "stream");
  }
  {  // the packed codes one byte short
    auto short_codes = x.view(DType::u8, {mxfp4.code_bytes() - 1});
    GroupedGemm op({a, short_codes, &offsets, d, nullptr, &scales}, {.out_dtype = DType::bf16});
    EXPECT_TRUE(refused(op.check_support(), {"B is", std::to_string(mxfp4.code_bytes()).c_str(), "packed codes"}))
        << all(op.check_support());
  }
  {  // e4m3 scales with sf_vec_size 32; f16 A against block-scaled B
    auto e4m3_scales = x.view(DType::e4m3, {mxfp4.scale_bytes()});
    auto a16 = x.view(DType::f16, {8, 256});
    GroupedGemm op({a16, codes, &offsets, d, nullptr, &e4m3_scales}, {.out_dtype = DType::bf16});
    EXPECT_TRUE(refused(op.check_support(), {"e4m3 scales with sf_vec_size 32"})) << all(op.check_support());
    EXPECT_TRUE(refused(op.check_support(), {"A is f16 against block-scaled B", "A must be bf16"}))
        << all(op.check_support());
  }
  {  // A block-scaled in another format than B
    auto a8 = x.view(DType::e4m3, {8, 256}), sfa = x.view(DType::e8m0, {ScaleFactorLayout{8, 256, 1, 32}.bytes()});
    runtime::TensorView amax = x.view(DType::f32, {1});
    GroupedGemm op({a8, codes, &offsets, d, &sfa, &scales, &amax}, {.out_dtype = DType::bf16});
    EXPECT_TRUE(refused(op.check_support(), {"must share one format"})) << all(op.check_support());
  }
  {  // the sm90a kernel named for packed B against one token whose K is strided
    auto strided = x.view(DType::bf16, {1, 256}, {1, 8});
    auto d1 = x.view(DType::bf16, {1, 40});
    GroupedGemm op({strided, codes, &offsets, d1, nullptr, &scales},
                   {.out_dtype = DType::bf16, .kernel = GroupedGemmKernel::sm90a});
    EXPECT_TRUE(refused(op.check_support(), {"A's K not contiguous", "RS design"})) << all(op.check_support());
  }
  {  // the sm80 kernel named for packed B
    GroupedGemm op({a, codes, &offsets, d, nullptr, &scales},
                   {.out_dtype = DType::bf16, .kernel = GroupedGemmKernel::sm80});
    EXPECT_TRUE(refused(op.check_support(), {"block-scaled operands", "sm80"})) << all(op.check_support());
  }
  {  // the stream kernel named for bf16 B
    auto b = x.view(DType::bf16, {2, 256, 40});
    GroupedGemm op({a, b, &offsets, d}, {.out_dtype = DType::bf16, .kernel = GroupedGemmKernel::stream});
    EXPECT_TRUE(refused(op.check_support(), {"B's N is contiguous", "whose K is contiguous"})) << all(op.check_support());
    auto b16 = x.view(DType::f16, {2, 256, 40}), a16 = x.view(DType::f16, {8, 256});
    GroupedGemm f16({a16, b16, &offsets, d}, {.out_dtype = DType::bf16, .kernel = GroupedGemmKernel::stream});
    EXPECT_TRUE(refused(f16.check_support(), {"B is f16", "packed block-scaled weights"})) << all(f16.check_support());
    EXPECT_THROW(op.compile(), OpsError);
  }
}

TEST(GroupedGemmRefusals, ExecuteRefusesOtherViewsAndAMissingWorkspace) {
  Arena x;
  auto a = x.view(DType::bf16, {64, 32}), b = x.view(DType::bf16, {4, 32, 16}), d = x.view(DType::f32, {64, 16});
  auto offsets = x.view(DType::i32, {4});
  GroupedGemm op({a, b, &offsets, d}, {.out_dtype = DType::f32});
  ASSERT_TRUE(op.check_support().empty()) << all(op.check_support());
  auto other_a = x.view(DType::bf16, {32, 32});
  try {
    op.execute({other_a, b, &offsets, d});
    FAIL() << "a view of another shape was run";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find("A is bf16[32, 32]"), std::string::npos) << e.what();
  }
  try {
    op.execute({a, b, nullptr, d});
    FAIL() << "missing offsets were run";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find("offsets is absent"), std::string::npos) << e.what();
  }
  // The stream kernel splitting K (the tiling asked for by
  // WARPFORGE_STREAM_TILING: 8 splits) keeps its sums in a workspace: with
  // caller_workspace, execute() needs one.
  ::setenv("WARPFORGE_STREAM_TILING", "4,2,2,8", 1);
  const PackedWeightsLayout layout{DType::e2m1, DType::e8m0, 32, 1, 8192, 32};
  auto codes = x.view(DType::u8, {layout.code_bytes()}), scales = x.view(DType::e8m0, {layout.scale_bytes()});
  auto a1 = x.view(DType::bf16, {1, 8192}), d1 = x.view(DType::bf16, {1, 32});
  GroupedGemm split({a1, codes, nullptr, d1, nullptr, &scales}, {.out_dtype = DType::bf16, .caller_workspace = true});
  ASSERT_GT(split.workspace_bytes(), 0u) << split.describe();
  try {
    split.execute({a1, codes, nullptr, d1, nullptr, &scales});
    FAIL() << "a run without its workspace went ahead";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find("no workspace given"), std::string::npos) << e.what();
  }
  // A negative split, 0 CTAs an SM or a sixth field is refused, naming the
  // variable; 2 CTAs an SM are taken.
  for (const char* bad_tiling : {"4,2,2,-1", "4,2,2,8,0", "4,2,2,8,1,2"}) {
    ::setenv("WARPFORGE_STREAM_TILING", bad_tiling, 1);
    try {
      GroupedGemm bad({a1, codes, nullptr, d1, nullptr, &scales}, {.out_dtype = DType::bf16});
      FAIL() << bad_tiling << " was taken: " << bad.describe();
    } catch (const OpsError& e) {
      EXPECT_NE(std::string(e.what()).find("WARPFORGE_STREAM_TILING '" + std::string(bad_tiling) + "'"),
                std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("splits 0 or more, CTAs an SM 1-32"), std::string::npos) << e.what();
    }
  }
  ::setenv("WARPFORGE_STREAM_TILING", "4,2,2,8,2", 1);
  const GroupedGemm two({a1, codes, nullptr, d1, nullptr, &scales}, {.out_dtype = DType::bf16});
  EXPECT_NE(two.describe().find("2 CTAs an SM"), std::string::npos) << two.describe();
  ::unsetenv("WARPFORGE_STREAM_TILING");
}

TEST(PrepackWeights, RefusesBadFormatsAndSizes) {
  const std::vector<std::uint8_t> codes(16 * 64 / 2), scales(ScaleFactorLayout{16, 64, 1, 32}.bytes());
  EXPECT_THROW(prepack_weights({DType::e2m1, DType::e4m3, 32, 1, 64, 16}, codes, scales), OpsError);
  EXPECT_THROW(prepack_weights({DType::e2m1, DType::e8m0, 32, 1, 64, 16}, std::span(codes).first(10), scales),
               OpsError);
  try {
    prepack_weights({DType::e4m3, DType::e8m0, 16, 1, 64, 16}, codes, scales);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find("FP8 data takes sf_vec_size 32"), std::string::npos) << e.what();
  }
}

// The packed layout puts code (g, n, k) where the layout's comment says:
// block (g, n / 16, k / 256), load j, lane 4(n % 8) + (k % 256) / 64, and
// for FP4 the bits of the word kFp4Bits names.
TEST(PrepackWeights, PutsEachCodeWhereTheLayoutSays) {
  std::mt19937 rng(9);
  for (DType data : {DType::e2m1, DType::e4m3}) {
    const std::int64_t g = 2, n = 20, k = 300;
    const BlockScaledFormat f{data, DType::e8m0, 32};
    std::vector<float> x(static_cast<std::size_t>(g * n * k));
    std::normal_distribution<float> normal;
    for (float& v : x) v = normal(rng);
    const QuantizedMatrix q = quantize(x, n, k, g, f);
    const PackedWeightsLayout layout{data, DType::e8m0, 32, g, k, n};
    const PackedWeights p = prepack_weights(layout, q.data, q.scales);
    const bool fp4 = data == DType::e2m1;
    const std::int64_t piece = fp4 ? 32 : 64, loads = piece / 16;
    for (std::int64_t gg = 0; gg < g; ++gg)
      for (std::int64_t row = 0; row < n; ++row)
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const std::int64_t block = (gg * layout.row_tiles() + row / 16) * layout.chunks() + kk / 256;
          const std::int64_t lane = 4 * (row % 8) + (kk % 256) / 64, h = (row % 16) / 8, c = kk % 64;
          const std::int64_t byte_in_piece = fp4 ? c / 2 : c;
          const std::int64_t j = h * loads + byte_in_piece / 16;
          const std::uint8_t byte =
              p.codes[static_cast<std::size_t>(block * layout.block_bytes() + j * 512 + lane * 16 + byte_in_piece % 16)];
          std::uint8_t got = byte;
          if (fp4) {  // code i of its word: bit b at kFp4Bits[i / 2][b] + 16(i % 2)
            const int i = static_cast<int>(c % 8);
            const std::size_t word_at =
                static_cast<std::size_t>(block * layout.block_bytes() + j * 512 + lane * 16 + ((c / 8) * 4) % 16);
            std::uint32_t word = 0;
            for (int b = 0; b < 4; ++b) word |= static_cast<std::uint32_t>(p.codes[word_at + b]) << (8 * b);
            got = 0;
            for (int b = 0; b < 4; ++b)
              got |= static_cast<std::uint8_t>(((word >> (PackedWeightsLayout::kFp4Bits[i / 2][b] + 16 * (i % 2))) & 1)
                                               << b);
          }
          ASSERT_EQ(got, q.code(row, kk, gg)) << runtime::name(data) << " g " << gg << " n " << row << " k " << kk;
          const std::int64_t s = lane * 4 + h * 2 + c / 32;  // this code's scale byte
          ASSERT_EQ(p.scales[static_cast<std::size_t>(block * layout.scale_block_bytes() + s)],
                    q.scales[static_cast<std::size_t>(q.scale_layout().offset(row, kk / 32, gg))]);
        }
  }
}

TEST(GroupSchedule, HostOrderAndBound) {
  GroupScheduleOptions o{.groups = 4, .ragged_rows = true, .rows_per_tile = 8, .units_per_row = 3};
  const std::vector<std::int32_t> ends{0, 9, 9, 30};
  const auto units = host_group_units(o, ends, 33);
  // Group 1: 2 row tiles, group 3: 3, the pseudo-group (rows 30..32): 1; x 3 columns.
  ASSERT_EQ(units.size(), 18u);
  EXPECT_EQ(units.front(), (HostGroupUnit{1, 0, 9, 0, 0}));
  EXPECT_EQ(units[6], (HostGroupUnit{3, 9, 30, 0, 0}));
  EXPECT_EQ(units.back(), (HostGroupUnit{4, 30, 33, 0, 2}));
  EXPECT_LE(static_cast<std::int64_t>(units.size()), max_group_units(o, 33));
  std::mt19937 rng(10);
  GroupScheduleOptions sixteen = o;
  sixteen.groups = 16;
  for (int trial = 0; trial < 50; ++trial) {  // the bound holds for any routing
    const auto sizes = skewed_sizes(100, 16, 1.2, rng);
    EXPECT_LE(static_cast<std::int64_t>(host_group_units(sixteen, ends_of(sizes), 100).size()),
              max_group_units(sixteen, 100));
  }
  // Banded (the sm90a design's raster): group 3's 3 row tiles in bands of 2,
  // each band N-major; every (row tile, column) exactly once.
  GroupScheduleOptions banded = o;
  banded.band_rows = 2;
  const auto b = host_group_units(banded, ends, 33);
  ASSERT_EQ(b.size(), units.size());
  EXPECT_EQ(b[6], (HostGroupUnit{3, 9, 30, 0, 0}));
  EXPECT_EQ(b[7], (HostGroupUnit{3, 9, 30, 1, 0}));
  EXPECT_EQ(b[8], (HostGroupUnit{3, 9, 30, 0, 1}));
  EXPECT_EQ(b[12], (HostGroupUnit{3, 9, 30, 2, 0}));  // the last band has one row tile
  EXPECT_EQ(b[14], (HostGroupUnit{3, 9, 30, 2, 2}));
  std::vector<HostGroupUnit> sorted = b;
  auto key = [](const HostGroupUnit& u) { return std::tuple(u.group, u.row_tile, u.col); };
  std::sort(sorted.begin(), sorted.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  EXPECT_EQ(sorted, units);  // row-major is the sorted order
  GroupScheduleOptions fixed{.groups = 3, .ragged_rows = false, .units_per_row = 5};
  EXPECT_EQ(host_group_units(fixed, std::vector<std::int32_t>{0, 0, 4}, 4).size(), 15u);  // empty groups too
}

}  // namespace
}  // namespace warpforge::ops::testing
