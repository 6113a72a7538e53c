// GemmAmax::check_support(): one test per rule, each asserting the message
// (value, rule, what is accepted); compile() and execute() refusals.
#include <gtest/gtest.h>

#include <algorithm>

#include "../../src/sim/sim_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

// A valid problem (e4m3 A 32x64, B 16x64, e8m0/32, f32 C 32x16, L 1) whose
// pieces each test replaces one at a time.
class GemmAmaxRefusals : public ::testing::Test {
 protected:
  runtime::Device dev = runtime::Device::sim();
  std::vector<std::shared_ptr<runtime::Buffer>> buffers;
  std::int64_t M = 32, N = 16, K = 64, L = 1;

  TensorView view(DType t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {},
                  const runtime::Device* on = nullptr) {
    buffers.push_back(std::make_shared<runtime::Buffer>(on ? *on : dev, 1 << 16));
    return TensorView(*buffers.back(), t, std::move(shape), std::move(strides));
  }
  TensorView data(DType t, std::int64_t rows, std::int64_t k = 64, std::int64_t l = 1) {
    return view(t, {rows, k, l}, {k, 1, rows * k});
  }
  TensorView scales(DType t, std::int64_t rows, int vec = 32, std::int64_t l = 1,
                    const runtime::Device* on = nullptr) {
    return view(t, {ScaleFactorLayout{rows, K, l, vec}.bytes()}, {}, on);
  }
  TensorView c_view(DType t = DType::f32) { return view(t, {M, N, L}, {N, 1, M * N}); }

  TensorView a = data(DType::e4m3, M), b = data(DType::e4m3, N), sfa = scales(DType::e8m0, M),
             sfb = scales(DType::e8m0, N), c = c_view(), amax = view(DType::f32, {1});
  GemmAmaxOptions options;

  std::vector<std::string> reasons() const {
    return GemmAmax(a, b, sfa, sfb, c, amax, options).check_support();
  }
  void expect_reason(const std::string& message) const {
    const auto r = reasons();
    std::string all;
    for (const auto& x : r) all += "\n  " + x;
    EXPECT_NE(std::find(r.begin(), r.end(), message), r.end())
        << "wanted: " << message << "\ngot:" << all;
  }
};

TEST_F(GemmAmaxRefusals, TheBaselineIsAccepted) {
  EXPECT_TRUE(reasons().empty());
}

TEST_F(GemmAmaxRefusals, DataDtypes) {
  a = data(DType::f16, M);
  expect_reason(
      "A dtype f16: A and B must be e4m3, e5m2 or FP4 (e2m1, or u8 holding two e2m1 per byte)");
  a = data(DType::e4m3, M);
  b = data(DType::e5m2, N);
  expect_reason("A is e4m3 but B is e5m2: A and B must have one data dtype");
  b = data(DType::bf16, N);
  expect_reason(
      "B dtype bf16: A and B must be e4m3, e5m2 or FP4 (e2m1, or u8 holding two e2m1 per byte)");
}

TEST_F(GemmAmaxRefusals, ScaleDtypes) {
  sfa = scales(DType::f32, M);
  expect_reason("SFA dtype f32: scales must be e8m0, e4m3 or i8 (meaning e8m0)");
  sfa = scales(DType::i8, M);  // i8 means e8m0: accepted
  EXPECT_TRUE(reasons().empty());
  sfb = scales(DType::u8, N);
  expect_reason("SFB dtype u8: scales must be e8m0, e4m3 or i8 (meaning e8m0)");
  a = data(DType::u8, M, 32), b = data(DType::u8, N, 32);  // FP4 bytes, K 64
  sfb = scales(DType::e4m3, N, 16), sfa = scales(DType::e8m0, M, 16);
  options.sf_vec_size = 16;
  expect_reason("SFA is e8m0 but SFB is e4m3: SFA and SFB must have one scale dtype");
}

TEST_F(GemmAmaxRefusals, CDtypeAndOptions) {
  c = c_view(DType::i32);
  expect_reason(
      "C dtype i32: C must be f32, f16, bf16, e4m3, e5m2 or FP4 (e2m1, or u8 holding two e2m1 per "
      "byte)");
  c = c_view(DType::bf16);
  expect_reason("C is bf16 but options.c_dtype is f32: they must agree");
  options.c_dtype = DType::i8;
  expect_reason("options.c_dtype i8: accepted f32, f16, bf16, e4m3, e5m2, e2m1");
}

