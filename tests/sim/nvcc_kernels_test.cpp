// nvcc's own PTX run on the simulator, kernel by kernel: device function
// calls (struct parameters and return values, recursion to the simulator's
// depth limit), printf through vprintf, fp8 conversions in a __noinline__
// function, shuffles, votes and __reduce_add_sync, cooperative-groups
// reductions, wmma in its f16, bf16 and tf32 forms, each against a host
// reference; and the kernels the simulator refuses (a texture read, an
// indirect call) refused alone, by name and PTX line, while the other
// kernels of their module run. Skips where the
// build found no recorded PTX (tests/corpus/ptx, tests/corpus/corpus.cmake).
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "nvcc_kernel_runs.hpp"
#include "sim_harness.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::sim::testing {
namespace {

using namespace warpforge::testing::nvcc_kernels;

#define CORPUS_MODULE(var, name)                                                       \
  std::optional<ptx::Module> var##_opt = corpus_module(name);                          \
  if (!var##_opt)                                                                      \
    GTEST_SKIP() << name << ".ptx is not in the build (recorded in tests/corpus/ptx)"; \
  const ptx::Module& var = *var##_opt

runtime::Device sim_device(SimOptions options = {.worker_threads = 2}) {
  return runtime::Device(make_backend(options));
}

// The SimError a launch throws (the test fails if none).
template <class F>
std::string error_of(F&& launch) {
  try {
    launch();
  } catch (const SimError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a SimError";
  return "";
}

TEST(NvccKernels, DeviceFunctionCallsWithStructsAndRecursion) {
  CORPUS_MODULE(m, "sim_calls.sm_90a.O3");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<float> pairs(2 * 128);
  for (float& v : pairs) v = value(rng);
  const int period = 13;
  const CallsResult r = run_calls(sim_device(), m, pairs, period);
  const auto fib = [](int n) {
    int a = 0, b = 1;
    for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
    return a;
  };
  for (int i = 0; i < 128; ++i) {
    const float x = pairs[2 * i], y = pairs[2 * i + 1];
    const float rx = 0.8f * x - 0.6f * y, ry = 0.6f * x + 0.8f * y;
    const float dot = rx * x + ry * y;
    // nvcc contracts some of these products into fma, which rounds once
    // where the reference rounds twice: a few float epsilons of the inputs'
    // magnitude (|x|, |y| <= 4).
    const float tolerance = 64 * std::numeric_limits<float>::epsilon();
    EXPECT_NEAR(r.out[3 * i], rx, tolerance) << i;
    EXPECT_NEAR(r.out[3 * i + 1], ry, tolerance) << i;
    EXPECT_NEAR(r.out[3 * i + 2], dot, 4 * tolerance) << i;
    EXPECT_EQ(r.fibs[i], fib(i % period)) << i;
  }
}

TEST(NvccKernels, RecursionDeeperThanTheLimitIsAClearError) {
  CORPUS_MODULE(m, "sim_calls.sm_90a.O3");
  runtime::Device d = sim_device();
  runtime::Module module(d, m);
  runtime::Buffer out = poisoned(d, 4);
  module.launch("_Z8deep_fibPii", {.grid = {1}, .block = {1}}, {out, std::int32_t{20}});
  EXPECT_EQ(out.download<std::int32_t>(1)[0], 6765);  // fib(20): 20 calls deep
  const std::string msg = error_of([&] {
    module.launch("_Z8deep_fibPii", {.grid = {1}, .block = {1}}, {out, std::int32_t{40}});
  });
  EXPECT_NE(msg.find("device function calls nested deeper than " + std::to_string(kMaxCallDepth)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("_Z8deep_fibPii"), std::string::npos) << msg;
}

// Values around the formats' edges: zeros, e4m3's and e5m2's largest
// normals and what lies past them (satfinite clamps), their subnormals,
// a tie, infinities.
std::vector<float> fp8_inputs() {
  std::vector<float> v = {0.0f,     -0.0f,    448.0f,   -448.0f, 464.0f,   480.0f,    1e6f,
                          -1e6f,    57344.0f, 61440.0f, 0x1p-9f, 0x1p-7f,  -0x1p-10f, 0x1p-16f,
                          0x1p-17f, 1.0625f,  1.1875f,  3.0f,    INFINITY, -INFINITY};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-500.0f, 500.0f);
  while (v.size() < 2 * 64) v.push_back(value(rng));
  return v;
}

void expect_fp8_reference(const Fp8Result& r, const std::vector<float>& in) {
  using runtime::DType;
  for (std::size_t i = 0; i < in.size() / 2; ++i) {
    const float x = in[2 * i], y = in[2 * i + 1];
    const std::uint32_t e4 = ops::encode(DType::e4m3, x) | ops::encode(DType::e4m3, y) << 8;
    const std::uint32_t e5 = ops::encode(DType::e5m2, x) | ops::encode(DType::e5m2, y) << 8;
    EXPECT_EQ(r.codes[i], e4 | e5 << 16) << std::hex << i << ": " << x << ", " << y;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(r.e4m3_values[2 * i]),
              std::bit_cast<std::uint32_t>(ops::decode(DType::e4m3, ops::encode(DType::e4m3, x))))
        << i;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(r.e4m3_values[2 * i + 1]),
              std::bit_cast<std::uint32_t>(ops::decode(DType::e4m3, ops::encode(DType::e4m3, y))))
        << i;
  }
}

// sm_90a: cvt.rn.satfinite.e4m3x2.f32 in the function; sm_80 has no fp8
// cvt, and cuda_fp8.h converts with integer arithmetic instead.
TEST(NvccKernels, Fp8ConversionsThroughANoinlineFunction) {
  for (const char* name : {"sim_calls.sm_90a.O3", "sim_calls.sm_80.O3"}) {
    SCOPED_TRACE(name);
    CORPUS_MODULE(m, name);
    const std::vector<float> in = fp8_inputs();
    expect_fp8_reference(run_fp8_convert(sim_device(), m, in), in);
  }
}

TEST(NvccKernels, ShufflesVotesAndReduceAddSync) {
  CORPUS_MODULE(m, "sim_warp.sm_90a.O3");
  std::vector<std::int32_t> in(32);
  std::mt19937 rng(5);
  for (auto& v : in) v = static_cast<std::int32_t>(rng() % 201) - 100;
  in[9] = 42;
  const std::vector<std::int32_t> out = run_warp_ops(sim_device(), m, in);
  std::int32_t sum = 0;
  std::uint32_t ballot = 0;
  bool all_nonzero = true;
  for (int l = 0; l < 32; ++l) {
    sum += in[l];
    ballot |= (in[l] > 0 ? 1u : 0u) << l;
    all_nonzero &= in[l] != 0;
  }
  for (int l = 0; l < 32; ++l) {
    const std::int32_t* o = &out[6 * l];
    EXPECT_EQ(o[0], in[l + 3 < 32 ? l + 3 : l]) << l;
    EXPECT_EQ(o[1], in[l ^ 5]) << l;
    EXPECT_EQ(o[2], in[(l * 7) & 31]) << l;
    EXPECT_EQ(static_cast<std::uint32_t>(o[3]), ballot) << l;
    EXPECT_EQ(o[4], sum) << l;
    EXPECT_EQ(o[5], 1 + 2 * all_nonzero) << l;
  }
}

TEST(NvccKernels, CooperativeGroupsReductions) {
  CORPUS_MODULE(m, "reduce_cg.sm_90a.O3");
  // Small integers: every order of the additions gives the same float.
  std::vector<float> in(1000);
  std::vector<std::int32_t> values(64);
  std::mt19937 rng(3);
  float sum = 0;
  for (float& v : in) sum += (v = static_cast<float>(static_cast<int>(rng() % 64) - 32));
  for (auto& v : values) v = static_cast<std::int32_t>(rng() % 9);
  const ReduceResult r = run_reduce_cg(sim_device(), m, in, values);
  EXPECT_EQ(r.sum, sum);
  for (int t = 0; t < 4; ++t) {
    const auto first = values.begin() + 16 * t;
    const std::int32_t max = *std::max_element(first, first + 16);
    EXPECT_EQ(r.maxima[t], max + std::count(first, first + 16, max)) << t;
  }
}

// tests/corpus/printf.cu: report(values, scale) prints one of two lines per
// thread. The simulator formats each call on the host and writes a warp's
// lines in lane order.
TEST(NvccKernels, PrintfFormatsOnTheHostInLaneOrder) {
  CORPUS_MODULE(m, "printf.sm_80.O3");
  std::vector<std::string> printed;
  runtime::Device d = sim_device(
      {.worker_threads = 2, .printf_output = [&](std::string_view s) { printed.emplace_back(s); }});
  runtime::Module module(d, m);
  const std::vector<std::int32_t> values = {3, -1, 7, 0, -5, 12, 1, -2};
  runtime::Buffer in = upload(d, values);
  module.launch("_Z6reportPKid", {.grid = {1}, .block = {8}}, {in, 0.25});
  std::vector<std::string> negative, other;
  for (int t = 0; t < 8; ++t) {
    char line[128];
    if (values[t] < 0) {
      std::snprintf(line, sizeof line, "thread %d of block 0: negative %d\n", t, values[t]);
      negative.push_back(line);
    } else {
      std::snprintf(line, sizeof line, "value %f, \"quoted\" and tab\t%lld\n", values[t] * 0.25,
                    static_cast<long long>(values[t]));
      other.push_back(line);
    }
  }
  // The two printf calls are two instructions; the warp runs one path, then the other.
  std::vector<std::string> want = other;
  want.insert(want.end(), negative.begin(), negative.end());
  if (!printed.empty() && printed[0].rfind("thread", 0) == 0) {
    want = negative;
    want.insert(want.end(), other.begin(), other.end());
  }
  EXPECT_EQ(printed, want);
}

TEST(NvccKernels, TextureKernelIsRefusedAloneByNameAndLine) {
  CORPUS_MODULE(m, "sim_warp.sm_90a.O3");
  runtime::Device d = sim_device();
  runtime::Module module(d, m);
  runtime::Buffer out = poisoned(d, 32 * 4);
  const std::string msg = error_of([&] {
    module.launch("_Z12texture_readyPf", {.grid = {1}, .block = {32}}, {std::uint64_t{0}, out});
  });
  EXPECT_NE(
      msg.find("kernel '_Z12texture_readyPf', PTX line " + std::to_string(line_of(m, "tex.1d"))),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("textures and surfaces are not simulated"), std::string::npos) << msg;
  // The module's other kernel runs.
  std::vector<std::int32_t> in(32, 1);
  EXPECT_EQ(run_warp_ops(d, m, in)[4], 32);
}

TEST(NvccKernels, IndirectCallsAreRefusedNamingTheirLine) {
  CORPUS_MODULE(m, "device_calls.sm_80.O3");
  runtime::Device d = sim_device();
  runtime::Module module(d, m);  // loads: its table of function addresses is no call
  runtime::Buffer buf = poisoned(d, 64);
  const std::string msg = error_of([&] {
    module.launch("_Z5callsPK4PairPfi", {.grid = {1}, .block = {1}}, {buf, buf, std::int32_t{1}});
  });
  EXPECT_NE(msg.find("indirect calls"), std::string::npos) << msg;
  EXPECT_NE(msg.find("PTX line"), std::string::npos) << msg;
}

// Multiples of 1/`steps` in [-2, 2], a few of them zero: products and their
// sums have few significant bits, so references in double (or float) are
// exact.
std::vector<float> fractions(std::size_t n, unsigned seed, int steps = 8) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> k(-2 * steps, 2 * steps);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(k(rng)) / static_cast<float>(steps);
  return v;
}

