// `warpforge gemm`: runs ops::gemm once on random inputs, says which kernel
// and configuration ran, and optionally checks it against the fp64 CPU
// reference, times it, and saves the operands as .npy files.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>

#include "arguments.hpp"
#include "command.hpp"
#include "device_choice.hpp"
#include "memory_budget.hpp"
#include "npy_file.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/ops/gemm_reference.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"

namespace warpforge::cli::gemm_command {
namespace {

using runtime::DType;

struct Options {
  std::int64_t m = 0, n = 0, k = 0, l = 0;  // l 0: rank-2 operands
  DType ab = DType::bf16;
  std::optional<DType> out;
  std::string layout = "nn";
  float alpha = 1.0f, beta = 0.0f;
  ops::GemmKernel kernel = ops::GemmKernel::automatic;
  DeviceChoice device;
  bool check = false, bench = false, autotune = false;
  std::optional<ops::GemmConfig> config;
  int reps = 20;
  std::string save;
  unsigned seed = std::random_device{}();
};

// Each of M, N, K, L fits an int32: TensorView extents and the kernels'
// index arithmetic are 32-bit per dimension.
constexpr std::int64_t kMaxExtent = INT32_MAX;

Options parse(const std::vector<std::string>& raw) {
  Options o;
  Arguments args("gemm", raw);
  auto extent = [&](const char* flag) -> std::int64_t {
    const auto v = args.value(flag);
    return v ? integer_in(flag, *v, 1, kMaxExtent) : 0;
  };
  o.m = extent("--m");
  o.n = extent("--n");
  o.k = extent("--k");
  o.l = extent("--l");
  if (const auto v = args.value("--dtype"))
    o.ab = *runtime::parse_dtype(one_of("--dtype", *v, {"bf16", "f16"}));
  if (const auto v = args.value("--out-dtype"))
    o.out = *runtime::parse_dtype(one_of("--out-dtype", *v, {"f32", "bf16", "f16"}));
  if (const auto v = args.value("--layout")) o.layout = one_of("--layout", *v, {"nn", "nt", "tn", "tt"});
  // Finite and within float's range: the kernels take alpha and beta as f32.
  auto scalar = [&](const char* flag, float fallback) {
    const auto v = args.value(flag);
    if (!v) return fallback;
    const double x = finite_number(flag, *v);
    if (std::fabs(x) > FLT_MAX)
      throw Error(std::string(flag) + " '" + *v + "' refused; it must fit a float (|x| <= 3.4e38)");
    return static_cast<float>(x);
  };
  o.alpha = scalar("--alpha", 1.0f);
  o.beta = scalar("--beta", 0.0f);
  if (const auto v = args.value("--kernel"))
    o.kernel = *ops::parse_gemm_kernel(one_of("--kernel", *v, {"auto", "sm80", "sm90a", "sm100a"}));
  if (const auto v = args.value("--config")) {
    o.config = ops::parse_gemm_config(*v);
    if (!o.config)
      throw Error("--config '" + *v + "': accepted 'MxNxK sS wAxB cCxD [pingpong] [streamk]' as the configuration line "
                  "prints it, e.g. '128x256x64 s3 w2x1 c1x1'");
  }
  o.device = parse_device_choice(args);
  if (o.kernel == ops::GemmKernel::sm100a) require_target(o.device, "--kernel sm100a", ptx::Target::sm_100a);
  o.check = args.flag("--check");
  o.bench = args.flag("--bench");
  o.autotune = args.flag("--autotune");
  if (const auto v = args.value("--reps")) {
    if (!o.bench) throw Error("--reps " + *v + " without --bench: it sets how many runs --bench times");
    o.reps = static_cast<int>(integer_in("--reps", *v, 1, 100000));
  }
  if (const auto v = args.value("--seed")) o.seed = static_cast<unsigned>(integer_in("--seed", *v, 0, UINT32_MAX));
  const auto save = args.value("--save");
  args.finish();
  if (!o.m || !o.n || !o.k)
    throw Error("--m, --n and --k are required; see `warpforge gemm --help`");
  if (save) {
    prepare_save_directory("--save", *save);
    o.save = *save;
  }
  return o;
}

// A contiguous operand: row-major (rows, cols), or column-major when
// `transposed`; batched (l, rows, cols) when l > 0.
struct Operand {
  runtime::Buffer buffer;
  runtime::TensorView view;
  ops::HostTensor host;
};

Operand make(const runtime::Device& dev, DType t, std::int64_t l, std::int64_t rows,
             std::int64_t cols, bool transposed, std::mt19937* rng) {
  std::vector<std::int64_t> shape = {rows, cols}, strides = {cols, 1};
  if (transposed) strides = {1, rows};
  if (l > 0) {
    shape.insert(shape.begin(), l);
    strides.insert(strides.begin(), rows * cols);
  }
  runtime::Buffer buffer(dev, static_cast<std::size_t>(std::max<std::int64_t>(l, 1) * rows * cols *
                                                       runtime::bits(t) / 8));
  buffer.fill(0xff);  // NaN: what the kernel must overwrite (D) shows if it does not
  runtime::TensorView view(buffer, t, shape, strides);
  ops::HostTensor host = ops::HostTensor::download(view);
  if (rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::int64_t b = 0; b < std::max<std::int64_t>(l, 1); ++b)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          std::vector<std::int64_t> index = {r, c};
          if (l > 0) index.insert(index.begin(), b);
          host.set(index, normal(*rng));
        }
    host.upload(view);
  }
  return {std::move(buffer), view, std::move(host)};
}