TEST_F(GemmAmaxRefusals, AccumulatorVecAndAmax) {
  options.acc_dtype = DType::f16;
  expect_reason("acc_dtype f16: accumulation is f32 only");
  options.acc_dtype = DType::f32;
  options.sf_vec_size = 64;
  expect_reason("sf_vec_size 64: accepted 16 and 32");
  options.sf_vec_size = 32;
  amax = view(DType::f32, {2});
  expect_reason("amax is f32[2] strides [1]: expected f32 with one element");
}

TEST_F(GemmAmaxRefusals, E4m3ScalesNeedVec16) {
  a = data(DType::u8, M, 32), b = data(DType::u8, N, 32);
  sfa = scales(DType::e4m3, M), sfb = scales(DType::e4m3, N);
  expect_reason(
      "e4m3 scales with sf_vec_size 32: e4m3 (NVFP4) scales need sf_vec_size 16; with 32 use e8m0 "
      "scales");
}

TEST_F(GemmAmaxRefusals, Fp8DataNeedsVec32) {
  options.sf_vec_size = 16;
  sfa = scales(DType::e8m0, M, 16), sfb = scales(DType::e8m0, N, 16);
  expect_reason(
      "e4m3 data with sf_vec_size 16: FP8 data takes sf_vec_size 32 (MXFP8); 16 is for FP4");
}

TEST_F(GemmAmaxRefusals, Fp8InputsCannotMakeFp8C) {
  c = c_view(DType::e5m2);
  options.c_dtype = DType::e5m2;
  expect_reason("e4m3 A/B with e5m2 C: FP8 inputs need C of f32, f16 or bf16");
}

TEST_F(GemmAmaxRefusals, Fp4CNeedsFp4Inputs) {
  c = view(DType::u8, {M, N / 2, L}, {N / 2, 1, M * N / 2});
  options.c_dtype = DType::e2m1;
  expect_reason("FP4 C with e4m3 A/B: FP4 C needs FP4 A and B");
}

TEST_F(GemmAmaxRefusals, Fp4DataMustBeKMajor) {
  a = view(DType::u8, {M, K / 2, L}, {1, M, M * K / 2});
  b = data(DType::u8, N, 32);
  expect_reason("FP4 A strides (1, 32, 1024): FP4 data must be k-major (K of stride 1)");
}

TEST_F(GemmAmaxRefusals, Fp4CMustBeNMajor) {
  a = data(DType::u8, M, 32), b = data(DType::u8, N, 32);
  c = view(DType::u8, {M, N / 2, L}, {1, M, M * N / 2});
  options.c_dtype = DType::e2m1;
  options.c_major = CMajor::m;
  expect_reason("FP4 C strides (1, 32, 256): FP4 C must be n-major (N of stride 1)");
}

TEST_F(GemmAmaxRefusals, SixteenByteAlignment) {
  a = view(DType::e4m3, {M, K, L}, {72, 1, 72 * M});
  expect_reason(
      "A stride 72 along dimension 0 is 72 bytes: strides other than the contiguous dimension's "
      "must be "
      "multiples of 16 bytes (16 elements of e4m3)");
  a = data(DType::e4m3, M);
  c = view(DType::f32, {M, N, L}, {1, 34, 34 * N});
  options.c_major = CMajor::m;
  expect_reason(
      "C stride 34 along dimension 1 is 136 bytes: strides other than the contiguous dimension's "
      "must be "
      "multiples of 16 bytes (4 elements of f32)");
  buffers.push_back(std::make_shared<runtime::Buffer>(dev, 1 << 16));
  b = TensorView(*buffers.back(), DType::e4m3, {N, K, L}, {K, 1, N * K}, 8);
  c = c_view();
  options.c_major = CMajor::n;
  const auto r = reasons();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("B starts at address 0x"), std::string::npos) << r[0];
  EXPECT_NE(r[0].find(": the base must be 16-byte aligned"), std::string::npos) << r[0];
}

TEST_F(GemmAmaxRefusals, CMajorMustMatchTheOption) {
  options.c_major = CMajor::m;
  expect_reason("C strides (16, 1, 512) make C n-major but options.c_major is m: they must agree");
}

