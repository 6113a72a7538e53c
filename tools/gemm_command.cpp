// `warpforge gemm`: runs ops::gemm once on random inputs, says which kernel
// and configuration ran, and optionally checks it against the fp64 CPU
// reference, times it, and saves the operands as .npy files.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>

#include "command.hpp"
#include "npy_file.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/ops/gemm_reference.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"

namespace warpforge::cli {
namespace {

using runtime::DType;

struct Options {
  std::int64_t m = 0, n = 0, k = 0, l = 0;  // l 0: rank-2 operands
  DType ab = DType::bf16;
  std::optional<DType> out;
  std::string layout = "nn";
  float alpha = 1.0f, beta = 0.0f;
  ops::GemmKernel kernel = ops::GemmKernel::automatic;
  std::string device;
  bool check = false, bench = false, autotune = false;
  std::optional<ops::GemmConfig> config;
  int reps = 20;
  std::string save;
  unsigned seed = std::random_device{}();
};

std::int64_t positive(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v < 1) throw Error(flag + " " + value + ": expected an integer >= 1");
  return v;
}

float number(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  float v = 0;
  try {
    v = std::stof(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size()) throw Error(flag + " " + value + ": expected a number");
  return v;
}

Options parse(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw Error(a + " needs a value; see `warpforge gemm --help`");
      return args[++i];
    };
    if (a == "--m")
      o.m = positive(a, value());
    else if (a == "--n")
      o.n = positive(a, value());
    else if (a == "--k")
      o.k = positive(a, value());
    else if (a == "--l")
      o.l = positive(a, value());
    else if (a == "--dtype") {
      const std::string& v = value();
      if (v != "bf16" && v != "f16") throw Error("--dtype " + v + ": accepted: bf16, f16");
      o.ab = *runtime::parse_dtype(v);
    } else if (a == "--out-dtype") {
      const std::string& v = value();
      if (v != "f32" && v != "bf16" && v != "f16")
        throw Error("--out-dtype " + v + ": accepted: f32, bf16, f16");
      o.out = *runtime::parse_dtype(v);
    } else if (a == "--layout") {
      o.layout = value();
      if (o.layout.size() != 2 || std::string("nt").find(o.layout[0]) == std::string::npos ||
          std::string("nt").find(o.layout[1]) == std::string::npos)
        throw Error("--layout " + o.layout + ": accepted: nn, nt, tn, tt");
    } else if (a == "--alpha")
      o.alpha = number(a, value());
    else if (a == "--beta")
      o.beta = number(a, value());
    else if (a == "--kernel") {
      const std::string& v = value();
      auto kernel = ops::parse_gemm_kernel(v);
      if (!kernel) throw Error("--kernel " + v + ": accepted: auto, sm80, sm90a");
      o.kernel = *kernel;
    } else if (a == "--config") {
      const std::string& v = value();
      o.config = ops::parse_gemm_config(v);
      if (!o.config)
        throw Error("--config '" + v + "': accepted 'MxNxK sS wAxB cCxD [pingpong] [streamk]' as the configuration line "
                    "prints it, e.g. '128x256x64 s3 w2x1 c1x1'");
    } else if (a == "--device") {
      o.device = value();
      if (o.device != "cuda" && o.device != "sim")
        throw Error("--device " + o.device + ": accepted: cuda, sim");
    } else if (a == "--check")
      o.check = true;
    else if (a == "--bench")
      o.bench = true;
    else if (a == "--autotune")
      o.autotune = true;
    else if (a == "--reps")
      o.reps = static_cast<int>(positive(a, value()));
    else if (a == "--seed")
      o.seed = static_cast<unsigned>(positive(a, value()));
    else if (a == "--save")
      o.save = value();
    else
      throw Error("unknown argument '" + a + "'; see `warpforge gemm --help`");
  }
  if (!o.m || !o.n || !o.k)
    throw Error("--m, --n and --k are required; see `warpforge gemm --help`");
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

int run_gemm(const std::vector<std::string>& args) {
  const Options o = parse(args);
  runtime::Device dev = o.device == "sim"               ? runtime::Device::sim()
                        : o.device == "cuda"            ? runtime::Device::cuda(0)
                        : runtime::Device::cuda_count() ? runtime::Device::cuda(0)
                                                        : runtime::Device::sim();
  const DType out = o.out.value_or(o.ab);
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
  if (o.bench) {
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
    std::filesystem::create_directories(o.save);
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
    "auto|sm80|sm90a]\n"
    "                      [--config 'MxNxK sS wAxB cCxD [pingpong] [streamk]']\n"
    "                      [--device cuda|sim] [--check] [--bench [--reps R]] [--autotune] [--seed "
    "S]\n"
    "                      [--save DIR]\n\n"
    "Computes D = alpha·A·B + beta·C with ops::gemm on inputs drawn from N(0, 1) and rounded\n"
    "to --dtype, and prints the kernel and configuration chosen.\n\n"
    "--m --n --k    the problem: A is MxK, B is KxN, C and D are MxN\n"
    "--l            batches: operands become (L, rows, cols)\n"
    "--dtype        A and B (default bf16)\n"
    "--layout       two letters for A and B: n = row-major, t = column-major (default nn);\n"
    "               C and D are row-major\n"
    "--out-dtype    C and D (default: --dtype); accumulation is f32 always\n"
    "--alpha --beta the scalars (default 1 and 0); C is made (random) only when beta != 0\n"
    "--kernel       auto (default), sm80 or sm90a\n"
    "--config       the kernel's configuration instead of the heuristic's, as the output\n"
    "               prints it (tile MxNxK, stages, warps or consumer warpgroups, cluster,\n"
    "               'pingpong' for sm90a's alternating consumers, 'streamk' for its split\n"
    "               last wave); refused with the reasons when the kernel does not take it\n"
    "--device       cuda or sim (default: cuda when a GPU is present, else sim)\n"
    "--check        compare D with an fp64 CPU reference: max |d - ref| / max(|ref|, 1) must be\n"
    "               <= 1e-2 for bf16/f16 D, 1e-4 for f32 D; exit status 1 when it is not\n"
    "--bench        time R runs (default 20) with events after 3 warm-up runs: median, TFLOP/s\n"
    "--autotune     time the candidate configurations once and remember the winner\n"
    "               (gemm-autotune.txt in the binary cache directory)\n"
    "--save DIR     write a.npy, b.npy, c.npy (when beta != 0) and d.npy: NumPy format 1.0, the\n"
    "               logical shape ((L,) rows, cols), column-major matrices as fortran_order; f32 "
    "as\n"
    "               '<f4', f16 as '<f2', bf16 as its raw bits '<u2' (NumPy has no bfloat16: view\n"
    "               them with ml_dtypes.bfloat16, or as float32 after shifting left 16 bits)\n",
    run_gemm,
});

}  // namespace
}  // namespace warpforge::cli
