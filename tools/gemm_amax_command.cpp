// `warpforge gemm-amax`: runs block-scaled GEMM + amax on random quantized
// inputs, on a GPU or the simulator; optionally checks it against the CPU
// reference, times it, and saves every tensor as .npy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <random>

#include "arguments.hpp"
#include "command.hpp"
#include "device_choice.hpp"
#include "memory_budget.hpp"
#include "npy_file.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/gemm_amax_reference.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"

namespace warpforge::cli::gemm_amax_command {
namespace {

using runtime::DType;

struct Args {
  std::int64_t m = 256, n = 256, k = 256, l = 1;
  DType ab = DType::e4m3, sf = DType::e8m0, c = DType::f32;
  int vec = 32;
  std::optional<ops::GemmAmaxTile> tile;  // GemmAmaxOptions::mma_tile (absent: the kernel's default)
  std::optional<ops::GemmAmaxTile> cluster;  // GemmAmaxOptions::cluster (absent: the kernel's choice)
  ops::GemmAmaxPrecision precision = ops::GemmAmaxPrecision::exact;
  ops::GemmAmaxKernel kernel = ops::GemmAmaxKernel::automatic;
  DeviceChoice device;
  std::string save;
  bool check = false, bench = false;
};

DType dtype_arg(const std::string& flag, const std::string& v,
                std::initializer_list<DType> accepted) {
  auto t = runtime::parse_dtype(v);
  for (DType a : accepted)
    if (t && *t == a) return a;
  std::string names;
  for (DType a : accepted) names += (names.empty() ? "" : ", ") + std::string(runtime::name(a));
  throw Error(flag + " '" + v + "' refused; accepted: " + names);
}

// M, N, K, L each fit an int32 (TensorView extents, the kernels' 32-bit
// index arithmetic); a tile or cluster side fits an int.
constexpr std::int64_t kMaxExtent = INT32_MAX;

Args parse(const std::vector<std::string>& raw) {
  Args a;
  Arguments args("gemm-amax", raw);
  auto extent = [&](const char* flag, std::int64_t fallback) {
    const auto v = args.value(flag);
    return v ? integer_in(flag, *v, 1, kMaxExtent) : fallback;
  };
  a.m = extent("--m", a.m);
  a.n = extent("--n", a.n);
  a.k = extent("--k", a.k);
  a.l = extent("--l", a.l);
  if (const auto v = args.value("--ab")) a.ab = dtype_arg("--ab", *v, {DType::e4m3, DType::e5m2, DType::e2m1});
  if (const auto v = args.value("--sf")) a.sf = dtype_arg("--sf", *v, {DType::e8m0, DType::e4m3});
  if (const auto v = args.value("--c"))
    a.c = dtype_arg("--c", *v, {DType::f32, DType::bf16, DType::f16, DType::e4m3, DType::e5m2, DType::e2m1});
  if (const auto v = args.value("--sf-vec")) a.vec = std::stoi(one_of("--sf-vec", *v, {"16", "32"}));
  if (const auto v = args.value("--tile")) {
    const auto [m, n] = shape_2d("--tile", *v, INT32_MAX, "128x256");
    a.tile = ops::GemmAmaxTile{m, n};
  }
  if (const auto v = args.value("--cluster")) {
    const auto [m, n] = shape_2d("--cluster", *v, INT32_MAX, "2x1");
    a.cluster = ops::GemmAmaxTile{m, n};
  }
  if (const auto v = args.value("--precision"))
    a.precision = *ops::parse_gemm_amax_precision(one_of("--precision", *v, {"exact", "fast"}));
  if (const auto v = args.value("--kernel"))
    a.kernel = *ops::parse_gemm_amax_kernel(one_of("--kernel", *v, {"auto", "stream", "skinny", "prepass", "swapped", "sm90a", "sm80", "sm100a"}));
  a.device = parse_device_choice(args);
  if (a.kernel == ops::GemmAmaxKernel::sm100a) require_target(a.device, "--kernel sm100a", ptx::Target::sm_100a);
  const auto save = args.value("--save");
  a.check = args.flag("--check");
  a.bench = args.flag("--bench");
  args.finish();
  if (save) {
    prepare_save_directory("--save", *save);
    a.save = *save;
  }
  return a;
}

// The host's quantization input (floats) and codes, the device's codes and
// scales, C and its host copy, and with --check the reference (f32 per
// element of C, and its own copy of the codes).
void require_memory(const Args& a, const runtime::Device& dev) {
  const auto m = static_cast<std::uint64_t>(a.m), n = static_cast<std::uint64_t>(a.n),
             k = static_cast<std::uint64_t>(a.k), l = static_cast<std::uint64_t>(a.l);
  MemoryBudget budget("GEMM-amax " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" +
                      std::to_string(a.k) + " L" + std::to_string(a.l));
  const std::uint64_t c_bytes = std::max<std::uint64_t>(runtime::bits(a.c) / 8, 1);
  for (std::uint64_t rows : {m, n}) {
    budget.host({rows, k, l, sizeof(float)});
    budget.host({rows, k, l});      // codes (FP4: half of it, plus scales below)
    budget.device({rows, k, l});    // codes and scales on the device
  }
  budget.device({m, n, l, c_bytes});
  budget.host({m, n, l, c_bytes});
  if (a.check) budget.host({m, n, l, sizeof(float)});
  budget.require(dev);
}

// A (rows, K, L) operand: U(-2, 2) · 2^(0..1) values quantized with the format,
// k-major, on the device (FP4 as u8 bytes (rows, K/2, L)).
struct Operand {
  ops::QuantizedMatrix q;
  runtime::Tensor data, scales;
};

Operand make_operand(const runtime::Device& dev, std::int64_t rows, const Args& a,
                     std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * a.k * a.l));
  for (auto& v : x) v = u(rng) * (rng() % 2 ? 2.0f : 1.0f);
  ops::QuantizedMatrix q = ops::quantize(x, rows, a.k, a.l, {a.ab, a.sf, a.vec});
  const bool fp4 = a.ab == DType::e2m1;
  const std::int64_t cols = fp4 ? a.k / 2 : a.k;
  auto data = runtime::Tensor::empty(dev, DType::u8, {static_cast<std::int64_t>(q.data.size())});
  data.copy_from_host(q.data.data(), q.data.size());
  runtime::Tensor view(runtime::TensorView(dev, data.address(), fp4 ? DType::u8 : a.ab,
                                           {rows, cols, a.l}, {cols, 1, rows * cols}),
                       data.storage());
  auto scales = runtime::Tensor::empty(dev, a.sf, {static_cast<std::int64_t>(q.scales.size())});
  scales.copy_from_host(q.scales.data(), q.scales.size());
  return {std::move(q), std::move(view), std::move(scales)};
}

