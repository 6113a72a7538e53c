// ops::gemm against cuBLAS (cublasGemmEx, CUBLAS_COMPUTE_32F) on the same
// GPU in the same run: bf16 A and B (row-major), f32 accumulation, bf16 D by
// default (--out-dtype f32 for the accuracy comparison). For each shape:
// both TFLOP/s (CUDA events around each run, after warm-up, the median of
// --reps runs), their ratio, and the largest relative difference of our D
// from cuBLAS's. Each run reads another copy of the inputs, with enough
// copies that together they exceed twice the L2 (50 MB on H100/H200), so
// no run finds its operands in L2 from the run before.
//
//   build/bench/bench_gemm [--kernel auto|sm80|sm90a] [--shapes 2048x2048x2048,...] [--reps 20]
//                          [--out-dtype bf16|f32] [--plot FILE.svg [--peak-tflops R] [--copy-gbps B]]
//                          [--sweep llm] [--timing each|queued]
//   build/bench/bench_gemm --grouped ...   (the grouped GEMM of mixture-of-experts layers: gemm_grouped.hpp)
//
// --sweep llm runs the projections of two published decoder shapes
// (ops/decoder_shapes.hpp) at M from 1 to 8192, and ends with the ratio's
// geometric mean and worst shape; for M <= 256, where reading B bounds the
// GEMM, it also prints each side's bandwidth against a device-to-device copy
// measured in the same run (512 MiB), what a copy moving the shape's bytes
// reaches, and what a kernel that only reads B's bytes once reaches (the
// example kernel stream_read, the fastest of four grid sizes), each timed
// like the GEMM (launch, ramp and drain included). --block-scaled ends, for
// M <= 256, with the same read floor over B's codes and scales: the most
// any kernel that reads B once could reach against cuBLAS in that run.
//
// --plot draws the run's TFLOP/s per shape under the roofline (bench/gemm_plot.hpp):
// the dense bf16 tensor-core rate (or --peak-tflops) and each shape's bytes over
// the device-to-device copy bandwidth measured at the start of the run (or --copy-gbps).
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gemm_plot.hpp"
#include "kernels/stream_read.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/decoder_shapes.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/quantize.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ops/gemm_reference.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/progress_line.hpp"

using namespace warpforge;
using runtime::DType;

namespace {

struct Shape {
  std::int64_t m, n, k;
};

struct Options {
  ops::GemmKernel kernel = ops::GemmKernel::automatic;
  std::vector<Shape> shapes = {{2048, 2048, 2048},  {4096, 4096, 4096},  {8192, 8192, 8192},
                               {4096, 14336, 4096}, {16384, 4096, 4096}, {128, 8192, 8192},
                               {1000, 3000, 777}};
  int reps = 20;
  DType out = DType::bf16;
  std::optional<ops::GemmConfig> config;  // instead of the heuristic's
  // Ours is ops::GemmAmax on inputs of this format (C bf16) instead of
  // ops::gemm; the peer stays cuBLAS's bf16 GEMM of the same shape.
  std::optional<std::pair<std::string, ops::BlockScaledFormat>> block_scaled;
  std::optional<ops::GemmAmaxTile> block_scaled_tile;  // the block-scaled op's mma tile (default: its own)
  std::optional<ops::GemmAmaxTile> block_scaled_cluster;  // and its cluster shape (default: its own)
  ops::GemmAmaxPrecision precision = ops::GemmAmaxPrecision::exact;  // the block-scaled op's
  ops::GemmAmaxKernel scaled_kernel = ops::GemmAmaxKernel::automatic;  // the block-scaled op's (--kernel)
  bool shapes_given = false;
  bool sweep = false;  // --sweep llm: the shapes above, summarized
  bool b_col = false;  // B column-major (K contiguous) instead of row-major
  bool queued = false;  // --timing queued: one event pair around --reps runs queued back to back
  std::string plot;          // --plot: the SVG to write
  double peak_tflops = 0;    // --peak-tflops: instead of the GPU's dense bf16 rate
  double copy_gbps = 0;      // --copy-gbps: instead of measuring the copy
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_gemm: %s\nusage: bench_gemm [--kernel auto|sm80|sm90a] [--shapes MxNxK,...] "
               "[--reps R>=20] "
               "[--out-dtype bf16|f32] [--b-layout row|col]\n"
               "       (with --block-scaled, --kernel auto|stream|skinny|prepass|swapped|sm90a|sm80 picks the block-scaled op's)\n"
               "       [--config 'MxNxK sS wAxB cCxD [pingpong] [streamk]' (the kernel's configuration, as printed)]\n"
               "       [--block-scaled mxfp8|mxfp4|nvfp4 (ours: block-scaled GEMM + amax, bf16 C)] [--tile MxN (its mma tile)]\n"
               "       [--cluster MxN (its cluster shape)] [--precision exact|fast (its precision)]\n"
               "       [--plot FILE.svg [--peak-tflops R] [--copy-gbps B] (the run drawn under its roofline)]\n"
               "       [--sweep llm (decoder projections, M 1..8192: geometric mean, worst shape, bandwidth at M <= 256)]\n"
               "       [--timing each|queued (events around each run, the median; or one pair around the runs\n"
               "        queued back to back, the mean: where a launch may overlap the one before)]\n"
               "With --block-scaled and no --shapes: M in {1, 16, 64, 128, 256, 1024, 4096, 8192} x 8192 x 8192 and 4096^3.\n",
               why.c_str());
  std::exit(2);
}

