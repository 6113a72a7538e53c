// The memory-bound row ops against the device-to-device copy of the same
// bytes, in one run: for each op (forward and backward), rows x hidden over
// the grid, the bytes the op must move (each input read once, each
// output written once), our time, the copy's time (cuMemcpyDtoD of half the
// bytes: it reads and writes them), our bandwidth and its fraction of the
// copy's. The framework peers (PyTorch eager, torch.compile, Liger Kernel)
// are timed by python/warpforge/bench_rows.py.
//
//   bench_memory_bound [--ops rms,rms_bwd,layer,layer_bwd] [--rows 1,64,4096,32768]
//                      [--hidden 2048,4096,8192,16384] [--dtype bf16] [--reps 20] [--device cuda|sim]
//
// Each figure: the median of --reps runs timed with CUDA events after 3
// warm-up runs; inputs rotated among copies totalling more than twice the
// 50 MB L2 (so that neither side reads from L2 what it wrote the run
// before). Needs a GPU: without one it says so and exits 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace wf = warpforge;
namespace rt = warpforge::runtime;
namespace ops = warpforge::ops;
using rt::DType;

namespace {

constexpr std::size_t kL2Bytes = 50u << 20;
constexpr int kMaxCopies = 32;

struct Options {
  std::vector<std::string> ops{"rms", "rms_bwd", "layer", "layer_bwd"};
  std::vector<std::int64_t> rows{1, 64, 4096, 32768}, hidden{2048, 4096, 8192, 16384};
  DType dtype = DType::bf16;
  int reps = 20;
  bool simulator = false;  // --device sim: runs the cases on the simulator (checks the benchmark, times nothing)
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_memory_bound: %s\nusage: bench_memory_bound [--ops rms,rms_bwd,layer,layer_bwd] "
               "[--rows 1,64,4096,32768] [--hidden 2048,4096,8192,16384] [--dtype bf16|f16|f32] [--reps N] "
               "[--device cuda|sim]\n",
               why.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::int64_t> numbers(const std::string& flag, const std::string& s) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split(s)) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end || v < 1) usage(flag + " '" + s + "': positive integers separated by commas");
    out.push_back(v);
  }
  if (out.empty()) usage(flag + " needs at least one value");
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--ops") {
      o.ops = split(value);
    } else if (flag == "--rows") {
      o.rows = numbers(flag, value);
    } else if (flag == "--hidden") {
      o.hidden = numbers(flag, value);
    } else if (flag == "--dtype") {
      auto t = rt::parse_dtype(value);
      if (!t || (*t != DType::bf16 && *t != DType::f16 && *t != DType::f32))
        usage("--dtype '" + value + "': bf16, f16 or f32");
      o.dtype = *t;
    } else if (flag == "--device") {
      if (value != "sim" && value != "cuda") usage("--device '" + value + "': cuda (the default) or sim");
      o.simulator = value == "sim";
    } else if (flag == "--reps") {
      o.reps = static_cast<int>(numbers(flag, value)[0]);
    } else {
      usage("unknown flag " + flag);
    }
  }
  return o;
}

// Fills a buffer with values in [-2, 2) of `dtype` from a hash of the index
// (a device kernel: host uploads of gigabytes would cost the run minutes).
class Filler {
 public:
  explicit Filler(const rt::Device& device) : module_(device, build()) {}

  void fill(const rt::TensorView& t, std::uint32_t seed) {
    const std::uint64_t n = static_cast<std::uint64_t>(t.numel());
    const std::uint32_t kind = t.dtype() == DType::f32 ? 0 : t.dtype() == DType::bf16 ? 1 : 2;
    const auto blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>((n + 255) / 256, 1u << 20));
    module_.launch("fill", {.grid = {blocks}, .block = {256}}, {t, n, seed, kind});
  }

 private:
  static wf::ptx::Module build() {
    using namespace wf::dsl;
    Kernel k("fill", Target::sm_80);
    Reg out = k.param_ptr("out"), n = k.param(u64, "n"), seed = k.param(u32, "seed"), kind = k.param(u32, "kind");
    Reg start = k.reg(u64), step = k.reg(u64);
    k.mul_wide(start, k.sreg(SReg::ctaid_x), 256);
    k.add(start, start, [&] { Reg t = k.reg(u64); k.cvt(t, k.sreg(SReg::tid_x)); return t; }());
    k.mul_wide(step, k.sreg(SReg::nctaid_x), 256);
    k.for_range(start, n, step, [&](const Reg& i) {
      Reg lo = k.reg(u32);
      k.cvt(lo, i);
      Reg h = (lo ^ seed) * 0x9E3779B1u;
      h = (h ^ (h >> 15)) * 0x85EBCA6Bu;
      h = h ^ (h >> 13);
      Reg f = k.reg(f32);
      k.cvt(f32, u32, f, h >> 8, {Round::rn});
      k.fma(f, f, imm_f32(4.0f / 16777216.0f), imm_f32(-2.0f));
      k.if_else(kind == 0u, [&] {
        Reg at4 = k.reg(u64);
        k.mul(at4, i, 4);
        k.st(Space::global, f32, at(out + at4), f);
      }, [&] {
        Reg half = k.reg(b16), at2 = k.reg(u64);
        k.if_else(kind == 1u, [&] { k.cvt(bf16, f32, half, f, {Round::rn}); },
                  [&] { k.cvt(f16, f32, half, f, {Round::rn}); });
        k.mul(at2, i, 2);
        k.st(Space::global, b16, at(out + at2), half);
      });
    });
    return k.module();
  }

  rt::Module module_;
};