// The bytes a view spans (C of L > 1 is (M, N, L) with L outermost in memory:
// not "contiguous" in TensorView's row-major sense, so read it as plain bytes).
std::vector<std::uint8_t> download(const runtime::TensorView& t) {
  std::vector<std::uint8_t> bytes(t.extent_bytes());
  runtime::TensorView(t.device(), t.address(), DType::u8, {static_cast<std::int64_t>(bytes.size())})
      .copy_to_host(bytes.data(), bytes.size());
  return bytes;
}

// C's element (i, j, l) of the wrapper's n-major C (FP4: bytes (M, N/2, L)).
float c_value(const std::vector<std::uint8_t>& c, DType t, std::int64_t e) {
  switch (t) {
    case DType::f32: {
      float f;
      std::memcpy(&f, c.data() + 4 * e, 4);
      return f;
    }
    case DType::f16:
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, c.data() + 2 * e, 2);
      return t == DType::f16 ? ops::f16_bits_to_f32(h) : ops::bf16_bits_to_f32(h);
    }
    case DType::e2m1:
      return ops::decode(t, ops::e2m1_at(c, e));
    default:
      return ops::decode(t, c[static_cast<std::size_t>(e)]);
  }
}

std::string c_npy_descr(DType t) {
  switch (t) {
    case DType::f32:
      return "<f4";
    case DType::f16:
      return "<f2";
    case DType::bf16:
      return "<u2";  // NumPy has no bfloat16: the raw bits
    default:
      return "|u1";  // FP8, FP4 pairs, scales: raw bytes
  }
}

// Median device time (CUDA events around each run) of 20 runs after a
// warm-up, and the TFLOP/s it makes.
void bench(ops::GemmAmax& op, const Args& a, const Operand& A, const Operand& B,
           const ops::GemmAmaxResult& r, runtime::Tensor& amax_t, const runtime::Device& dev) {
  const int iterations = 20;
  op.execute(A.data, B.data, A.scales, B.scales, r.c, amax_t);  // warm-up
  dev.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    runtime::Event start(dev), end(dev);
    start.record();
    op.execute(A.data, B.data, A.scales, B.scales, r.c, amax_t);
    end.record();
    ms.push_back(runtime::Event::elapsed_ms(start, end));
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("bench: median %.3f ms of %d runs (event-timed, after a warm-up), %.2f TFLOP/s\n",
              median, iterations, 2.0 * a.m * a.n * a.k * a.l / (median * 1e-3) / 1e12);
}