std::vector<std::uint16_t> f16_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> out;
  for (float x : v) out.push_back(ops::f32_to_f16_bits(x));
  return out;
}

std::vector<std::uint16_t> bf16_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> out;
  for (float x : v) out.push_back(ops::f32_to_bf16_bits(x));
  return out;
}

// The tensor-core sum truncates each term below 2^-25 of the step's largest
// and the sum to f32 (src/sim/tensor_core_sum.hpp): per step an error below
// 2^-20 of the terms' magnitudes.
void expect_tensor_core_sum(float got, double exact, double magnitude, int steps,
                            const std::string& what) {
  EXPECT_NEAR(got, exact, steps * 0x1p-20 * magnitude) << what;
}

TEST(NvccKernels, WmmaF16GemmMatchesTheHostReference) {
  CORPUS_MODULE(m, "wmma.sm_80.O3");
  const int m_dim = 32, n_dim = 32, k_dim = 48;
  const std::vector<float> a = fractions(m_dim * k_dim, 1), bt = fractions(n_dim * k_dim, 2);
  const std::vector<float> d =
      run_wmma_gemm(sim_device(), m, f16_bits(a), f16_bits(bt), m_dim, n_dim, k_dim);
  for (int i = 0; i < m_dim; ++i)
    for (int j = 0; j < n_dim; ++j) {
      double exact = 0, magnitude = 0;
      for (int k = 0; k < k_dim; ++k) {
        const double p = double{a[i * k_dim + k]} * bt[j * k_dim + k];
        exact += p;
        magnitude += std::fabs(p);
      }
      expect_tensor_core_sum(d[i * n_dim + j], 0.5 * exact, 0.5 * magnitude, k_dim / 16,
                             "D[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    }
}

TEST(NvccKernels, WmmaBf16M32n8k16MatchesTheHostReference) {
  CORPUS_MODULE(m, "wmma_forms.sm_80.O3");
  const std::vector<float> a = fractions(32 * 16, 3), b = fractions(16 * 8, 4),
                           c = fractions(32 * 8, 5);
  const std::vector<float> d = run_wmma_bf16(sim_device(), m, bf16_bits(a), bf16_bits(b), c);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 8; ++j) {
      double exact = c[i * 8 + j], magnitude = std::fabs(exact);
      for (int k = 0; k < 16; ++k) {
        const double p = double{a[i * 16 + k]} * b[k * 8 + j];
        exact += p;
        magnitude += std::fabs(p);
      }
      expect_tensor_core_sum(d[j * 32 + i], exact, magnitude, 1,  // D is stored column-major
                             "D[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    }
}

TEST(NvccKernels, WmmaTf32M16n16k8MatchesTheHostReference) {
  CORPUS_MODULE(m, "wmma_forms.sm_80.O3");
  // Values with more bits than tf32's 11, which the kernel rounds (cvt.rna).
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> a(16 * 8), b(8 * 16);
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  const auto tf32 = [](float x) {  // round to nearest, ties away from zero, to 10 fraction bits
    const std::uint32_t bits = (std::bit_cast<std::uint32_t>(x) + 0x1000u) & ~0x1FFFu;
    return double{std::bit_cast<float>(bits)};
  };
  const std::vector<float> d = run_wmma_tf32(sim_device(), m, a, b);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      double exact = 0, magnitude = 0;
      for (int k = 0; k < 8; ++k) {
        const double p = tf32(a[k * 16 + i]) * tf32(b[j * 8 + k]);  // both column-major
        exact += p;
        magnitude += std::fabs(p);
      }
      expect_tensor_core_sum(d[i * 16 + j], exact, magnitude, 1,
                             "D[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    }
}

TEST(NvccKernels, WmmaF16AccumulatorsRoundOnce) {
  CORPUS_MODULE(m, "wmma_forms.sm_80.O3");
  // Multiples of 1/64: the sums, multiples of 2^-12 below 2^7, need more
  // than f16's 11 bits, and are exact in f32.
  const std::vector<float> a = fractions(8 * 16, 7, 64), bt = fractions(32 * 16, 8, 64),
                           c = fractions(8 * 32, 9, 64);
  const std::vector<std::uint16_t> d =
      run_wmma_f16(sim_device(), m, f16_bits(a), f16_bits(bt), f16_bits(c));
  int rounded = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 32; ++j) {
      float exact = c[i * 32 + j];
      for (int k = 0; k < 16; ++k) exact += a[i * 16 + k] * bt[j * 16 + k];
      EXPECT_EQ(d[i * 32 + j], ops::f32_to_f16_bits(exact))
          << "D[" << i << "][" << j << "], exactly " << exact;
      rounded += ops::f16_bits_to_f32(ops::f32_to_f16_bits(exact)) != exact;
    }
  EXPECT_GT(rounded, 0)
      << "no sum needed rounding to f16: the test would not see a second rounding";
}

// nvcc's other builds of the same sources (sm_90a, -G, -lineinfo, -rdc)
// give the same bits as sm_80 -O3's on the simulator.
TEST(NvccKernels, WmmaGivesTheSameBitsInEveryBuildOfItsSource) {
  CORPUS_MODULE(gemm_ref, "wmma.sm_80.O3");
  CORPUS_MODULE(forms_ref, "wmma_forms.sm_80.O3");
  const std::vector<float> a = fractions(32 * 32, 10, 64), bt = fractions(32 * 32, 11, 64),
                           c = fractions(32 * 8, 12, 64);
  const auto gemm = [&](const ptx::Module& m) {
    return run_wmma_gemm(sim_device(), m, f16_bits(a), f16_bits(bt), 32, 32, 32);
  };
  const auto forms = [&](const ptx::Module& m) {
    std::vector<float> out = run_wmma_bf16(sim_device(), m, bf16_bits(a), bf16_bits(bt), c);
    const std::vector<float> tf32 = run_wmma_tf32(sim_device(), m, a, bt);
    out.insert(out.end(), tf32.begin(), tf32.end());
    for (std::uint16_t h : run_wmma_f16(sim_device(), m, f16_bits(a), f16_bits(bt), f16_bits(c)))
      out.push_back(static_cast<float>(h));
    return out;
  };
  const std::vector<float> gemm_bits = gemm(gemm_ref), forms_bits = forms(forms_ref);
  for (const char* variant : {"sm_80.lineinfo", "sm_90a.O3", "sm_90a.G", "sm_90a.rdc"}) {
    SCOPED_TRACE(variant);
    const std::optional<ptx::Module> g = corpus_module(std::string("wmma.") + variant);
    const std::optional<ptx::Module> f = corpus_module(std::string("wmma_forms.") + variant);
    ASSERT_TRUE(g && f) << "the corpus has sm_80.O3 but not " << variant;
    EXPECT_EQ(std::memcmp(gemm(*g).data(), gemm_bits.data(), gemm_bits.size() * 4), 0);
    EXPECT_EQ(std::memcmp(forms(*f).data(), forms_bits.data(), forms_bits.size() * 4), 0);
  }
}

}  // namespace
}  // namespace warpforge::sim::testing