// A tensor in a Buffer of its own.
struct Owned {
  std::shared_ptr<rt::Buffer> buffer;
  rt::Tensor tensor;
};
Owned make(const rt::Device& device, DType dtype, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  auto b = std::make_shared<rt::Buffer>(device, static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) *
                                                     static_cast<std::size_t>(rt::bits(dtype) / 8));
  return {b, rt::Tensor(rt::TensorView(*b, dtype, std::move(shape)), b)};
}

// One benchmark case: `copies` independent sets of its tensors, a run of
// copy i, and the bytes one run must move.
struct Case {
  std::function<void(int)> run;
  std::uint64_t bytes = 0;
  std::string kernel;
};

int copies_for(std::uint64_t bytes) {
  return static_cast<int>(std::clamp<std::uint64_t>(2 * kL2Bytes / std::max<std::uint64_t>(bytes, 1) + 1, 1, kMaxCopies));
}

Case norm_case(const rt::Device& device, Filler& filler, ops::NormKind kind, bool backward, std::int64_t rows,
               std::int64_t n, DType dtype) {
  const bool layer = kind == ops::NormKind::layer;
  const int b = rt::bits(dtype) / 8;
  const std::uint64_t rows_bytes = static_cast<std::uint64_t>(rows * n * b);
  const std::uint64_t column = static_cast<std::uint64_t>(n * b);
  const std::uint64_t statistics = static_cast<std::uint64_t>(rows) * 4 * (layer ? 2 : 1);  // mean, rstd
  // forward: x in, y out, weight (and bias) in, statistics out; backward:
  // dy and x in, dx out, weight in, dweight (and dbias) out, statistics in.
  const std::uint64_t bytes = backward ? 3 * rows_bytes + column * (layer ? 3 : 2) + statistics
                                       : 2 * rows_bytes + column * (layer ? 2 : 1) + statistics;
  auto state = std::make_shared<std::vector<std::function<void()>>>();
  Case c;
  c.bytes = bytes;
  const int copies = copies_for(bytes);
  auto keep = std::make_shared<std::vector<Owned>>();
  auto tensor = [&](DType t, std::vector<std::int64_t> shape) {
    keep->push_back(make(device, t, std::move(shape)));
    filler.fill(keep->back().tensor, static_cast<std::uint32_t>(keep->size()));
    return keep->back().tensor;
  };
  const ops::NormOptions options{.kind = kind, .eps = 1e-5f};
  for (int i = 0; i < copies; ++i) {
    rt::TensorView x = tensor(dtype, {rows, n}), w = tensor(dtype, {n});
    std::optional<rt::TensorView> bias, mean;
    if (layer) bias = tensor(dtype, {n}), mean = tensor(DType::f32, {rows});
    rt::TensorView rstd = tensor(DType::f32, {rows});
    if (!backward) {
      ops::NormTensors t{.x = x, .weight = w, .bias = bias, .y = tensor(dtype, {rows, n}), .mean = mean, .rstd = rstd};
      auto op = std::make_shared<ops::Norm>(t, options);
      op->compile();
      c.kernel = op->describe();
      state->push_back([op, t] { op->execute(t); });
    } else {
      // Statistics as a forward writes them (its y is then the backward's dy).
      const rt::TensorView dy = tensor(dtype, {rows, n});
      const ops::NormTensors forward{.x = x, .weight = w, .bias = bias, .y = dy, .mean = mean, .rstd = rstd};
      ops::Norm(forward, options).execute(forward);
      ops::NormBackwardTensors t{.dy = dy,
                                 .x = x,
                                 .weight = w,
                                 .mean = mean,
                                 .rstd = rstd,
                                 .dx = tensor(dtype, {rows, n}),
                                 .dweight = tensor(dtype, {n}),
                                 .dbias = layer ? std::optional<rt::TensorView>(tensor(dtype, {n})) : std::nullopt};
      auto op = std::make_shared<ops::NormBackward>(t, options);
      op->compile();
      c.kernel = op->describe();
      state->push_back([op, t] { op->execute(t); });
    }
  }
  c.run = [state, keep](int i) { (*state)[static_cast<std::size_t>(i) % state->size()](); };
  return c;
}