int run_gemm_amax(const std::vector<std::string>& raw) {
  const Args a = parse(raw);
  runtime::Device dev = open_device(a.device);
  require_memory(a, dev);
  std::cout << "device: " << dev.properties().name << (dev.is_simulator() ? " (CPU simulator)" : "")
            << "\n";
  std::mt19937 rng(std::random_device{}());
  Operand A = make_operand(dev, a.m, a, rng), B = make_operand(dev, a.n, a, rng);

  ops::GemmAmaxOptions options;
  options.c_dtype = a.c;
  options.sf_vec_size = a.vec;
  options.mma_tile = a.tile;
  options.cluster = a.cluster;
  options.precision = a.precision;
  options.kernel = a.kernel;
  auto t0 = std::chrono::steady_clock::now();
  ops::GemmAmaxResult r = ops::gemm_amax(A.data, B.data, A.scales, B.scales, options);
  const double first_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // What ran, and why the kernels ahead of it in the family did not.
  std::cout << ops::GemmAmax(A.data, B.data, A.scales, B.scales, r.c, r.amax, options).describe() << "\n";
  float amax = 0.0f;
  r.amax.copy_to_host(&amax, 4);
  std::printf("%lldx%lldx%lld L%lld %s x %s/%d -> %s: amax %g (first run, with compile: %.1f ms)\n",
              static_cast<long long>(a.m), static_cast<long long>(a.n), static_cast<long long>(a.k),
              static_cast<long long>(a.l), std::string(runtime::name(a.ab)).c_str(),
              std::string(runtime::name(a.sf)).c_str(), a.vec,
              std::string(runtime::name(a.c)).c_str(), amax, first_ms);

  int status = 0;
  const std::vector<std::uint8_t> c_bytes = download(r.c);
  if (a.check) {
    auto host = [&](const Operand& o, std::int64_t rows) {
      return ops::BlockScaledOperand{a.ab,       rows,     a.k,  a.l,   a.k,       1,
                                     rows * a.k, o.q.data, a.sf, a.vec, o.q.scales};
    };
    const ops::GemmAmaxReference ref = ops::gemm_amax_reference(host(A, a.m), host(B, a.n));
    const bool low = a.c == DType::e4m3 || a.c == DType::e5m2 || a.c == DType::e2m1;
    const float tol = low ? 0.1f : 0.01f;
    std::int64_t bad = 0;
    double worst = 0;
    for (std::int64_t l = 0; l < a.l; ++l)
      for (std::int64_t i = 0; i < a.m; ++i)
        for (std::int64_t j = 0; j < a.n; ++j) {
          const float want = ops::round_to(a.c, ref.at(i, j, l));
          const float got = c_value(c_bytes, a.c, (l * a.m + i) * a.n + j);
          const double err = std::fabs(got - want);
          const bool ok = std::isnan(want) ? std::isnan(got) : err <= tol + tol * std::fabs(want);
          bad += !ok;
          if (!std::isnan(err)) worst = std::max(worst, err);
        }
    const bool amax_ok =
        std::isnan(ref.amax) ? std::isnan(amax) : std::fabs(amax - ref.amax) <= 0.1f;
    std::printf(
        "check: %s (%lld of %lld elements outside atol = rtol = %g, largest error %g; amax %g, "
        "reference %g)\n",
        bad == 0 && amax_ok ? "PASS" : "FAIL", static_cast<long long>(bad),
        static_cast<long long>(a.m * a.n * a.l), tol, worst, amax, ref.amax);
    status = bad == 0 && amax_ok ? 0 : 1;
  }

  if (a.bench) {
    runtime::Tensor amax_t = runtime::Tensor::empty(dev, DType::f32, {1});
    ops::GemmAmax op(A.data, B.data, A.scales, B.scales, r.c, amax_t, options);
    op.compile();
    std::printf("kernel: %s\n", std::string(op.kernel_name()).c_str());
    if (dev.is_simulator()) {
      std::printf(
          "bench: skipped: the CPU simulator's run time says nothing about a GPU's; run --bench "
          "with --device cuda on a GPU\n");
    } else {
      bench(op, a, A, B, r, amax_t, dev);
    }
  }

  if (!a.save.empty()) {
    const std::filesystem::path dir(a.save);
    const bool fp4 = a.ab == DType::e2m1;
    write_npy(dir / "a.npy", "|u1", {a.l, a.m, fp4 ? a.k / 2 : a.k}, A.q.data.data(),
              A.q.data.size());
    write_npy(dir / "b.npy", "|u1", {a.l, a.n, fp4 ? a.k / 2 : a.k}, B.q.data.data(),
              B.q.data.size());
    write_npy(dir / "sfa.npy", "|u1", {static_cast<std::int64_t>(A.q.scales.size())},
              A.q.scales.data(), A.q.scales.size());
    write_npy(dir / "sfb.npy", "|u1", {static_cast<std::int64_t>(B.q.scales.size())},
              B.q.scales.data(), B.q.scales.size());
    write_npy(dir / "c.npy", c_npy_descr(a.c), {a.l, a.m, a.c == DType::e2m1 ? a.n / 2 : a.n},
              c_bytes.data(), c_bytes.size());
    write_npy(dir / "amax.npy", "<f4", {1}, &amax, 4);
    std::cout << "saved a, b, sfa, sfb, c, amax (.npy) to " << a.save << "\n";
  }
  return status;
}

