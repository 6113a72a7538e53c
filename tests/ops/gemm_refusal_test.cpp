// Every reason ops::Gemm refuses a problem, each asserted by its message:
// check_support() lists them all, compile() and gemm() throw OpsError with
// them.
#include <gtest/gtest.h>

#include "ops/expect_contains.hpp"
#include "ops/gemm_operands.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

class GemmRefusal : public ::testing::Test {
 protected:
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng{std::random_device{}()};

  DeviceMatrix matrix(DType t, std::int64_t rows, std::int64_t cols, std::int64_t l = 0,
                      bool row_major = true) {
    return make_matrix(dev, t, {l, rows, cols, row_major}, rng);
  }

  // The one reason given, checked against check_support() and compile().
  static std::string only_reason(Gemm& g) {
    auto why = g.check_support();
    std::string all;
    for (const auto& w : why) all += "\n  " + w;
    EXPECT_EQ(why.size(), 1u) << all;
    try {
      g.compile();
      ADD_FAILURE() << "compile() accepted a refused problem";
    } catch (const OpsError& e) {
      for (const auto& w : why) EXPECT_CONTAINS(e.what(), w);
    }
    return why.empty() ? std::string() : why.front();
  }
};

TEST_F(GemmRefusal, InputDtypes) {
  auto a = matrix(DType::f32, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view);
  EXPECT_EQ(only_reason(g), "A is f32; A and B must be bf16 or f16");
  auto h = matrix(DType::f16, 8, 8);
  Gemm mixed(b.view, h.view, nullptr, d.view);
  EXPECT_EQ(only_reason(mixed),
            "A is bf16 but B is f16; A and B must have the same dtype (bf16 or f16)");
}

TEST_F(GemmRefusal, OutputDtypes) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::bf16, 8, 8);
  auto wide = make_matrix(dev, DType::f32, {0, 8, 8}, rng);
  runtime::Buffer ints(dev, 8 * 8 * 4);
  runtime::TensorView di(ints, DType::i32, {8, 8});
  Gemm g(a.view, b.view, nullptr, di);
  EXPECT_EQ(only_reason(g), "D is i32; D must be f32, bf16 or f16");
  Gemm c_dtype(a.view, b.view, &wide.view, d.view, {.beta = 1.0f});
  EXPECT_EQ(only_reason(c_dtype), "C is f32 but D is bf16; C must have D's dtype");
}

TEST_F(GemmRefusal, Ranks) {
  auto b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  runtime::Buffer buf(dev, 8 * 2);
  runtime::TensorView vector(buf, DType::bf16, {8});
  Gemm g(vector, b.view, nullptr, d.view);
  EXPECT_CONTAINS(
      only_reason(g),
      "A bf16[8] strides [1] has rank 1; A must be (M, K) (rank 2) or batched (L, M, K) (rank 3)");
}

TEST_F(GemmRefusal, ShapesNameBothShapes) {
  auto a = matrix(DType::bf16, 8, 16), b = matrix(DType::bf16, 12, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view);
  EXPECT_EQ(only_reason(g),
            "A is [8, 16] and B is [12, 8]: A has K = 16 but B has K = 12; B must be (K, N)");
  auto b2 = matrix(DType::bf16, 16, 8), d2 = matrix(DType::f32, 8, 9);
  Gemm gd(a.view, b2.view, nullptr, d2.view);
  EXPECT_EQ(only_reason(gd),
            "D is [8, 9] but A [8, 16] and B [16, 8] make a (8, 8) result; D must be (M, N)");
  auto c = matrix(DType::f32, 9, 8);
  Gemm gc(a.view, b2.view, &c.view, d.view, {.beta = 1.0f});
  EXPECT_EQ(only_reason(gc), "C is [9, 8] but D is [8, 8]; C must have D's (M, N)");
}

TEST_F(GemmRefusal, EmptyExtents) {
  runtime::Buffer buf(dev, 64);
  runtime::TensorView a(buf, DType::bf16, {4, 0}), b(buf, DType::bf16, {0, 4});
  auto d = matrix(DType::f32, 4, 4);
  Gemm g(a, b, nullptr, d.view);
  EXPECT_EQ(only_reason(g), "K = 0; M, N and K must be >= 1");
}