Case copy_case(const rt::Device& device, std::uint64_t bytes) {
  const std::uint64_t half = std::max<std::uint64_t>(bytes / 2, 16);
  const int copies = copies_for(bytes);
  auto buffers = std::make_shared<std::vector<std::pair<rt::Buffer, rt::Buffer>>>();
  for (int i = 0; i < copies; ++i) buffers->emplace_back(rt::Buffer(device, half), rt::Buffer(device, half));
  Case c;
  c.bytes = 2 * half;
  c.run = [buffers, half](int i) {
    auto& [src, dst] = (*buffers)[static_cast<std::size_t>(i) % buffers->size()];
    dst.copy_from(src, half);
  };
  return c;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of `reps` runs, each between its own events (recorded
// before any is read: the host runs ahead).
double time(const rt::Device& device, const Case& c, int reps) {
  for (int i = 0; i < 3; ++i) c.run(i);
  std::vector<rt::Event> starts, ends;
  for (int r = 0; r < reps; ++r) starts.push_back(device.create_event()), ends.push_back(device.create_event());
  for (int r = 0; r < reps; ++r) {
    starts[static_cast<std::size_t>(r)].record();
    c.run(r);
    ends[static_cast<std::size_t>(r)].record();
  }
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) ms.push_back(rt::Event::elapsed_ms(starts[static_cast<std::size_t>(r)], ends[static_cast<std::size_t>(r)]));
  return static_cast<double>(median(ms)) * 1e-3;
}

struct OpEntry {
  const char* name;
  ops::NormKind kind;
  bool backward;
};
constexpr OpEntry kOps[] = {{"rms", ops::NormKind::rms, false},
                            {"rms_bwd", ops::NormKind::rms, true},
                            {"layer", ops::NormKind::layer, false},
                            {"layer_bwd", ops::NormKind::layer, true}};

int run(const Options& o) {
  if (!o.simulator && rt::Device::cuda_count() == 0) {
    std::fprintf(stderr, "bench_memory_bound: needs a CUDA GPU (none found); nothing measured\n");
    return 1;
  }
  rt::Device device = o.simulator ? rt::Device::sim() : rt::Device::cuda(0);
  Filler filler(device);
  std::printf("GPU: %s. %s rows x hidden; peer: the device-to-device copy (cuMemcpyDtoD) of the same bytes.\n",
              device.properties().name.c_str(), std::string(rt::name(o.dtype)).c_str());
  std::printf("Each figure: median of %d runs (CUDA events) after 3 warm-ups, inputs rotated past the L2.\n\n",
              o.reps);
  std::printf("| op | rows | hidden | MB moved | ours us | copy us | ours GB/s | of copy | kernel |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const std::string& name : o.ops) {
    const OpEntry* entry = nullptr;
    for (const OpEntry& e : kOps)
      if (name == e.name) entry = &e;
    if (!entry) usage("--ops: unknown op '" + name + "' (rms, rms_bwd, layer, layer_bwd)");
    for (std::int64_t rows : o.rows)
      for (std::int64_t n : o.hidden) {
        Case ours = norm_case(device, filler, entry->kind, entry->backward, rows, n, o.dtype);
        Case copy = copy_case(device, ours.bytes);
        const double t_ours = time(device, ours, o.reps), t_copy = time(device, copy, o.reps);
        const std::string kernel = ours.kernel.substr(ours.kernel.find("kernel ") + 7);
        std::printf("| %s | %lld | %lld | %.2f | %.1f | %.1f | %.0f | %.2f | %s |\n", name.c_str(),
                    static_cast<long long>(rows), static_cast<long long>(n), ours.bytes / 1e6, t_ours * 1e6,
                    t_copy * 1e6, ours.bytes / t_ours / 1e9, t_copy / t_ours,
                    kernel.substr(0, kernel.find(')') + 1).c_str());
        std::fflush(stdout);
      }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const wf::Error& e) {
    std::fprintf(stderr, "bench_memory_bound: %s\n", e.what());
    return 1;
  }
}