TEST_F(GemmAmaxRefusals, ShapesMustAgree) {
  b = data(DType::e4m3, N, 96);
  expect_reason("A has K 64 but B has K 96: A (M, K, L) and B (N, K, L) must share K");
  b = data(DType::e4m3, N);
  c = view(DType::f32, {M, N + 16, L}, {N + 16, 1, M * (N + 16)});
  expect_reason("C has shape (32, 32) per batch but A, B give (M, N) = (32, 16)");
  a = view(DType::e4m3, {M, K}, {K, 1});
  expect_reason("A has shape (32, 64): expected rank 3, (M, K, L)");
  a = view(DType::e4m3, {M, K, L}, {K * 2, 2, M * K * 2});
  expect_reason("A strides (128, 2, 4096): M or K must have stride 1");
}

TEST_F(GemmAmaxRefusals, ScaleTensorsMustHaveTheTiledLayout) {
  sfa = view(DType::e8m0, {100});
  expect_reason(
      "SFA has shape (100) strides (1): for 32 rows, K 64, L 1 and sf_vec_size 32 the 128x4 scale "
      "layout is 1-D (512) contiguous or 6-D shape (32, 4, 1, 4, 1, 1) strides (16, 4, 512, 1, "
      "512, 512)");
  const ScaleFactorLayout l{N, K, L, 32};
  sfb = view(DType::e8m0, l.shape6(), l.strides6());  // the 6-D form is accepted
  sfa = scales(DType::e8m0, M);
  EXPECT_TRUE(reasons().empty());
}

TEST_F(GemmAmaxRefusals, BatchMismatch) {
  b = data(DType::e4m3, N, 64, 2);
  expect_reason("batch mismatch: A has L 1, B has L 2: A, B and C must have one L");
  b = data(DType::e4m3, N);
  c = view(DType::f32, {M, N, 3}, {N, 1, M * N});
  expect_reason("batch mismatch: A has L 1, C has L 3: A, B and C must have one L");
}

TEST_F(GemmAmaxRefusals, DevicesMustMatch) {
  runtime::Device other(std::make_shared<sim::SimBackend>());
  sfb = scales(DType::e8m0, N, 32, 1, &other);
  const auto r = reasons();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("SFB is on "), std::string::npos) << r[0];
  EXPECT_NE(r[0].find(": every tensor must be on one device"), std::string::npos) << r[0];
}

TEST_F(GemmAmaxRefusals, TileAndClusterTheKernelLacks) {
  options.mma_tile = GemmAmaxTile{48, 64};
  options.cluster = GemmAmaxTile{2, 1};
  expect_reason("mma tile 48x64: the sm80 kernel takes tile M and N each in {32, 64, 128}");
  expect_reason("cluster shape 2x1: the sm80 kernel runs without clusters (1x1 only; 2x1 runs on the sm90a kernel, "
                "with 128x256 tiles of k-major A and B on sm_90a)");
}

TEST_F(GemmAmaxRefusals, CompileListsEveryReason) {
  options.acc_dtype = DType::f16;
  options.sf_vec_size = 64;
  GemmAmax op(a, b, sfa, sfb, c, amax, options);
  try {
    op.compile();
    FAIL() << "compile accepted a refused problem";
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(),
                 "GemmAmax refused 32x16x64 L1 e4m3 x e8m0/64 -> f32:\n"
                 "  - acc_dtype f16: accumulation is f32 only\n"
                 "  - sf_vec_size 64: accepted 16 and 32");
  }
}

TEST_F(GemmAmaxRefusals, ExecuteRefusesViewsOfAnotherDescription) {
  GemmAmax op(a, b, sfa, sfb, c, amax, options);
  const TensorView other_c = view(DType::f32, {M, N, L}, {32, 1, M * 32});
  try {
    op.execute(a, b, sfa, sfb, other_c, amax);
    FAIL() << "execute accepted a C of other strides";
  } catch (const OpsError& e) {
    EXPECT_STREQ(
        e.what(),
        "GemmAmax::execute refused:\n  - C is f32[32, 16, 1] strides [32, 1, 1024]: execute() "
        "needs views of the dtype, shape and strides GemmAmax was built with");
  }
}

}  // namespace
}  // namespace warpforge::ops
