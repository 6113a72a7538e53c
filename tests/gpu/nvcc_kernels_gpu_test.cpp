// nvcc's own kernels (tests/sim/nvcc_kernel_runs.hpp) on the GPU and on the
// simulator, on the same inputs: the outputs must agree bit for bit. Skips
// without a GPU, or where the build found no recorded PTX (tests/corpus/ptx).
#include <cmath>
#include <cstring>
#include <random>

#include "gpu_fixture.hpp"
#include "sim/nvcc_kernel_runs.hpp"
#include "warpforge/ops/half.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using namespace warpforge::testing::nvcc_kernels;

class NvccKernelsGpu : public GpuTest {
 protected:
  ptx::Module module(const std::string& name) {
    auto m = corpus_module(name);
    if (!m)
      throw std::runtime_error(name + ".ptx is not in the build (recorded in tests/corpus/ptx)");
    return *m;
  }
};

template <class T>
void expect_same_bits(const std::vector<T>& gpu, const std::vector<T>& sim, const char* what) {
  ASSERT_EQ(gpu.size(), sim.size()) << what;
  int differing = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i)
    if (std::memcmp(&gpu[i], &sim[i], sizeof(T)) != 0 && ++differing <= 8)
      ADD_FAILURE() << what << "[" << i << "]: GPU " << gpu[i] << ", simulator " << sim[i];
  EXPECT_EQ(differing, 0) << what << ": elements differing between the GPU and the simulator";
}

TEST_F(NvccKernelsGpu, CallsAndRecursionAgreeWithTheSimulator) {
  const ptx::Module m = module("sim_calls.sm_90a.O3");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<float> pairs(2 * 128);
  for (float& v : pairs) v = value(rng);
  const CallsResult gpu = run_calls(Device::cuda(0), m, pairs, 13),
                    sim = run_calls(Device::sim(), m, pairs, 13);
  // rotate's x is sub.f32 of two mul.f32 without a rounding modifier, which
  // ptxas may contract into an fma (PTX ISA 9.7.3.5-6: mul and sub with no
  // rounding modifier "may be optimized aggressively by the code generator");
  // on an H100 it does, for one of the two, so x (and dot, which reads it)
  // may differ from the simulator's separate roundings by an ulp or so. y
  // (fma.rn) and the recursion's integers agree bit for bit.
  std::vector<float> gpu_y, sim_y;
  for (std::size_t i = 0; i < gpu.out.size(); ++i) {
    if (i % 3 == 1) {
      gpu_y.push_back(gpu.out[i]);
      sim_y.push_back(sim.out[i]);
    } else {
      // An ulp of x (|x| < 8) times |in| <= 4 in dot: 2^-17 absolute at most.
      EXPECT_NEAR(gpu.out[i], sim.out[i], 0x1p-17f) << "calls out[" << i << "]";
    }
  }
  expect_same_bits(gpu_y, sim_y, "calls out (y)");
  expect_same_bits(gpu.fibs, sim.fibs, "calls fibs");
}

TEST_F(NvccKernelsGpu, Fp8ConversionsAgreeWithTheSimulator) {
  std::vector<float> in = {0.0f,     -0.0f,    448.0f,   464.0f,   480.0f,   1e6f,
                           57344.0f, 61440.0f, 0x1p-9f,  0x1p-10f, 0x1p-16f, 0x1p-17f,
                           1.0625f,  3.0f,     INFINITY, -INFINITY};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-500.0f, 500.0f);
  while (in.size() < 2 * 64) in.push_back(value(rng));
  for (const char* name : {"sim_calls.sm_90a.O3", "sim_calls.sm_80.O3"}) {
    SCOPED_TRACE(name);
    const ptx::Module m = module(name);
    const Fp8Result gpu = run_fp8_convert(Device::cuda(0), m, in),
                    sim = run_fp8_convert(Device::sim(), m, in);
    expect_same_bits(gpu.codes, sim.codes, "fp8 codes");
    expect_same_bits(gpu.e4m3_values, sim.e4m3_values, "e4m3 values");
  }
}