TEST_F(GemmRefusal, OperandNeitherRowNorColumnMajor) {
  runtime::Buffer buf(dev, 64 * 64 * 2);
  runtime::TensorView a(buf, DType::bf16, {8, 8}, {16, 2});
  auto b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a, b.view, nullptr, d.view);
  EXPECT_EQ(only_reason(g),
            "A bf16[8, 8] strides [16, 2] is neither row-major (last stride 1) nor column-major "
            "(second-to-last stride 1); copy it to one of those layouts");
}

TEST_F(GemmRefusal, OverlappingD) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8);
  runtime::Buffer buf(dev, 64 * 4);
  runtime::TensorView d(buf, DType::f32, {8, 8}, {4, 1});
  Gemm g(a.view, b.view, nullptr, d);
  EXPECT_EQ(only_reason(g),
            "D f32[8, 8] strides [4, 1] has leading dimension 4 < 8, so its elements overlap; "
            "D needs ld >= 8");
}

TEST_F(GemmRefusal, BatchMismatch) {
  auto a = matrix(DType::bf16, 8, 8, 3), b = matrix(DType::bf16, 8, 8, 2),
       d = matrix(DType::f32, 8, 8, 3);
  Gemm g(a.view, b.view, nullptr, d.view);
  EXPECT_EQ(only_reason(g),
            "B has L = 2 batches but D has L = 3; each of A, B and C has D's L, or is rank 2 "
            "(shared by all batches)");
  auto d1 = matrix(DType::f32, 8, 8), b1 = matrix(DType::bf16, 8, 8);
  Gemm flat_d(a.view, b1.view, nullptr, d1.view);
  EXPECT_EQ(only_reason(flat_d),
            "A has L = 3 batches but D has L = 1; each of A, B and C has D's L, or is rank 2 "
            "(shared by all batches)");
}

TEST_F(GemmRefusal, BetaWithoutC) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view, {.beta = 0.5f});
  EXPECT_EQ(only_reason(g), "beta = 0.500000 but no C was given; give C, or beta = 0");
}

TEST_F(GemmRefusal, ForcedConfigurationThatTheKernelCannotBuild) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  GemmConfig bad{
      .tile_m = 96, .tile_n = 128, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 2};
  Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = bad});
  EXPECT_EQ(only_reason(g),
            "configuration 96x128x32 s3 w2x2 c1x1 for kernel sm80: tile_m = 96; the sm80 kernel "
            "takes a power of two from 16 to 256");
  GemmConfig stages{.stages = 1};
  Gemm g2(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = stages});
  EXPECT_EQ(only_reason(g2),
            "configuration 128x128x32 s1 w2x2 c1x1 for kernel sm80: stages = 1; the sm80 kernel "
            "pipelines 2 to 5 stages");
  GemmConfig tall{.tile_m = 256, .tile_n = 64, .tile_k = 32, .warps_m = 1, .warps_n = 2};
  Gemm g3(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = tall});
  auto why = g3.check_support();
  ASSERT_EQ(why.size(), 2u);
  EXPECT_CONTAINS(why[0],
                  "warp tile 256x32 (tile 256x64 over warps 1x2); each side must be 16 to 128");
  EXPECT_CONTAINS(
      why[1],
      "A tile 32x256 in copies of 1 elements does not divide among 64 threads (each thread "
      "copies whole rows' worth of copies)");
  GemmConfig regs{.tile_m = 128, .tile_n = 128, .tile_k = 64, .warps_m = 2, .warps_n = 2};
  Gemm g5(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = regs});
  EXPECT_CONTAINS(only_reason(g5),
                  "warp tile 64x64x64 holds 256 registers of accumulators and operands per thread; "
                  "at most 192 leave room for addresses within the 255-register limit");
  GemmConfig cluster{.cluster_m = 2};
  Gemm g4(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = cluster});
  EXPECT_EQ(only_reason(g4),
            "configuration 128x128x32 s3 w2x2 c2x1 for kernel sm80: cluster 2x1; the sm80 kernel "
            "has no clusters (1x1)");
}

