// nvcc's own kernels (issue 26, "real compiler output runs"): the PTX nvcc
// writes for CUDA sources kept in tests/corpus, recorded in tests/corpus/ptx
// (nvcc_ptx.cmake) and launched as tests/sim/nvcc_kernel_runs.hpp launches
// them: device function calls with struct arguments and recursion, fp8
// conversions in a __noinline__ function (sm_90a's cvt and sm_80's integer
// emulation), shuffles, votes and __reduce_add_sync, cooperative-groups
// reductions, printf, an ldmatrix + mma.sync tile, and wmma in its f16, bf16
// and tf32 forms. Inputs come from the unit's seed; a unit's fingerprint is a
// digest of its PTX, so the replay notes a different nvcc's output.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "difftest/families.hpp"
#include "difftest/mma_inputs.hpp"
#include "difftest/stdout_capture.hpp"
#include "sim/nvcc_kernel_runs.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::difftest {

namespace {

namespace nk = testing::nvcc_kernels;

// The PTX nvcc wrote for `file` ("sim_calls.sm_90a": the source's stem and
// the target), as recorded in tests/corpus/ptx.
std::string nvcc_ptx(const std::string& file) {
  const std::filesystem::path path =
      std::filesystem::path(WARPFORGE_PTX_CORPUS_DIR) / (file + ".O3.ptx");
  std::ifstream in(path);
  if (!in)
    throw Error(
        "nvcc family: " + path.string() +
        " is missing; scripts/record-ptx-corpus.sh records it (tools/difftest/nvcc_ptx.cmake)");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class T>
void append(std::vector<std::uint8_t>& bytes, const std::vector<T>& values) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(values.data());
  bytes.insert(bytes.end(), p, p + values.size() * sizeof(T));
}

template <class T>
void append_one(std::vector<std::uint8_t>& bytes, const T& value) {
  append(bytes, std::vector<T>{value});
}

using Body =
    std::function<std::vector<std::uint8_t>(const runtime::Device&, const ptx::Module&, Rng&)>;

// A unit that runs `body` on the module of `file`, its inputs drawn from
// the seed.
Unit nvcc_unit(const std::string& what, const std::string& file, std::int64_t cases, Body body,
               Tolerance tolerance = {}) {
  Unit u;
  u.name = what + " (" + file + ")";
  u.cases = cases;
  u.tolerance = tolerance;
  u.run = [file, body = std::move(body)](const runtime::Device& device, std::uint64_t seed) {
    const std::string text = nvcc_ptx(file);
    Rng rng(seed);
    Outcome o;
    o.bytes = body(device, ptx::parse(text), rng);
    o.fingerprint = runtime::to_hex(runtime::sha256(text)).substr(0, 16);
    return o;
  };
  return u;
}

float uniform(Rng& rng, float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(rng.below(1u << 24)) * 0x1p-24f;
}

// Matrix elements of f (exponents within 2^±spread, random signs, some
// zeros and subnormals; no infinities or NaNs), as 16-bit patterns.
std::vector<std::uint16_t> elements(Rng& rng, const FloatFormat& f, std::size_t n, int spread) {
  const MmaWarpInputs warp{spread, false};
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(matrix_element(rng, f, warp, spread));
  return v;
}

// f32 values of exponents within 2^±spread, all mantissa bits random (tf32
// reads the upper 19 bits of each register).
std::vector<float> f32_elements(Rng& rng, std::size_t n, int spread) {
  std::vector<float> v(n);
  for (auto& x : v)
    x = std::bit_cast<float>(static_cast<std::uint32_t>(float_moderate(rng, kF32, spread)));
  return v;
}

constexpr int kCallThreads = 1024;  // sim_calls.cu `calls`: 16 blocks of 64
constexpr int kFibPeriod = 13;      // fib(i % 13): recursion 12 calls deep

// rotate(p) = (0.8 x - 0.6 y, 0.6 x + 0.8 y) and dot(rotate(p), p) of pairs
// in [-4, 4].
nk::CallsResult run_calls(const runtime::Device& d, const ptx::Module& m, Rng& rng) {
  std::vector<float> pairs(2 * kCallThreads);
  for (float& v : pairs) v = uniform(rng, -4.0f, 4.0f);
  return nk::run_calls(d, m, pairs, kFibPeriod);
}

// Pairs for the fp8 conversions: the f32 edges, values about the e4m3 and
// e5m2 ranges (2^-18 to 2^17), and ties of 3 and 2 mantissa bits.
std::vector<float> fp8_inputs(Rng& rng, std::size_t pairs) {
  std::vector<float> v(2 * pairs);
  for (float& x : v) {
    const std::uint64_t r = rng.below(4);
    const std::uint64_t bits = r == 0   ? float_value(rng, kF32)
                               : r == 1 ? float_moderate(rng, kF32, 18)
                                        : float_tie(rng, kF32, r == 2 ? 3 : 2);
    x = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
  }
  return v;
}

constexpr std::size_t kFp8Pairs = 1024;
constexpr int kWarpLaunches = 16, kReduceLaunches = 64, kMmaTiles = 16;

// printf.cu `report` by one warp: each lane prints one of two lines. Each
// line is a case, padded with zeros to kLineBytes. `order`: the lines sorted
// (what was printed, whatever the order), or as printed within each of the
// two printf calls (each call's lines in lane order, as the simulator says
// a GPU prints them), the groups in a fixed order: which side of its branch
// a divergent warp runs first is ptxas's choice, which the PTX does not state.
enum class LineOrder { sorted, per_call };
constexpr std::size_t kPrintfLanes = 32, kLineBytes = 64;
std::vector<std::uint8_t> printf_lines(const runtime::Device& d, const ptx::Module& m, Rng& rng,
                                       LineOrder order) {
  std::vector<std::int32_t> values(kPrintfLanes);
  for (auto& v : values) v = static_cast<std::int32_t>(rng.below(2001)) - 1000;
  const double scale = std::ldexp(static_cast<double>(rng.bits() >> 11), -53 + 4);  // [0, 16)
  std::string text;
  {
    StdoutCapture capture;
    nk::run_printf_report(d, m, values, scale);
    text = capture.text();
  }
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size() - 1);
    lines.push_back(text.substr(start, end + 1 - start));
    start = end + 1;
  }
  // A GPU prints every line at the synchronize; fewer mean the capture
  // missed some (the unit is then recorded as refused, with this message).
  if (lines.size() != kPrintfLanes)
    throw Error("nvcc family: printf's report printed " + std::to_string(lines.size()) +
                " lines on stdout, one a thread is " + std::to_string(kPrintfLanes) + ": '" +
                text.substr(0, 200) + "'");
  if (order == LineOrder::sorted)
    std::sort(lines.begin(), lines.end());
  else
    std::stable_partition(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.rfind("thread ", 0) == 0; });
  std::vector<std::uint8_t> bytes;
  for (const std::string& l : lines) {
    if (l.size() > kLineBytes)
      throw Error("nvcc family: printf printed a line of " + std::to_string(l.size()) +
                  " bytes, more than the " + std::to_string(kLineBytes) + " a case holds: " + l);
    bytes.insert(bytes.end(), l.begin(), l.end());
    bytes.resize(bytes.size() + kLineBytes - l.size(), 0);
  }
  return bytes;
}

}  // namespace