// `--flag v` where v is MxN with positive M and N.
ops::GemmAmaxTile parse_mxn(const std::string& flag, const std::string& v, const char* example) {
  long long m = 0, n = 0;
  char tail = 0;
  if (std::sscanf(v.c_str(), "%lldx%lld%c", &m, &n, &tail) != 2 || m < 1 || n < 1)
    usage(flag + " '" + v + "' is not MxN (e.g. " + example + ")");
  return ops::GemmAmaxTile{static_cast<int>(m), static_cast<int>(n)};
}

Options parse(int argc, char** argv) {
  Options o;
  std::string kernel_text = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--kernel") {
      kernel_text = v;  // the bf16 GEMM's kernel, or with --block-scaled the block-scaled op's
    } else if (a == "--reps") {
      o.reps = std::atoi(v.c_str());
      if (o.reps < 20) usage("--reps " + v + ": at least 20");
    } else if (a == "--out-dtype") {
      if (v != "bf16" && v != "f32") usage("--out-dtype " + v + ": accepted bf16, f32");
      o.out = v == "f32" ? DType::f32 : DType::bf16;
    } else if (a == "--b-layout") {
      if (v != "row" && v != "col") usage("--b-layout " + v + ": accepted row, col");
      o.b_col = v == "col";
    } else if (a == "--block-scaled") {
      if (v == "mxfp8") o.block_scaled = std::pair{v, ops::kMxfp8E4m3};
      else if (v == "mxfp4") o.block_scaled = std::pair{v, ops::kMxfp4};
      else if (v == "nvfp4") o.block_scaled = std::pair{v, ops::kNvfp4};
      else usage("--block-scaled " + v + ": accepted mxfp8, mxfp4, nvfp4");
    } else if (a == "--tile") {
      o.block_scaled_tile = parse_mxn(a, v, "128x256");
    } else if (a == "--cluster") {
      o.block_scaled_cluster = parse_mxn(a, v, "2x1");
    } else if (a == "--precision") {
      const auto precision = ops::parse_gemm_amax_precision(v);
      if (!precision) usage("--precision " + v + ": accepted exact, fast");
      o.precision = *precision;
    } else if (a == "--config") {
      o.config = ops::parse_gemm_config(v);
      if (!o.config) usage("--config '" + v + "': accepted 'MxNxK sS wAxB cCxD [pingpong] [streamk]', e.g. '128x256x64 s3 w2x1 c1x1'");
    } else if (a == "--timing") {
      if (v != "each" && v != "queued") usage("--timing " + v + ": accepted each, queued");
      o.queued = v == "queued";
    } else if (a == "--sweep") {
      if (v != "llm") usage("--sweep " + v + ": accepted llm");
      o.sweep = true;
    } else if (a == "--plot") {
      o.plot = v;
    } else if (a == "--peak-tflops" || a == "--copy-gbps") {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(x > 0)) usage(a + " " + v + ": expected a positive number");
      (a == "--peak-tflops" ? o.peak_tflops : o.copy_gbps) = x;
    } else if (a == "--shapes") {
      o.shapes.clear();
      o.shapes_given = true;
      std::size_t start = 0;
      while (start <= v.size()) {
        const std::size_t end = std::min(v.find(',', start), v.size());
        long long m = 0, n = 0, k = 0;
        char tail = 0;
        if (std::sscanf(v.substr(start, end - start).c_str(), "%lldx%lldx%lld%c", &m, &n, &k,
                        &tail) != 3 ||
            m < 1 || n < 1 || k < 1)
          usage("--shapes: '" + v.substr(start, end - start) + "' is not MxNxK");
        o.shapes.push_back({m, n, k});
        start = end + 1;
      }
    } else {
      usage("unknown argument " + a);
    }
  }
  if ((o.peak_tflops > 0 || o.copy_gbps > 0) && o.plot.empty())
    usage("--peak-tflops and --copy-gbps set the plot's ceilings: they need --plot FILE.svg");
  if (o.block_scaled) {
    const auto kernel = ops::parse_gemm_amax_kernel(kernel_text);
    if (!kernel) usage("--kernel " + kernel_text + " with --block-scaled: accepted auto, stream, skinny, prepass, swapped, sm90a, sm80");
    o.scaled_kernel = *kernel;
  } else {
    const auto kernel = ops::parse_gemm_kernel(kernel_text);
    if (!kernel) usage("--kernel " + kernel_text + ": accepted auto, sm80, sm90a");
    o.kernel = *kernel;
  }
  if (o.block_scaled_tile && !o.block_scaled) usage("--tile is the block-scaled op's: it needs --block-scaled");
  if (o.block_scaled_cluster && !o.block_scaled) usage("--cluster is the block-scaled op's: it needs --block-scaled");
  if (o.precision == ops::GemmAmaxPrecision::fast && !o.block_scaled)
    usage("--precision is the block-scaled op's: it needs --block-scaled");
  if (o.sweep && o.shapes_given) usage("--sweep llm chooses the shapes: give it or --shapes, not both");
  if (o.sweep) {
    o.shapes.clear();
    for (const ops::GemmShape& g : ops::decoder_sweep()) o.shapes.push_back({g.m, g.n, g.k});
  }
  // The block-scaled shapes: decode (M <= 256, bound by reading B) to large.
  if (o.block_scaled && !o.shapes_given && !o.sweep) {
    o.shapes.clear();
    for (std::int64_t m : {1, 16, 64, 128, 256, 1024, 4096, 8192}) o.shapes.push_back({m, 8192, 8192});
    o.shapes.push_back({4096, 4096, 4096});
  }
  return o;
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_gemm: %s failed: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

