#include "kernels/runners.hpp"

#include <cmath>
#include <cstdio>
#include <span>

#include "kernels/bf16_gemm.hpp"
#include "kernels/mma_demo.hpp"
#include "kernels/stream_read.hpp"
#include "kernels/warp_gemm.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::examples {
namespace {

using runtime::Buffer;
using runtime::Device;

template <class T>
Buffer upload(const Device& device, const std::vector<T>& values) {
  Buffer b(device, values.size() * sizeof(T));
  b.upload(std::span<const T>(values));
  return b;
}

Buffer poisoned(const Device& device, std::size_t floats) {
  Buffer b(device, floats * sizeof(float));
  b.fill(0xFF);  // every float a NaN: unwritten elements fail the check
  return b;
}

// allclose(atol = rtol = 1e-2) against the reference, with the worst error.
ExampleResult compare(std::string name, std::vector<float> out, const std::vector<float>& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i)
    worst = std::isnan(out[i]) ? INFINITY : std::max(worst, std::fabs(double{out[i]} - ref[i]));
  std::size_t bad = count_mismatches(out, ref, 1e-2, 1e-2);
  char detail[128];
  std::snprintf(detail, sizeof detail, "max |err| %.2e, %zu of %zu outside atol = rtol = 1e-2", worst, bad, ref.size());
  return {std::move(name), bad == 0, detail, std::move(out)};
}

}  // namespace

ExampleResult run_mma_demo(const Device& device) {
  MmaDemoData data = mma_demo_data();
  runtime::Module module(device, mma_demo_kernel(device.target()));
  Buffer a = upload(device, data.a), bt = upload(device, data.bt), d = poisoned(device, data.expected.size());
  module.launch("mma_m16n8k8_demo", {.grid = {1}, .block = {32}}, {a, bt, d});
  std::vector<float> out = d.download<float>(data.expected.size());
  bool exact = out == data.expected;
  return {"mma_m16n8k8_demo", exact, exact ? "rows 9 ... 24, exact" : "differs from rows 9 ... 24", out};
}

std::vector<ExampleResult> run_bf16_gemm(const Device& device, std::mt19937& rng) {
  runtime::Module module(device, bf16_gemm_kernel(device.target()));
  std::vector<ExampleResult> results;
  for (const GemmCase& c : bf16_gemm_cases()) {
    Bf16GemmData data = bf16_gemm_data(c, rng);
    Buffer a = upload(device, data.a), bt = upload(device, data.bt), d = poisoned(device, data.reference.size());
    module.launch("bf16_gemm_m16n8k16",
                  {.grid = {static_cast<std::uint32_t>(c.n / 8), static_cast<std::uint32_t>(c.m / 16)}, .block = {32}},
                  {a, bt, d, std::uint32_t(c.m), std::uint32_t(c.n), std::uint32_t(c.k)});
    results.push_back(compare("bf16_gemm_m16n8k16 " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                                  std::to_string(c.k),
                              d.download<float>(data.reference.size()), data.reference));
  }
  return results;
}

ExampleResult run_warp_gemm_16x8x16(const Device& device, std::mt19937& rng) {
  WarpGemmData data = warp_gemm_16x8x16_data(rng);
  runtime::Module module(device, warp_gemm_16x8x16_kernel(device.target()));
  Buffer a = upload(device, data.a), bt = upload(device, data.bt), d = poisoned(device, data.reference.size());
  module.launch("warp_gemm_16x8x16", {.grid = {1}, .block = {32}}, {a, bt, d});
  return compare("warp_gemm_16x8x16", d.download<float>(data.reference.size()), data.reference);
}

ExampleResult run_warp_gemm_64x32x32(const Device& device, std::mt19937& rng) {
  WarpGemmData data = warp_gemm_64x32x32_data(rng);
  runtime::Module module(device, warp_gemm_64x32x32_kernel(device.target()));
  Buffer a = upload(device, data.a), bt = upload(device, data.bt), c = upload(device, data.c);
  Buffer d = poisoned(device, data.reference.size());
  module.launch("warp_gemm_64x32x32", {.grid = {1}, .block = {32}}, {a, bt, c, d});
  return compare("warp_gemm_64x32x32 (beta = 1)", d.download<float>(data.reference.size()), data.reference);
}

ExampleResult run_stream_read(const Device& device, std::mt19937& rng) {
  const std::uint32_t vectors = 1000, ctas = 3, threads = 64;
  std::vector<std::uint32_t> words(4 * vectors);
  for (auto& w : words) w = static_cast<std::uint32_t>(rng());
  const std::vector<std::uint32_t> expected = stream_read_reference(words, ctas * threads);
  runtime::Module module(device, stream_read_kernel(device.target()));
  Buffer src = upload(device, words), out(device, expected.size() * 4);
  out.fill(0xFF);
  module.launch(kStreamReadKernel, {.grid = {ctas}, .block = {threads}}, {src, vectors, out});
  const std::vector<std::uint32_t> folds = out.download<std::uint32_t>(expected.size());
  const bool equal = folds == expected;
  return {"stream_read 1000 vectors", equal,
          equal ? "every warp's fold equals the host's" : "a warp's fold differs from the host's", {}};
}

std::vector<ExampleResult> run_all_examples(const Device& device, std::mt19937& rng) {
  std::vector<ExampleResult> all{run_mma_demo(device)};
  for (auto& r : run_bf16_gemm(device, rng)) all.push_back(std::move(r));
  all.push_back(run_warp_gemm_16x8x16(device, rng));
  all.push_back(run_warp_gemm_64x32x32(device, rng));
  all.push_back(run_stream_read(device, rng));
  return all;
}

}  // namespace warpforge::examples