// Each operand is on the device and copied on the host; --check adds the
// fp64 reference and a copy of D.
void require_memory(const Options& o, DType out, const runtime::Device& dev) {
  const auto l = static_cast<std::uint64_t>(std::max<std::int64_t>(o.l, 1));
  const auto m = static_cast<std::uint64_t>(o.m), n = static_cast<std::uint64_t>(o.n),
             k = static_cast<std::uint64_t>(o.k);
  const std::uint64_t ab = runtime::bits(o.ab) / 8, d = runtime::bits(out) / 8;
  MemoryBudget budget("GEMM " + std::to_string(o.m) + "x" + std::to_string(o.n) + "x" +
                      std::to_string(o.k) + " L" + std::to_string(l));
  for (const bool on_device : {true, false}) {
    auto add = [&](std::initializer_list<std::uint64_t> f) {
      on_device ? budget.device(f) : budget.host(f);
    };
    add({l, m, k, ab});
    add({l, k, n, ab});
    add({o.beta != 0.0f ? 2u : 1u, l, m, n, d});  // D, and C when beta != 0
  }
  if (o.check) {
    budget.host({l, m, n, sizeof(double)});
    budget.host({l, m, n, d});
  }
  budget.require(dev);
}

int run_gemm(const std::vector<std::string>& args) {
  const Options o = parse(args);
  runtime::Device dev = open_device(o.device);
  const DType out = o.out.value_or(o.ab);
  require_memory(o, out, dev);
  std::mt19937 rng(o.seed);
  Operand a = make(dev, o.ab, o.l, o.m, o.k, o.layout[0] == 't', &rng);
  Operand b = make(dev, o.ab, o.l, o.k, o.n, o.layout[1] == 't', &rng);
  std::optional<Operand> c;
  if (o.beta != 0.0f) c.emplace(make(dev, out, o.l, o.m, o.n, false, &rng));
  Operand d = make(dev, out, o.l, o.m, o.n, false, nullptr);

  ops::Gemm g(a.view, b.view, c ? &c->view : nullptr, d.view,
              {.alpha = o.alpha, .beta = o.beta, .kernel = o.kernel, .config = o.config, .autotune = o.autotune});
  g.compile();
  const std::int64_t l = std::max<std::int64_t>(o.l, 1);
  std::printf("device: %s%s\n", dev.properties().name.c_str(),
              dev.is_simulator() ? " (CPU simulator)" : "");
  std::printf(
      "problem: D[%s] = %g * A[%s]·B[%s] + %g * C, M=%lld N=%lld K=%lld L=%lld, layout %s (n: "
      "row-major, "
      "t: column-major), seed %u\n",
      std::string(runtime::name(out)).c_str(), o.alpha, std::string(runtime::name(o.ab)).c_str(),
      std::string(runtime::name(o.ab)).c_str(), o.beta, static_cast<long long>(o.m),
      static_cast<long long>(o.n), static_cast<long long>(o.k), static_cast<long long>(l),
      o.layout.c_str(), o.seed);
  std::printf("kernel: %s, config %s\n", std::string(ops::name(g.kernel())).c_str(),
              g.config().describe().c_str());
  runtime::Stream stream = dev.create_stream();
  g.execute(a.view, b.view, c ? &c->view : nullptr, d.view, &stream);
  stream.synchronize();

  int status = 0;
  if (o.check) {
    const ops::HostTensor got = ops::HostTensor::download(d.view);
    const auto want = ops::gemm_reference(a.host, b.host, c ? &c->host : nullptr, o.alpha, o.beta);
    const double err = ops::max_relative_error(got, want, 1.0);
    const double tolerance = out == DType::f32 ? 1e-4 : 1e-2;
    const bool ok = err <= tolerance;
    std::printf("check: max relative error %.3g vs fp64 reference (tolerance %.0e): %s\n", err,
                tolerance, ok ? "PASS" : "FAIL");
    status = ok ? 0 : 1;
  }
  if (o.bench && dev.is_simulator()) {
    std::printf(
        "bench: skipped: the CPU simulator's run time says nothing about a GPU's; run --bench "
        "with --device cuda on a GPU\n");
  } else if (o.bench) {
    for (int i = 0; i < 3; ++i) g.execute(a.view, b.view, c ? &c->view : nullptr, d.view, &stream);
    // All events are recorded before any is read: the host runs ahead, so
    // each interval is the GPU's time for one run, not launch overhead.
    std::vector<runtime::Event> starts, ends;
    for (int i = 0; i < o.reps; ++i) {
      starts.push_back(dev.create_event());
      ends.push_back(dev.create_event());
    }
    for (int i = 0; i < o.reps; ++i) {
      starts[i].record(&stream);
      g.execute(a.view, b.view, c ? &c->view : nullptr, d.view, &stream);
      ends[i].record(&stream);
    }
    std::vector<float> ms;
    for (int i = 0; i < o.reps; ++i) ms.push_back(runtime::Event::elapsed_ms(starts[i], ends[i]));
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double flops =
        2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k) * l;
    std::printf("bench: median %.4f ms of %d runs (after 3 warm-up), %.2f TFLOP/s\n", median,
                o.reps, flops / (median * 1e-3) / 1e12);
  }
  if (!o.save.empty()) {
    const std::filesystem::path dir(o.save);
    write_npy(dir / "a.npy", a.host);
    write_npy(dir / "b.npy", b.host);
    if (c) write_npy(dir / "c.npy", c->host);
    write_npy(dir / "d.npy", ops::HostTensor::download(d.view));
    std::printf("saved: %s/{a,b,%sd}.npy\n", o.save.c_str(), c ? "c," : "");
  }
  return status;
}