const Registration registration({
    "gemm-amax",
    "block-scaled GEMM + amax on random quantized inputs (MXFP8, MXFP4, NVFP4)",
    "usage: warpforge gemm-amax [--m M] [--n N] [--k K] [--l L] [--ab e4m3|e5m2|e2m1]\n"
    "                           [--sf e8m0|e4m3] [--sf-vec 16|32] [--c "
    "f32|bf16|f16|e4m3|e5m2|e2m1]\n"
    "                           [--tile MxN] [--cluster MxN] [--precision exact|fast]\n"
    "                           [--kernel auto|stream|skinny|prepass|swapped|sm90a|sm80|sm100a] [--device cuda|sim]\n"
    "                           [--target sm_80|sm_89|sm_90a|sm_100a] [--check] [--bench] [--save DIR]\n\n"
    "Quantizes random U(-2,2)·{1,2} matrices A (M,K,L) and B (N,K,L), k-major, with\n"
    "one --sf scale per --sf-vec elements (ops/quantize.hpp), runs C = (A·SFA)(B·SFB)ᵀ\n"
    "and amax = max|C| (ops/gemm_amax.hpp) with C n-major, and prints amax.\n"
    "Defaults: 256x256x256, L 1, e4m3 x e8m0/32 -> f32. Tensors are packed, so the\n"
    "16-byte stride rule asks K to be a multiple of 16 (FP8) or 32 (FP4), and N a\n"
    "multiple of 16 bytes of C.\n\n"
    "--tile    the CTA's output tile (GemmAmaxOptions::mma_tile; default the kernel's)\n"
    "--cluster CTAs per cluster along M and N (default the kernel's: 2x1 for the sm90a\n"
    "          kernel's 128x256 tiles of FP8 data, else 1x1; 128x256 tiles take either)\n"
    "--precision exact (default: every product exact, f32 accumulation) or fast: MXFP8\n"
    "          may run Hopper's FP8 wgmma, whose k32 steps add products aligned to the\n"
    "          largest at about 14 bits: |error| up to about K/32 x 2^-13 x the largest\n"
    "          block's sum of |products| (ops/gemm_amax.hpp)\n"
    "--kernel  the kernel of the family to run (default auto: skinny for M <= 16,\n"
    "          prepass (bf16 copies of A and B, then the bf16 GEMM) from M x L = 2048,\n"
    "          swapped (A to bf16 by a pre-pass, B's codes into wgmma's register\n"
    "          fragments; K a multiple of 64) between, then sm90a, then sm80; sm100a,\n"
    "          the experimental tcgen05 kernel, first on\n"
    "          the simulator standing for sm_100a, on a GPU only when named; named, the\n"
    "          simulator stands for sm_100a and another --target is refused); the choice\n"
    "          and why is printed first\n"
    + device_choice_help(10) +
    "--check   compare C and amax with the CPU reference (atol = rtol = 0.01 for\n"
    "          f32/f16/bf16 C, 0.1 for FP8/FP4 C; amax within 0.1); exit 1 on failure\n"
    "--bench   time repeated runs (CUDA events, median after a warm-up) and print TFLOP/s\n"
    "--save    write a, b, sfa, sfb, c, amax as .npy into DIR (made before the run): data as raw uint8\n"
    "          bytes (L, rows, K) (FP4: (L, rows, K/2), low nibble = lower k), scales as\n"
    "          the 1-D 128x4 layout bytes, C as f32/f16 or raw bytes (bf16: uint16 bits;\n"
    "          FP4: (L, M, N/2)), amax f32 (1,)\n",
    run_gemm_amax,
});

}  // namespace
}  // namespace warpforge::cli::gemm_amax_command