TEST_F(GemmRefusal, EveryReasonAtOnce) {
  auto a = matrix(DType::f32, 8, 16), b = matrix(DType::bf16, 12, 8);
  runtime::Buffer ints(dev, 8 * 8 * 4);
  runtime::TensorView d(ints, DType::i32, {8, 8});
  Gemm g(a.view, b.view, nullptr, d, {.beta = 1.0f});
  auto why = g.check_support();
  EXPECT_EQ(why.size(), 4u);  // A's dtype, D's dtype, beta without C, K mismatch
  EXPECT_THROW(gemm(a.view, b.view, nullptr, d, {.beta = 1.0f}), OpsError);
}

TEST_F(GemmRefusal, ExecuteWithViewsOfAnotherProblem) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  auto a2 = matrix(DType::bf16, 8, 8, 0, false);
  Gemm g(a.view, b.view, nullptr, d.view);
  try {
    g.execute(a2.view, b.view, nullptr, d.view);
    ADD_FAILURE() << "execute() accepted another problem";
  } catch (const OpsError& e) {
    EXPECT_CONTAINS(e.what(), "the views describe 8x8x8 L1 bf16->f32 A col B row D row");
    EXPECT_CONTAINS(e.what(), "the Gemm was built for 8x8x8 L1 bf16->f32 A row B row D row");
  }
}

TEST_F(GemmRefusal, KernelAndConfigBeforeCompile) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80});
  EXPECT_THROW(g.kernel(), OpsError);
  EXPECT_THROW(g.config(), OpsError);
  g.compile();
  EXPECT_EQ(g.kernel(), GemmKernel::sm80);
  EXPECT_EQ(g.config().describe(), "64x64x32 s3 w2x2 c1x1");
}

TEST_F(GemmRefusal, BothInputsOfAnotherDtype) {
  auto a = matrix(DType::f32, 8, 8), b = matrix(DType::f32, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view);
  EXPECT_EQ(g.check_support(), (std::vector<std::string>{"A is f32; A and B must be bf16 or f16",
                                                         "B is f32; A and B must be bf16 or f16"}));
}

TEST_F(GemmRefusal, WarpGridOfTooManyWarps) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  GemmConfig sixteen{.tile_m = 128, .tile_n = 128, .tile_k = 32, .warps_m = 4, .warps_n = 4};
  Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .config = sixteen});
  EXPECT_EQ(only_reason(g),
            "configuration 128x128x32 s3 w4x4 c1x1 for kernel sm80: warp grid 4x4; the sm80 kernel "
            "takes powers of two with at most 8 warps");
}

TEST_F(GemmRefusal, ExecuteWithRefusedOrLessAlignedViews) {
  auto a = matrix(DType::bf16, 8, 8), b = matrix(DType::bf16, 8, 8), d = matrix(DType::f32, 8, 8);
  Gemm g(a.view, b.view, nullptr, d.view);
  auto wrong = matrix(DType::f16, 8, 8);
  try {
    g.execute(a.view, wrong.view, nullptr, d.view);
    ADD_FAILURE() << "execute() accepted refused views";
  } catch (const OpsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ops::Gemm::execute: the views are refused:\n  - A is bf16 but B is f16; A and B "
              "must have the same dtype (bf16 or f16)");
  }
  auto shifted =
      make_matrix(dev, DType::bf16, {0, 8, 8, true, 0, 2}, rng);  // 2 bytes past alignment
  try {
    g.execute(shifted.view, b.view, nullptr, d.view);
    ADD_FAILURE() << "execute() accepted a less aligned A";
  } catch (const OpsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ops::Gemm::execute:\n  - A's address is 2-byte aligned; the Gemm was compiled "
              "for 16-byte alignment");
  }
  auto elsewhere = make_matrix(runtime::Device::sim(), DType::bf16, {0, 8, 8}, rng);
  Gemm other(elsewhere.view, elsewhere.view, nullptr, d.view);
  EXPECT_THROW(other.compile(), OpsError);
}

TEST_F(GemmRefusal, ReferenceTakesFloatDtypesOnly) {
  runtime::Buffer ints(dev, 64);
  runtime::TensorView v(ints, DType::i32, {4, 4});
  try {
    HostTensor::download(v);
    ADD_FAILURE() << "downloaded i32";
  } catch (const OpsError& e) {
    EXPECT_EQ(std::string(e.what()), "HostTensor: dtype i32; f32, f16 or bf16 only");
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