TEST_F(NvccKernelsGpu, WarpOperationsAgreeWithTheSimulator) {
  const ptx::Module m = module("sim_warp.sm_90a.O3");
  std::vector<std::int32_t> in(32);
  std::mt19937 rng(5);
  for (auto& v : in) v = static_cast<std::int32_t>(rng() % 201) - 100;
  expect_same_bits(run_warp_ops(Device::cuda(0), m, in), run_warp_ops(Device::sim(), m, in),
                   "warp_ops");
}

TEST_F(NvccKernelsGpu, CooperativeGroupsReductionsAgreeWithTheSimulator) {
  const ptx::Module m = module("reduce_cg.sm_90a.O3");
  std::vector<float> in(1000);
  std::vector<std::int32_t> values(64);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);  // rounding in every addition
  for (float& v : in) v = value(rng);
  for (auto& v : values) v = static_cast<std::int32_t>(rng() % 9);
  const ReduceResult gpu = run_reduce_cg(Device::cuda(0), m, in, values);
  const ReduceResult sim = run_reduce_cg(Device::sim(), m, in, values);
  expect_same_bits(std::vector<float>{gpu.sum}, std::vector<float>{sim.sum}, "block_sum");
  expect_same_bits(gpu.maxima, sim.maxima, "warp_max");
}

// wmma.cu and wmma_forms.cu: every result bit of load -> mma -> store, on
// random inputs whose sums round and truncate (f16, bf16 and tf32 inputs;
// f32 and f16 accumulators).
TEST_F(NvccKernelsGpu, WmmaAgreesWithTheSimulator) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  const auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = value(rng);
    return v;
  };
  const auto bits = [](const std::vector<float>& v, std::uint16_t (*to)(float)) {
    std::vector<std::uint16_t> out;
    for (float x : v) out.push_back(to(x));
    return out;
  };
  for (const char* name : {"wmma.sm_80.O3", "wmma.sm_90a.O3"}) {
    SCOPED_TRACE(name);
    const ptx::Module m = module(name);
    const auto a = bits(random(32 * 64), ops::f32_to_f16_bits),
               bt = bits(random(48 * 64), ops::f32_to_f16_bits);
    expect_same_bits(run_wmma_gemm(Device::cuda(0), m, a, bt, 32, 48, 64),
                     run_wmma_gemm(Device::sim(), m, a, bt, 32, 48, 64), "wmma_f16_gemm");
  }
  for (const char* name : {"wmma_forms.sm_80.O3", "wmma_forms.sm_90a.O3"}) {
    SCOPED_TRACE(name);
    const ptx::Module m = module(name);
    const auto a16 = bits(random(32 * 16), ops::f32_to_bf16_bits),
               b16 = bits(random(16 * 8), ops::f32_to_bf16_bits);
    const auto c = random(32 * 8);
    expect_same_bits(run_wmma_bf16(Device::cuda(0), m, a16, b16, c),
                     run_wmma_bf16(Device::sim(), m, a16, b16, c), "wmma_bf16_m32n8k16");
    const auto a32 = random(16 * 8), b32 = random(8 * 16);
    expect_same_bits(run_wmma_tf32(Device::cuda(0), m, a32, b32),
                     run_wmma_tf32(Device::sim(), m, a32, b32), "wmma_tf32_m16n16k8");
    const auto ah = bits(random(8 * 16), ops::f32_to_f16_bits),
               bh = bits(random(32 * 16), ops::f32_to_f16_bits),
               ch = bits(random(8 * 32), ops::f32_to_f16_bits);
    expect_same_bits(run_wmma_f16(Device::cuda(0), m, ah, bh, ch),
                     run_wmma_f16(Device::sim(), m, ah, bh, ch), "wmma_f16_m8n32k16");
  }
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