const Registration registration({
    "gemm",
    "run ops::gemm on random inputs: kernel choice, --check, --bench, --save",
    "usage: warpforge gemm --m M --n N --k K [--l L] [--dtype bf16|f16] [--layout nn|nt|tn|tt]\n"
    "                      [--out-dtype f32|bf16|f16] [--alpha A] [--beta B] [--kernel "
    "auto|sm80|sm90a|sm100a]\n"
    "                      [--config 'MxNxK sS wAxB cCxD [pingpong] [streamk]']\n"
    "                      [--device cuda|sim] [--target sm_80|sm_89|sm_90a|sm_100a]\n"
    "                      [--check] [--bench [--reps R]] [--autotune] [--seed S] [--save DIR]\n\n"
    "Computes D = alpha·A·B + beta·C with ops::gemm on inputs drawn from N(0, 1) and rounded\n"
    "to --dtype, and prints the kernel and configuration chosen.\n\n"
    "--m --n --k    the problem: A is MxK, B is KxN, C and D are MxN\n"
    "--l            batches: operands become (L, rows, cols)\n"
    "--dtype        A and B (default bf16)\n"
    "--layout       two letters for A and B: n = row-major, t = column-major (default nn);\n"
    "               C and D are row-major\n"
    "--out-dtype    C and D (default: --dtype); accumulation is f32 always\n"
    "--alpha --beta the scalars (default 1 and 0); C is made (random) only when beta != 0\n"
    "--kernel       auto (default), sm80, sm90a, or sm100a (experimental: tcgen05, never run on\n"
    "               a Blackwell GPU, so taken only when named; the simulator then stands for\n"
    "               sm_100a, and another --target is refused)\n"
    "--config       the kernel's configuration instead of the heuristic's, as the output\n"
    "               prints it (tile MxNxK, stages, warps or consumer warpgroups, cluster,\n"
    "               'pingpong' for sm90a's alternating consumers, 'streamk' for its split\n"
    "               last wave); refused with the reasons when the kernel does not take it\n" +
        device_choice_help(15) +
        "--check        compare D with an fp64 CPU reference: max |d - ref| / max(|ref|, 1) must "
        "be\n"
        "               <= 1e-2 for bf16/f16 D, 1e-4 for f32 D; exit status 1 when it is not\n"
        "--bench        time R runs (default 20) with events after 3 warm-up runs: median, "
        "TFLOP/s\n"
        "--autotune     time the candidate configurations once and remember the winner\n"
        "               (gemm-autotune.txt in the binary cache directory)\n"
        "--save DIR     write a.npy, b.npy, c.npy (when beta != 0) and d.npy into DIR (made, with\n"
        "               its parents, before the GEMM runs): NumPy format 1.0, the logical shape\n"
        "               ((L,) rows, cols), column-major matrices as fortran_order; f32 as '<f4',\n"
        "               f16 as '<f2', bf16 as its raw bits '<u2' (NumPy has no bfloat16: view\n"
        "               them with ml_dtypes.bfloat16, or as float32 after shifting left 16 bits)\n",
    run_gemm,
});

}  // namespace
}  // namespace warpforge::cli::gemm_command