// Uniform values in [-1, 1) from a fast generator (xorshift64; the data
// only has to be random-looking and non-zero, and some shapes are 10^8),
// each passed to `emit`.
template <class Emit>
void random_uniform(std::size_t count, std::uint64_t seed, Emit&& emit) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < count; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    emit(i, static_cast<float>(x >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  }
}

std::vector<std::uint16_t> random_bf16(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint16_t> out(count);
  random_uniform(count, seed, [&](std::size_t i, float u) { out[i] = ops::f32_to_bf16_bits(u); });
  return out;
}

struct Copies {
  std::vector<runtime::Buffer> a, b, d;
};

// `copies` sets of one block-scaled problem's device tensors (the same
// quantized U(-2, 2)·{1, 2} inputs in each), views as ops::GemmAmax takes them.
struct BlockScaledSets {
  std::vector<runtime::Tensor> a, b, sfa, sfb, c;
  runtime::Tensor amax;  // one f32, the amax every run extends
};

runtime::Tensor device_tensor(const runtime::Device& dev, DType t, const std::vector<std::uint8_t>& bytes,
                              std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
  auto storage = runtime::Tensor::empty(dev, DType::u8, {static_cast<std::int64_t>(bytes.size())});
  storage.copy_from_host(bytes.data(), bytes.size());
  return runtime::Tensor(runtime::TensorView(dev, storage.address(), t, std::move(shape), std::move(strides)),
                         storage.storage());
}