Family nvcc_family() {
  Family f{"nvcc",
           "nvcc's own kernels: calls and recursion, fp8 conversions, shuffles and votes, "
           "cooperative groups, printf, ldmatrix + mma.sync, wmma f16/bf16/tf32",
           {},
           WARPFORGE_DIFFTEST_NVCC
               ? ""
               : "tests/corpus/ptx held no nvcc PTX when the build was configured "
                 "(scripts/record-ptx-corpus.sh records it; tools/difftest/nvcc_ptx.cmake)"};
  // rotate's y (fma.rn in the PTX) and the recursion's integers: every bit.
  f.units.push_back(nvcc_unit("calls: rotate's y, fib", "sim_calls.sm_90a", 2 * kCallThreads,
                              [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                const nk::CallsResult r = run_calls(d, m, rng);
                                std::vector<std::uint8_t> bytes;
                                for (int i = 0; i < kCallThreads; ++i)
                                  append_one(bytes, r.out[3 * i + 1]);
                                append(bytes, r.fibs);
                                return bytes;
                              }));
  // rotate's x is sub.f32 of two mul.f32 with no rounding modifier, which
  // ptxas contracts (PTX ISA 9.7.3.5-6: "may be optimized aggressively by
  // the code generator"): the first mul into an fma, as the simulator does
  // (src/sim/contraction.hpp); x, and dot which reads it, every bit.
  f.units.push_back(nvcc_unit(
      "calls: rotate's x, dot", "sim_calls.sm_90a", 2 * kCallThreads,
      [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
        const nk::CallsResult r = run_calls(d, m, rng);
        std::vector<std::uint8_t> bytes;
        for (int i = 0; i < kCallThreads; ++i) {
          append_one(bytes, r.out[3 * i]);
          append_one(bytes, r.out[3 * i + 2]);
        }
        return bytes;
      }));
  // sm_90a converts with cvt.rn.satfinite.e4m3x2.f32; sm_80 has no fp8 cvt
  // and cuda_fp8.h emulates it with integer arithmetic. A case: the codes
  // word and the e4m3 pair decoded back to f32.
  for (const char* file : {"sim_calls.sm_90a", "sim_calls.sm_80"})
    f.units.push_back(
        nvcc_unit("fp8_convert: e4m3x2 and e5m2x2 codes, e4m3 decoded", file, kFp8Pairs,
                  [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                    const nk::Fp8Result r = nk::run_fp8_convert(d, m, fp8_inputs(rng, kFp8Pairs));
                    std::vector<std::uint8_t> bytes;
                    for (std::size_t i = 0; i < kFp8Pairs; ++i) {
                      append_one(bytes, r.codes[i]);
                      append_one(bytes, r.e4m3_values[2 * i]);
                      append_one(bytes, r.e4m3_values[2 * i + 1]);
                    }
                    return bytes;
                  }));
  // A case: one lane's six results (shfl down/xor/idx, ballot,
  // __reduce_add_sync, any + 2 all) in one of kWarpLaunches warps.
  f.units.push_back(
      nvcc_unit("warp_ops: shuffles, votes, __reduce_add_sync", "sim_warp.sm_90a",
                kWarpLaunches * 32, [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                  std::vector<std::uint8_t> bytes;
                  for (int launch = 0; launch < kWarpLaunches; ++launch) {
                    std::vector<std::int32_t> in(32);
                    const bool zeros = rng.percent(50);  // else __all_sync(v != 0) may hold
                    for (auto& v : in) {
                      v = static_cast<std::int32_t>(rng.below(201)) - 100;
                      if (!zeros && v == 0) v = 1;
                      if (rng.percent(5)) v = 42;  // __any_sync(v == 42)
                    }
                    append(bytes, nk::run_warp_ops(d, m, in));
                  }
                  return bytes;
                }));
  // A case: one launch's block_sum of 1,000 values in [-1, 1] (every
  // addition rounds, in the kernel's order: tiles, cg::reduce, shuffles, one
  // atomicAdd) or one of its four warp_max results.
  f.units.push_back(nvcc_unit("block_sum, warp_max: cooperative groups", "reduce_cg.sm_90a",
                              kReduceLaunches * 5,
                              [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                std::vector<std::uint8_t> bytes;
                                for (int launch = 0; launch < kReduceLaunches; ++launch) {
                                  std::vector<float> in(1000);
                                  for (float& v : in) v = uniform(rng, -1.0f, 1.0f);
                                  std::vector<std::int32_t> values(64);
                                  for (auto& v : values)
                                    v = static_cast<std::int32_t>(rng.below(9));
                                  const nk::ReduceResult r = nk::run_reduce_cg(d, m, in, values);
                                  append_one(bytes, r.sum);
                                  append(bytes, r.maxima);
                                }
                                return bytes;
                              }));
  for (const LineOrder order : {LineOrder::sorted, LineOrder::per_call})
    f.units.push_back(nvcc_unit(order == LineOrder::sorted
                                    ? "report: printf, the lines sorted"
                                    : "report: printf, each call's lines in the order printed",
                                "printf.sm_90a", kPrintfLanes,
                                [order](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                  return printf_lines(d, m, rng, order);
                                }));
  f.units.push_back(nvcc_unit("mma_bf16_tile: cp.async, ldmatrix, mma.sync m16n8k16 bf16",
                              "mma_sync.sm_80", kMmaTiles * 16 * 8,
                              [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                std::vector<std::uint8_t> bytes;
                                for (int tile = 0; tile < kMmaTiles; ++tile) {
                                  const int spread = 1 + static_cast<int>(rng.below(12));
                                  const auto a = elements(rng, kBF16, 16 * 16, spread);
                                  const auto b = elements(rng, kBF16, 16 * 8, spread);
                                  append(bytes, nk::run_mma_bf16_tile(d, m, a, b));
                                }
                                return bytes;
                              }));
  for (const char* target : {"sm_80", "sm_90a"}) {
    const std::string wmma = std::string("wmma.") + target,
                      forms = std::string("wmma_forms.") + target;
    f.units.push_back(nvcc_unit("wmma_f16_gemm 64x64x64, f32 accumulators", wmma, 64 * 64,
                                [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                  const auto a = elements(rng, kF16, 64 * 64, 6),
                                             bt = elements(rng, kF16, 64 * 64, 6);
                                  std::vector<std::uint8_t> bytes;
                                  append(bytes, nk::run_wmma_gemm(d, m, a, bt, 64, 64, 64));
                                  return bytes;
                                }));
    f.units.push_back(nvcc_unit("wmma bf16 m32n8k16, D column-major", forms, 32 * 8,
                                [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                  const auto a = elements(rng, kBF16, 32 * 16, 6),
                                             b = elements(rng, kBF16, 16 * 8, 6);
                                  const auto c = f32_elements(rng, 32 * 8, 8);
                                  std::vector<std::uint8_t> bytes;
                                  append(bytes, nk::run_wmma_bf16(d, m, a, b, c));
                                  return bytes;
                                }));
    f.units.push_back(nvcc_unit("wmma tf32 m16n16k8, column-major A and B", forms, 16 * 16,
                                [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                  const auto a = f32_elements(rng, 16 * 8, 6),
                                             b = f32_elements(rng, 8 * 16, 6);
                                  std::vector<std::uint8_t> bytes;
                                  append(bytes, nk::run_wmma_tf32(d, m, a, b));
                                  return bytes;
                                }));
    f.units.push_back(nvcc_unit("wmma f16 m8n32k16, f16 accumulators", forms, 8 * 32,
                                [](const runtime::Device& d, const ptx::Module& m, Rng& rng) {
                                  const auto a = elements(rng, kF16, 8 * 16, 4),
                                             b = elements(rng, kF16, 16 * 32, 4),
                                             c = elements(rng, kF16, 8 * 32, 6);
                                  std::vector<std::uint8_t> bytes;
                                  append(bytes, nk::run_wmma_f16(d, m, a, b, c));
                                  return bytes;
                                }));
  }
  return f;
}

}  // namespace warpforge::difftest
