// The memory-bound row ops against the device-to-device copy of the same
// bytes, in one run: for each op (forward and backward), rows x hidden over
// the grid, the bytes the op must move (each input read once, each
// output written once), our time, the copy's time (cuMemcpyDtoD of half the
// bytes: it reads and writes them), our bandwidth and its fraction of the
// copy's. The framework peers (PyTorch eager, torch.compile, Liger Kernel)
// are timed by python/warpforge/bench_rows.py.
//
//   bench_memory_bound [--ops rms,rms_bwd,layer,layer_bwd,softmax,softmax_bwd,swiglu,swiglu_bwd,ce,
//                             rms_mxfp8,rms_mxfp4,rms_nvfp4|none] [--rows 1,64,4096,32768] [--hidden 2048,4096,8192,16384]
//                      [--vocab 32768,131072,262144] [--linear-rows 1,64,4096|none] [--linear-hidden 4096]
//                      [--dtype bf16] [--reps 20] [--device cuda|sim]
//
// ce is the loss with its gradient and the backward's scaling by dloss = 1
// (mean reduction) over rows x vocab; rms_mxfp8, rms_mxfp4 and rms_nvfp4 are
// RMSNorm + quantize. Last, a quantized linear layer (K = N = each
// --linear-hidden) fused against separate (norm, quantize, GemmAmax), same
// run, beside its GemmAmax alone: each run's kernels launched back to back
// between two events (the host's launch gaps count, as a serving layer
// without CUDA graphs sees them), then runs queued behind a spin (the GPU's
// time alone, as a CUDA graph's replay).
//
// Each figure: the median of --reps runs timed with CUDA events after 3
// warm-up runs; inputs rotated among copies totalling more than twice the
// 50 MB L2 (so that neither side reads from L2 what it wrote the run
// before). Needs a GPU: without one it says so and exits 1.
#include <algorithm>
#include <chrono>
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
#include "warpforge/ops/cross_entropy.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/ops/norm_quantize.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ops/softmax.hpp"
#include "warpforge/ops/swiglu.hpp"
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
  std::vector<std::string> ops{"rms",    "rms_bwd",    "layer", "layer_bwd", "softmax", "softmax_bwd",
                               "swiglu", "swiglu_bwd", "ce",    "rms_mxfp8", "rms_mxfp4", "rms_nvfp4"};
  std::vector<std::int64_t> rows{1, 64, 4096, 32768}, hidden{2048, 4096, 8192, 16384};
  std::vector<std::int64_t> vocab{32768, 131072, 262144};  // the cross-entropy's rows' length
  std::vector<std::int64_t> linear_rows{1, 64, 4096};      // the quantized linear layer's tokens
  std::vector<std::int64_t> linear_hidden{4096};           // its K = N
  DType dtype = DType::bf16;
  int reps = 20;
  bool simulator = false;  // --device sim: runs the cases on the simulator (checks the benchmark, times nothing)
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_memory_bound: %s\nusage: bench_memory_bound [--ops rms,...,ce,rms_mxfp8,rms_mxfp4,rms_nvfp4|none] "
               "[--rows 1,64,4096,32768] [--hidden 2048,4096,8192,16384] [--vocab 32768,131072,262144] "
               "[--linear-rows 1,64,4096|none] [--linear-hidden 4096,8192] [--dtype bf16|f16|f32] [--reps N] "
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
      o.ops = value == "none" ? std::vector<std::string>{} : split(value);
    } else if (flag == "--rows") {
      o.rows = numbers(flag, value);
    } else if (flag == "--hidden") {
      o.hidden = numbers(flag, value);
    } else if (flag == "--vocab") {
      o.vocab = numbers(flag, value);
    } else if (flag == "--linear-rows") {
      o.linear_rows = value == "none" ? std::vector<std::int64_t>{} : numbers(flag, value);
    } else if (flag == "--linear-hidden") {
      o.linear_hidden = numbers(flag, value);
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

// Holds the GPU for a while (one thread polling %globaltimer) so that the
// host can enqueue many runs' launches before the first starts: timed
// between two events after it, they run back to back as a CUDA graph's
// replay would, without the host's gaps between launches.
class Spin {
 public:
  explicit Spin(const rt::Device& device) : module_(device, build()) {}
  void launch(std::uint64_t ns) { module_.launch("spin", {.grid = {1}, .block = {1}}, {ns}); }

 private:
  static wf::ptx::Module build() {
    using namespace wf::dsl;
    Kernel k("spin", Target::sm_80);
    Reg ns = k.param(u64, "ns");
    Reg start = k.reg(u64), now = k.reg(u64);
    k.mov(start, SReg::globaltimer);
    k.mov(now, start);
    k.while_loop([&] { return now - start < ns; }, [&] { k.mov(now, SReg::globaltimer); });
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

// A set's tensors, filled (a new Buffer each).
using TensorMaker = std::function<rt::TensorView(DType, std::vector<std::int64_t>)>;

// `copies_for(bytes)` sets of an op's tensors: `set` makes one (through the
// maker) and returns its run, setting `kernel` to the op's describe().
Case build_case(const rt::Device& device, Filler& filler, std::uint64_t bytes,
                const std::function<std::function<void()>(const TensorMaker&, std::string& kernel)>& set) {
  Case c;
  c.bytes = bytes;
  auto keep = std::make_shared<std::vector<Owned>>();
  auto runs = std::make_shared<std::vector<std::function<void()>>>();
  const TensorMaker tensor = [&](DType t, std::vector<std::int64_t> shape) {
    keep->push_back(make(device, t, std::move(shape)));
    if (t == DType::f32 || t == DType::bf16 || t == DType::f16)
      filler.fill(keep->back().tensor, static_cast<std::uint32_t>(keep->size()));
    else
      keep->back().buffer->fill(0);  // labels: class 0; codes and scales: zeros (a set makes its own)
    return keep->back().tensor;
  };
  for (int i = 0, copies = copies_for(bytes); i < copies; ++i) runs->push_back(set(tensor, c.kernel));
  c.run = [runs, keep](int i) { (*runs)[static_cast<std::size_t>(i) % runs->size()](); };
  return c;
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
  const ops::NormOptions options{.kind = kind, .eps = 1e-5f};
  return build_case(device, filler, bytes, [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
    rt::TensorView x = tensor(dtype, {rows, n}), w = tensor(dtype, {n});
    std::optional<rt::TensorView> bias, mean;
    if (layer) bias = tensor(dtype, {n}), mean = tensor(DType::f32, {rows});
    rt::TensorView rstd = tensor(DType::f32, {rows});
    if (!backward) {
      ops::NormTensors t{.x = x, .weight = w, .bias = bias, .y = tensor(dtype, {rows, n}), .mean = mean, .rstd = rstd};
      auto op = std::make_shared<ops::Norm>(t, options);
      op->compile();
      kernel = op->describe();
      return [op, t] { op->execute(t); };
    }
    // Statistics as a forward writes them (its y is then the backward's dy).
    const rt::TensorView dy = tensor(dtype, {rows, n});
    const ops::NormTensors forward{.x = x, .weight = w, .bias = bias, .y = dy, .mean = mean, .rstd = rstd};
    ops::Norm(forward, options).execute(forward);
    ops::NormBackwardTensors t{.dy = dy, .x = x, .weight = w, .mean = mean, .rstd = rstd, .dx = tensor(dtype, {rows, n}),
                               .dweight = tensor(dtype, {n}),
                               .dbias = layer ? std::optional<rt::TensorView>(tensor(dtype, {n})) : std::nullopt};
    auto op = std::make_shared<ops::NormBackward>(t, options);
    op->compile();
    kernel = op->describe();
    return [op, t] { op->execute(t); };
  });
}

Case softmax_case(const rt::Device& device, Filler& filler, bool backward, std::int64_t rows, std::int64_t n,
                  DType dtype) {
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(rows * n * (rt::bits(dtype) / 8));
  return build_case(device, filler, (backward ? 3 : 2) * row_bytes,
                    [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
                      const rt::TensorView a = tensor(dtype, {rows, n}), b = tensor(dtype, {rows, n});
                      if (!backward) {
                        auto op = std::make_shared<ops::Softmax>(a, b);
                        op->compile();
                        kernel = op->describe();
                        return [op, a, b] { op->execute(a, b); };
                      }
                      const rt::TensorView dx = tensor(dtype, {rows, n});
                      auto op = std::make_shared<ops::SoftmaxBackward>(a, b, dx);
                      op->compile();
                      kernel = op->describe();
                      return [op, a, b, dx] { op->execute(a, b, dx); };
                    });
}

Case swiglu_case(const rt::Device& device, Filler& filler, bool backward, std::int64_t rows, std::int64_t n,
                 DType dtype) {
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(rows * n * (rt::bits(dtype) / 8));
  return build_case(device, filler, (backward ? 5 : 3) * row_bytes,
                    [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
                      const rt::TensorView gate = tensor(dtype, {rows, n}), up = tensor(dtype, {rows, n}),
                                           out = tensor(dtype, {rows, n});
                      if (!backward) {
                        const ops::SwigluTensors t{.gate = gate, .up = up, .out = out};
                        auto op = std::make_shared<ops::Swiglu>(t);
                        op->compile();
                        kernel = op->describe();
                        return [op, t] { op->execute(t); };
                      }
                      const ops::SwigluBackwardTensors t{.dout = out, .gate = gate, .up = up,
                                                         .dgate = tensor(dtype, {rows, n}), .dup = tensor(dtype, {rows, n})};
                      auto op = std::make_shared<ops::SwigluBackward>(t);
                      op->compile();
                      kernel = op->describe();
                      return [op, t] { op->execute(t); };
                    });
}

// The loss and its gradient (mean over the rows), then the backward's
// scaling by dloss = 1 (which reads dloss and touches nothing else): what
// loss.backward() costs.
Case cross_entropy_case(const rt::Device& device, Filler& filler, std::int64_t rows, std::int64_t v, DType dtype) {
  const std::uint64_t bytes = 2 * static_cast<std::uint64_t>(rows * v * (rt::bits(dtype) / 8)) +
                              static_cast<std::uint64_t>(rows) * 8 + 4;
  return build_case(device, filler, bytes, [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
    const ops::CrossEntropyTensors t{.logits = tensor(dtype, {rows, v}), .labels = tensor(DType::i64, {rows}),
                                     .loss = tensor(DType::f32, {1}), .dlogits = tensor(dtype, {rows, v})};
    const rt::TensorView one = tensor(DType::f32, {1});
    const float unit = 1.0f;
    one.copy_from_host(&unit, 4);
    auto op = std::make_shared<ops::CrossEntropy>(t);
    auto scale = std::make_shared<ops::CrossEntropyScale>(ops::CrossEntropyScaleTensors{.dlogits = *t.dlogits, .dloss = one});
    op->compile();
    scale->compile();
    kernel = op->describe();
    return [op, scale, t, one] {
      op->execute(t);
      scale->execute({.dlogits = *t.dlogits, .dloss = one});
    };
  });
}

// The tensors of a quantized (rows, k) matrix in GemmAmax's layouts.
struct QuantizedTensors {
  rt::TensorView data, scales;
};
QuantizedTensors quantized(const TensorMaker& tensor, const ops::BlockScaledFormat& f, std::int64_t rows,
                           std::int64_t k) {
  const bool fp4 = f.data == DType::e2m1;
  return {tensor(fp4 ? DType::u8 : f.data, {rows, fp4 ? k / 2 : k}),
          tensor(f.scale, {ops::ScaleFactorLayout{rows, k, 1, f.vec}.bytes()})};
}

Case norm_quantize_case(const rt::Device& device, Filler& filler, const ops::BlockScaledFormat& f, std::int64_t rows,
                        std::int64_t k, DType dtype) {
  const int b = rt::bits(dtype) / 8;
  const std::uint64_t bytes = static_cast<std::uint64_t>(rows * k * b + k * b) +
                              static_cast<std::uint64_t>(rows * k * rt::bits(f.data) / 8) +
                              static_cast<std::uint64_t>(ops::ScaleFactorLayout{rows, k, 1, f.vec}.bytes());
  return build_case(device, filler, bytes, [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
    const QuantizedTensors q = quantized(tensor, f, rows, k);
    const ops::NormQuantizeTensors t{.x = tensor(dtype, {rows, k}), .weight = tensor(dtype, {k}), .data = q.data,
                                     .scales = q.scales};
    auto op = std::make_shared<ops::RmsNormQuantize>(t, ops::NormQuantizeOptions{.format = f});
    op->compile();
    kernel = op->describe();
    return [op, t] { op->execute(t); };
  });
}

// A quantized linear layer y = quantize(rms_norm(x) · w) · Bᵀ through
// GemmAmax (bf16 C), B's codes quantized when its set is made: fused
// (ops::RmsNormQuantize, then GemmAmax), separate (ops::Norm writing bf16,
// ops::RmsNormQuantize of that without normalizing: the GPU quantize, then
// GemmAmax), and GemmAmax alone (what neither can save). B rotates with the
// activations (a serving layer's weights come from memory, not the L2).
struct LinearCases {
  Case fused, separate, gemm;
};
LinearCases linear_cases(const rt::Device& device, Filler& filler, const ops::BlockScaledFormat& f,
                         std::int64_t rows, std::int64_t k, std::int64_t n, DType dtype) {
  auto three = [](const rt::TensorView& m) {  // (rows, cols) as GemmAmax's (rows, cols, 1)
    const std::int64_t r = m.shape()[0], c = m.shape()[1];
    return rt::TensorView(m.device(), m.address(), m.dtype(), {r, c, 1}, {c, 1, r * c});
  };
  auto codes = [&](std::int64_t r) {
    return static_cast<std::uint64_t>(r * k * rt::bits(f.data) / 8 + ops::ScaleFactorLayout{r, k, 1, f.vec}.bytes());
  };
  // What a run must move at the least: x, B and C (the activations' codes stay in the L2 or not: not counted).
  const std::uint64_t bytes = codes(n) + static_cast<std::uint64_t>(rows * k * (rt::bits(dtype) / 8) + rows * n * 2);
  const ops::GemmAmaxOptions gemm{.c_dtype = DType::bf16, .sf_vec_size = f.vec};
  enum class Pipeline { fused, separate, gemm };
  auto pipeline = [&](Pipeline which) {
    return build_case(device, filler, bytes, [&](const TensorMaker& tensor, std::string& kernel) -> std::function<void()> {
      const QuantizedTensors b = quantized(tensor, f, n, k);
      const ops::NormQuantizeTensors from{.x = tensor(dtype, {n, k}), .data = b.data, .scales = b.scales};
      ops::RmsNormQuantize(from, {.format = f, .normalize = false}).execute(from);
      const rt::TensorView x = tensor(dtype, {rows, k}), w = tensor(dtype, {k});
      const QuantizedTensors a = quantized(tensor, f, rows, k);
      const rt::TensorView c = tensor(DType::bf16, {rows, n, 1}), amax = tensor(DType::f32, {1});
      auto mm = std::make_shared<ops::GemmAmax>(three(a.data), three(b.data), a.scales, b.scales, c, amax, gemm);
      mm->compile();
      const rt::TensorView a3 = three(a.data), b3 = three(b.data), sfa = a.scales, sfb = b.scales;
      if (which == Pipeline::gemm) {
        kernel = mm->describe();
        return [=] { mm->execute(a3, b3, sfa, sfb, c, amax); };
      }
      if (which == Pipeline::fused) {
        const ops::NormQuantizeTensors t{.x = x, .weight = w, .data = a.data, .scales = a.scales};
        auto op = std::make_shared<ops::RmsNormQuantize>(t, ops::NormQuantizeOptions{.format = f});
        op->compile();
        kernel = op->describe() + "; " + mm->describe();
        return [=] {
          op->execute(t);
          mm->execute(a3, b3, sfa, sfb, c, amax);
        };
      }
      const ops::NormTensors nt{.x = x, .weight = w, .y = tensor(dtype, {rows, k})};
      auto norm = std::make_shared<ops::Norm>(nt, ops::NormOptions{.eps = 1e-6f});
      const ops::NormQuantizeTensors qt{.x = nt.y, .data = a.data, .scales = a.scales};
      auto quantize = std::make_shared<ops::RmsNormQuantize>(qt, ops::NormQuantizeOptions{.format = f, .normalize = false});
      norm->compile();
      quantize->compile();
      kernel = norm->describe() + "; " + quantize->describe();
      return [=] {
        norm->execute(nt);
        quantize->execute(qt);
        mm->execute(a3, b3, sfa, sfb, c, amax);
      };
    });
  };
  return {pipeline(Pipeline::fused), pipeline(Pipeline::separate), pipeline(Pipeline::gemm)};
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

// Seconds a run of `reps` runs enqueued behind a spin of `spin_ns` (the
// GPU's time alone: no host gaps between launches), and whether the host
// enqueued them all inside the spin (else the figure includes host time).
std::pair<double, bool> time_queued(const rt::Device& device, Spin& spin, std::uint64_t spin_ns, const Case& c,
                                    int reps) {
  for (int i = 0; i < 3; ++i) c.run(i);
  rt::Event start = device.create_event(), end = device.create_event();
  spin.launch(spin_ns);
  const auto host_start = std::chrono::steady_clock::now();
  start.record();
  for (int r = 0; r < reps; ++r) c.run(r);
  end.record();
  const double host_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - host_start).count();
  return {static_cast<double>(rt::Event::elapsed_ms(start, end)) * 1e-3 / reps, host_ns < 0.8 * static_cast<double>(spin_ns)};
}

// The ops by name: a Case for rows x n (n: the hidden size, or the vocabulary for ce).
using CaseMaker = std::function<Case(const rt::Device&, Filler&, std::int64_t rows, std::int64_t n, DType)>;
const std::vector<std::pair<std::string, CaseMaker>>& op_table() {
  using K = ops::NormKind;
  static const std::vector<std::pair<std::string, CaseMaker>> table = {
      {"rms", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_case(d, f, K::rms, false, r, n, t); }},
      {"rms_bwd", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_case(d, f, K::rms, true, r, n, t); }},
      {"layer", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_case(d, f, K::layer, false, r, n, t); }},
      {"layer_bwd", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_case(d, f, K::layer, true, r, n, t); }},
      {"softmax", [](auto& d, auto& f, auto r, auto n, auto t) { return softmax_case(d, f, false, r, n, t); }},
      {"softmax_bwd", [](auto& d, auto& f, auto r, auto n, auto t) { return softmax_case(d, f, true, r, n, t); }},
      {"swiglu", [](auto& d, auto& f, auto r, auto n, auto t) { return swiglu_case(d, f, false, r, n, t); }},
      {"swiglu_bwd", [](auto& d, auto& f, auto r, auto n, auto t) { return swiglu_case(d, f, true, r, n, t); }},
      {"ce", [](auto& d, auto& f, auto r, auto n, auto t) { return cross_entropy_case(d, f, r, n, t); }},
      {"rms_mxfp8", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_quantize_case(d, f, ops::kMxfp8E4m3, r, n, t); }},
      {"rms_mxfp4", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_quantize_case(d, f, ops::kMxfp4, r, n, t); }},
      {"rms_nvfp4", [](auto& d, auto& f, auto r, auto n, auto t) { return norm_quantize_case(d, f, ops::kNvfp4, r, n, t); }},
  };
  return table;
}

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
    const CaseMaker* maker = nullptr;
    for (const auto& [op, make_case] : op_table())
      if (op == name) maker = &make_case;
    if (!maker) usage("--ops: unknown op '" + name + "'");
    for (std::int64_t rows : o.rows)
      for (std::int64_t n : name == "ce" ? o.vocab : o.hidden) {
        Case ours = (*maker)(device, filler, rows, n, o.dtype);
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
  if (o.linear_rows.empty()) return 0;
  std::printf("\nQuantized linear layer, K = N: rms_norm_quantize + GemmAmax (fused) against rms_norm (bf16), "
              "then the GPU quantize, then GemmAmax (separate), and GemmAmax alone, same run.\n\n");
  std::printf("Each run between its own events (the host's launch gaps count), then %d runs queued behind a spin\n"
              "(the GPU's time alone, as a CUDA graph replays them; * where the host did not keep ahead).\n\n",
              o.reps);
  std::printf("| format | rows | K = N | fused us | separate us | GemmAmax us | separate / fused | queued: fused us | "
              "separate us | GemmAmax us | separate / fused | GemmAmax's kernel |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  Spin spin(device);
  const std::uint64_t spin_ns = o.simulator ? 100 : 20'000'000;  // the simulator's timer counts instructions
  for (const auto& [format_name, format] : {std::pair{"mxfp8", ops::kMxfp8E4m3}, std::pair{"nvfp4", ops::kNvfp4}})
    for (std::int64_t hidden : o.linear_hidden)
      for (std::int64_t rows : o.linear_rows) {
        const LinearCases c = linear_cases(device, filler, format, rows, hidden, hidden, o.dtype);
        const double t_fused = time(device, c.fused, o.reps), t_separate = time(device, c.separate, o.reps),
                     t_gemm = time(device, c.gemm, o.reps);
        const auto q_fused = time_queued(device, spin, spin_ns, c.fused, o.reps),
                   q_separate = time_queued(device, spin, spin_ns, c.separate, o.reps),
                   q_gemm = time_queued(device, spin, spin_ns, c.gemm, o.reps);
        auto mark = [](const std::pair<double, bool>& q) { return q.second ? "" : "*"; };
        std::string kernel = c.gemm.kernel.substr(c.gemm.kernel.find("kernel ") + 7);
        kernel = kernel.substr(0, kernel.find(','));
        std::printf("| %s | %lld | %lld | %.1f | %.1f | %.1f | %.2f | %.1f%s | %.1f%s | %.1f%s | %.2f | %s |\n", format_name,
                    static_cast<long long>(rows), static_cast<long long>(hidden), t_fused * 1e6, t_separate * 1e6,
                    t_gemm * 1e6, t_separate / t_fused, q_fused.first * 1e6, mark(q_fused), q_separate.first * 1e6,
                    mark(q_separate), q_gemm.first * 1e6, mark(q_gemm), q_separate.first / q_fused.first,
                    kernel.c_str());
        std::fflush(stdout);
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