BlockScaledSets block_scaled_sets(const runtime::Device& dev, const Shape& s, ops::BlockScaledFormat f,
                                  int copies) {
  const bool fp4 = f.data == DType::e2m1;
  auto quantized = [&](std::int64_t rows, std::uint64_t seed) {
    // U(-2, 2) times 1 or 2 (the tests' values), the factor from the value's own low bits.
    std::vector<float> x(static_cast<std::size_t>(rows * s.k));
    random_uniform(x.size(), seed, [&](std::size_t i, float u) {
      std::uint32_t bits;
      std::memcpy(&bits, &u, 4);
      x[i] = 2.0f * u * ((bits & 1) ? 2.0f : 1.0f);
    });
    return ops::quantize(x, rows, s.k, 1, f);
  };
  const ops::QuantizedMatrix qa = quantized(s.m, 3), qb = quantized(s.n, 4);
  const std::int64_t cols = fp4 ? s.k / 2 : s.k;
  const DType data = fp4 ? DType::u8 : f.data;
  BlockScaledSets sets{.amax = runtime::Tensor::empty(dev, DType::f32, {1})};
  for (int i = 0; i < copies; ++i) {
    sets.a.push_back(device_tensor(dev, data, qa.data, {s.m, cols, 1}, {cols, 1, s.m * cols}));
    sets.b.push_back(device_tensor(dev, data, qb.data, {s.n, cols, 1}, {cols, 1, s.n * cols}));
    sets.sfa.push_back(device_tensor(dev, f.scale, qa.scales, {static_cast<std::int64_t>(qa.scales.size())}, {}));
    sets.sfb.push_back(device_tensor(dev, f.scale, qb.scales, {static_cast<std::int64_t>(qb.scales.size())}, {}));
    auto c = runtime::Tensor::empty(dev, DType::bf16, {s.m * s.n});
    sets.c.push_back(runtime::Tensor(runtime::TensorView(dev, c.address(), DType::bf16, {s.m, s.n, 1}, {s.n, 1, s.m * s.n}),
                                     c.storage()));
  }
  return sets;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

#include "gemm_grouped.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--grouped") return grouped_main(argc, argv);
  const Options o = parse(argc, argv);
  if (runtime::Device::cuda_count() == 0) {
    std::fprintf(stderr, "bench_gemm: needs a CUDA GPU (none found); nothing measured\n");
    return 1;
  }
  runtime::Device dev = runtime::Device::cuda(0);
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  const std::size_t l2_bytes = 50u << 20;
  const int d_bytes = runtime::bits(o.out) / 8;
  const cudaDataType_t d_type = o.out == DType::f32 ? CUDA_R_32F : CUDA_R_16BF;

  std::printf(
      "GPU: %s. bf16 A (MxK, row-major) and B (KxN, %s); f32 accumulate; %s D (MxN, row-major).\n",
      dev.properties().name.c_str(), o.b_col ? "column-major: K contiguous" : "row-major: N contiguous",
      std::string(runtime::name(o.out)).c_str());
  if (o.block_scaled)
    std::printf(
        "Ours: ops::GemmAmax, %s (%s data, %s scales per %d), A (M,K) and B (N,K) k-major, bf16 C, amax;\n"
        "its results are checked by the tests, not here (its inputs are not cuBLAS's).\n",
        o.block_scaled->first.c_str(), std::string(runtime::name(o.block_scaled->second.data)).c_str(),
        std::string(runtime::name(o.block_scaled->second.scale)).c_str(), o.block_scaled->second.vec);
  std::printf(
      "Peer: cuBLAS cublasGemmEx(CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), same inputs, same "
      "run.\n");
  std::printf(
      "Each figure: %s of %d runs timed with CUDA events after 3 warm-up runs; inputs rotated "
      "among "
      "copies totalling > 2x the 50 MB L2.\n\n",
      o.queued ? "the mean (one event pair around them, queued back to back)" : "median", o.reps);
  pictures::BenchmarkPlot plot;
  if (!o.plot.empty()) {
    plot.peak_tflops = o.peak_tflops > 0 ? o.peak_tflops : bench::dense_bf16_tflops(dev);
    if (plot.peak_tflops <= 0) usage("--plot: no dense bf16 rate known for " + dev.properties().name + "; give --peak-tflops");
    plot.copy_gbps = o.copy_gbps > 0 ? o.copy_gbps : bench::measure_copy_gbps(dev);
    plot.series = {o.block_scaled ? "warpforge " + o.block_scaled->first : "warpforge", o.block_scaled ? "cuBLAS bf16" : "cuBLAS"};
    plot.title = (o.block_scaled ? "block-scaled GEMM + amax, " + o.block_scaled->first : std::string("bf16 GEMM")) + ", " +
                 dev.properties().name;
    plot.note = "bench_gemm, median of " + std::to_string(o.reps) + " runs; copy bandwidth " +
                (o.copy_gbps > 0 ? "given" : "measured in this run") + "; tensor-core rate " +
                (o.peak_tflops > 0 ? "given" : "SMs x top clock x dense bf16 FLOP per clock");
    std::printf("Roofline: tensor cores %.0f TFLOP/s, device-to-device copy %.0f GB/s.\n\n", plot.peak_tflops,
                plot.copy_gbps);
  }
  std::printf(
      "| M x N x K | kernel, config | ours TFLOP/s | cuBLAS TFLOP/s | ours / cuBLAS | max rel diff "
      "vs cuBLAS |\n");
  std::printf("|---|---|---|---|---|---|\n");

  // --sweep's summary: every shape's figures and its least traffic (A and B
  // read once, D written once), and the copy bandwidth of this run.
  struct SweepRow {
    Shape shape;
    double ours_tf, cublas_tf, bytes;
    double same_copy_gbps;  // M <= 256: a copy moving the same bytes, timed alike
    double read_gbps;       // M <= 256: a kernel reading B's bytes once, timed alike
  };
  std::vector<SweepRow> sweep_rows;
  const double sweep_copy_gbps = o.sweep ? bench::measure_copy_gbps(dev) : 0.0;
  // --block-scaled's summary at M <= 256: each side's time and what reading
  // B's codes and scales once takes, timed alike.
  struct ReadBoundRow {
    Shape shape;
    double ours_s, cublas_s, b_bytes, read_s;
  };
  std::vector<ReadBoundRow> read_bound_rows;
  // The read floor's kernel, launched on 1, 2, 4 or 8 CTAs of 256 threads a SM.
  std::optional<runtime::Module> read_module;
  std::optional<runtime::Buffer> read_folds;
  const std::uint32_t read_threads = 256, most_ctas = 8 * static_cast<std::uint32_t>(dev.properties().sm_count);
  if (o.sweep || o.block_scaled) {
    read_module.emplace(dev, examples::stream_read_kernel(dev.target()));
    read_folds.emplace(dev, std::size_t{most_ctas} * read_threads / 32 * 4);
  }

  int disagreements = 0;
  // Which shape the run is on, on a terminal (stderr) while it lasts.
  runtime::ProgressLine progress("bench_gemm", o.shapes.size(), "shapes");
  for (const Shape& s : o.shapes) {
    progress.show(static_cast<std::uint64_t>(&s - o.shapes.data()));
    const std::size_t a_bytes = static_cast<std::size_t>(s.m * s.k) * 2,
                      b_bytes = static_cast<std::size_t>(s.k * s.n) * 2;
    const std::size_t dd_bytes = static_cast<std::size_t>(s.m * s.n) * d_bytes;
    const std::size_t set = a_bytes + b_bytes + dd_bytes;
    const int copies =
        static_cast<int>(std::max<std::size_t>(2, (2 * l2_bytes + set - 1) / set + 1));
    Copies c;
    {
      const auto ha = random_bf16(static_cast<std::size_t>(s.m * s.k), 1),
                 hb = random_bf16(static_cast<std::size_t>(s.k * s.n), 2);
      for (int i = 0; i < copies; ++i) {
        c.a.emplace_back(dev, a_bytes);
        c.b.emplace_back(dev, b_bytes);
        c.d.emplace_back(dev, dd_bytes);
        c.a.back().copy_from_host(ha.data(), a_bytes);
        c.b.back().copy_from_host(hb.data(), b_bytes);
        c.d.back().fill(0xff);
      }
    }
    auto view_a = [&](int i) { return runtime::TensorView(c.a[i], DType::bf16, {s.m, s.k}); };
    auto view_b = [&](int i) {
      return o.b_col ? runtime::TensorView(c.b[i], DType::bf16, {s.k, s.n}, {1, s.k})
                     : runtime::TensorView(c.b[i], DType::bf16, {s.k, s.n});
    };
    auto view_d = [&](int i) { return runtime::TensorView(c.d[i], o.out, {s.m, s.n}); };
    const double flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const std::string name =
        std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);

    std::optional<ops::Gemm> ours;
    std::optional<BlockScaledSets> scaled;
    std::optional<ops::GemmAmax> scaled_op;
    try {
      if (o.block_scaled) {
        scaled = block_scaled_sets(dev, s, o.block_scaled->second, copies);
        scaled_op.emplace(scaled->a[0], scaled->b[0], scaled->sfa[0], scaled->sfb[0], scaled->c[0], scaled->amax,
                          ops::GemmAmaxOptions{.c_dtype = DType::bf16,
                                               .sf_vec_size = o.block_scaled->second.vec,
                                               .mma_tile = o.block_scaled_tile,
                                               .cluster = o.block_scaled_cluster,
                                               .precision = o.precision,
                                               .kernel = o.scaled_kernel});
        scaled_op->compile();
      } else {
        ours.emplace(view_a(0), view_b(0), nullptr, view_d(0),
                     ops::GemmOptions{.kernel = o.kernel, .config = o.config});
        ours->compile();
      }
    } catch (const Error& e) {
      progress.clear();
      std::printf("| %s | refused: %s | | | | |\n", name.c_str(), e.what());
      continue;
    }
    auto run_ours = [&](int i) {
      if (scaled_op)
        scaled_op->execute(scaled->a[i], scaled->b[i], scaled->sfa[i], scaled->sfb[i], scaled->c[i], scaled->amax);
      else
        ours->execute(view_a(i), view_b(i), nullptr, view_d(i));
    };
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major D = A·B is column-major Dᵀ = Bᵀ·Aᵀ: cuBLAS computes (N x M) from B (ld N, or
    // transposed with ld K when B is column-major) and A (ld K).
    auto run_cublas = [&](int i) {
      check_cublas(
          cublasGemmEx(
              handle, o.b_col ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.n),
              static_cast<int>(s.m), static_cast<int>(s.k), &alpha,
              reinterpret_cast<const void*>(c.b[i].address()), CUDA_R_16BF,
              static_cast<int>(o.b_col ? s.k : s.n), reinterpret_cast<const void*>(c.a[i].address()),
              CUDA_R_16BF, static_cast<int>(s.k), &beta, reinterpret_cast<void*>(c.d[i].address()),
              d_type, static_cast<int>(s.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    };
    // Every run's events are recorded before any is read, so the host runs
    // ahead and each interval is GPU time, not launch overhead. An event
    // between two launches also ends any overlap of the second with the
    // first (LaunchConfig::overlap_previous); --timing queued keeps it.
    auto time = [&](const auto& run) {
      for (int i = 0; i < 3; ++i) run(i % copies);
      if (o.queued) {
        runtime::Event start = dev.create_event(), end = dev.create_event();
        start.record();
        for (int r = 0; r < o.reps; ++r) run(r % copies);
        end.record();
        return static_cast<double>(runtime::Event::elapsed_ms(start, end)) * 1e-3 / o.reps;
      }
      std::vector<runtime::Event> starts, ends;
      for (int r = 0; r < o.reps; ++r) {
        starts.push_back(dev.create_event());
        ends.push_back(dev.create_event());
      }
      for (int r = 0; r < o.reps; ++r) {
        starts[r].record();
        run(r % copies);
        ends[r].record();
      }
      std::vector<float> ms;
      for (int r = 0; r < o.reps; ++r) ms.push_back(runtime::Event::elapsed_ms(starts[r], ends[r]));
      return static_cast<double>(median(ms)) * 1e-3;
    };
    const double ours_s = time(run_ours), cublas_s = time(run_cublas);
    const double ours_tf = flops / ours_s / 1e12, cublas_tf = flops / cublas_s / 1e12;
    // A floor for any kernel that must read `bytes` of B once: reading them
    // (from each run's own copy of B) and no more, the fastest of four grids.
    auto read_once_s = [&](std::size_t bytes) {
      const auto vectors = static_cast<std::uint32_t>(bytes / 16);
      double best = 0;
      for (std::uint32_t ctas = most_ctas / 8; ctas <= most_ctas; ctas *= 2) {
        const double t = time([&](int i) {
          read_module->launch(examples::kStreamReadKernel, {.grid = {ctas}, .block = {read_threads}},
                              {c.b[i], vectors, *read_folds});
        });
        best = best == 0 ? t : std::min(best, t);
      }
      return best;
    };
    if (scaled_op && s.m <= 256) {
      const ops::BlockScaledFormat& f = o.block_scaled->second;
      const double b_scaled_bytes =
          static_cast<double>(s.n * s.k) * runtime::bits(f.data) / 8.0 +
          static_cast<double>(ops::ScaleFactorLayout{s.n, s.k, 1, f.vec}.bytes());
      read_bound_rows.push_back(
          {s, ours_s, cublas_s, b_scaled_bytes, read_once_s(static_cast<std::size_t>(b_scaled_bytes))});
    }
    if (o.sweep) {
      // What a transfer of this size reaches at all: a device-to-device copy
      // moving the GEMM's bytes, its launch, ramp and drain timed like the
      // GEMM's. Each run reads half of one copy of B and writes it over the
      // copy the run before read (the same values), the one read again last,
      // so neither side is found in L2.
      double same_copy_gbps = 0, read_gbps = 0;
      if (s.m <= 256) {
        const std::size_t half = std::min(set / 2, b_bytes);
        same_copy_gbps =
            2.0 * static_cast<double>(half) /
            time([&](int i) { c.b[static_cast<std::size_t>((i + copies - 1) % copies)].copy_from(c.b[i], half); }) /
            1e9;
        read_gbps = static_cast<double>(b_bytes) / read_once_s(b_bytes) / 1e9;
      }
      sweep_rows.push_back({s, ours_tf, cublas_tf, static_cast<double>(set), same_copy_gbps, read_gbps});
    }
    if (!o.plot.empty()) {
      // Least traffic: inputs read once, the output written once.
      double moved = static_cast<double>(set);
      if (o.block_scaled) {
        const ops::BlockScaledFormat& f = o.block_scaled->second;  // one scale byte per f.vec codes
        moved = static_cast<double>((s.m + s.n) * s.k) * (runtime::bits(f.data) / 8.0 + 1.0 / f.vec) +
                2.0 * static_cast<double>(s.m * s.n);
      }
      plot.rows.push_back({std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k), flops,
                           moved, {ours_tf, cublas_tf}});
    }
    if (scaled_op) {
      progress.clear();
      std::printf("| %s | gemm_amax %s %s | %.1f | %.1f | %.3f | n/a |\n", name.c_str(),
                  std::string(scaled_op->kernel_name()).c_str(), o.block_scaled->first.c_str(), ours_tf, cublas_tf,
                  ours_tf / cublas_tf);
      std::fprintf(stderr, "%s\n", scaled_op->describe().c_str());
      std::fflush(stdout);
      continue;
    }

    // Accuracy: ours into copy 0's D, cuBLAS into copy 1's (same inputs).
    c.d[0].fill(0xff);
    c.d[1].fill(0xff);
    run_ours(0);
    run_cublas(1);
    dev.synchronize();
    const ops::HostTensor got = ops::HostTensor::download(view_d(0)),
                          peer = ops::HostTensor::download(view_d(1));
    std::vector<double> want(static_cast<std::size_t>(s.m * s.n));
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j)
        want[static_cast<std::size_t>(i * s.n + j)] = peer.get({i, j});
    const double diff = ops::max_relative_error(got, want, 1.0);
    // Both accumulate in f32: f32 results differ by summation order only
    // (<= 1e-4 relative), bf16 ones by that and one rounding (2^-8).
    const double allowed = o.out == DType::f32 ? 1e-4 : 1e-2;
    const bool agrees = diff <= allowed;
    disagreements += agrees ? 0 : 1;

    progress.clear();
    std::printf("| %s | %s %s | %.1f | %.1f | %.3f | %.2e%s |\n", name.c_str(),
                std::string(ops::name(ours->kernel())).c_str(), ours->config().describe().c_str(),
                ours_tf, cublas_tf, ours_tf / cublas_tf, diff,
                agrees ? "" : " EXCEEDS the allowed difference");
    std::fflush(stdout);
  }
  cublasDestroy(handle);
  if (!o.plot.empty()) bench::write_plot(o.plot, plot);
  if (!sweep_rows.empty()) {
    double log_sum = 0;
    const SweepRow* worst = &sweep_rows.front();
    for (const SweepRow& r : sweep_rows) {
      log_sum += std::log(r.ours_tf / r.cublas_tf);
      if (r.ours_tf / r.cublas_tf < worst->ours_tf / worst->cublas_tf) worst = &r;
    }
    std::printf("\nSweep llm, %zu shapes: ours / cuBLAS geometric mean %.3f; worst %.3f at %lld x %lld x %lld.\n",
                sweep_rows.size(), std::exp(log_sum / static_cast<double>(sweep_rows.size())),
                worst->ours_tf / worst->cublas_tf, static_cast<long long>(worst->shape.m),
                static_cast<long long>(worst->shape.n), static_cast<long long>(worst->shape.k));
    std::printf("\nM <= 256, bound by reading B: bandwidth (A + B + D bytes over the time) against a "
                "device-to-device copy of %.0f GB/s (512 MiB) measured in this run, what a copy moving "
                "the same bytes reaches, and what a kernel reading only B's bytes once reaches (stream_read), "
                "timed alike.\n\n", sweep_copy_gbps);
    std::printf("| M x N x K | ours GB/s | ours / copy | cuBLAS GB/s | cuBLAS / copy | same-bytes copy / copy "
                "| B read once / copy | ours / B read once |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (const SweepRow& r : sweep_rows) {
      if (r.shape.m > 256) continue;
      const double flops = 2.0 * static_cast<double>(r.shape.m) * static_cast<double>(r.shape.n) *
                           static_cast<double>(r.shape.k);
      const double ours_gbps = r.bytes * r.ours_tf * 1e3 / flops, cublas_gbps = r.bytes * r.cublas_tf * 1e3 / flops;
      std::printf("| %lld x %lld x %lld | %.0f | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f |\n",
                  static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n),
                  static_cast<long long>(r.shape.k), ours_gbps, ours_gbps / sweep_copy_gbps, cublas_gbps,
                  cublas_gbps / sweep_copy_gbps, r.same_copy_gbps / sweep_copy_gbps, r.read_gbps / sweep_copy_gbps,
                  ours_gbps / r.read_gbps);
    }
  }
  if (!read_bound_rows.empty()) {
    std::printf("\nM <= 256, bound by reading B: what a kernel reading only B's codes and scales once reaches "
                "(stream_read, the fastest of four grid sizes, timed like the GEMM: launch, ramp and drain "
                "included), and so the most that any kernel reading B once could reach against cuBLAS bf16 "
                "in this run.\n\n");
    std::printf("| M x N x K | B's codes + scales, MB | read once, us | ours, us | cuBLAS bf16, us | "
                "ours / cuBLAS | read once / cuBLAS (the ceiling) | ours / read once |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (const ReadBoundRow& r : read_bound_rows)
      std::printf("| %lld x %lld x %lld | %.1f | %.1f | %.1f | %.1f | %.3f | %.2f | %.2f |\n",
                  static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n),
                  static_cast<long long>(r.shape.k), r.b_bytes / 1e6, r.read_s * 1e6, r.ours_s * 1e6,
                  r.cublas_s * 1e6, r.cublas_s / r.ours_s, r.cublas_s / r.read_s, r.read_s / r.ours_s);
  }
  if (disagreements)
    std::printf("\n%d shape(s) differ from cuBLAS by more than %s relative\n", disagreements,
                o.out == DType::f32 ? "1e-4" : "1e-2");
  return disagreements ? 1 : 0;
}
