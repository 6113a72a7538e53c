// Whole shipped kernels at small shapes (issue 26 item 5): the documented
// examples, the GEMM's sm80 and sm90a configurations, and the block-scaled
// GEMM + amax's skinny, sm80, sm90a, swapped and prepass kernels (MXFP8 and
// NVFP4, the sm90a one also in its FP8-wgmma "fast" precision, the swapped
// one also with split K). A case is one output element
// (amax counts as 4 bytes' worth of C's elements). Inputs come from the
// unit's seed; the GEMMs' are elements of spread exponents and random signs
// (mma_inputs.hpp), the block-scaled ones the ops tests' U(-2, 2) data with
// scales in {1, 2}.
#include <random>

#include "difftest/families.hpp"
#include "difftest/mma_inputs.hpp"
#include "kernels/bf16_gemm.hpp"
#include "kernels/runners.hpp"
#include "ops/gemm_amax_test_support.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::difftest {

namespace {

using runtime::DType;

void append_floats(std::vector<std::uint8_t>& bytes, const std::vector<float>& values) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(values.data());
  bytes.insert(bytes.end(), p, p + values.size() * sizeof(float));
}

std::string digest(const std::string& text) {
  return runtime::to_hex(runtime::sha256(text)).substr(0, 16);
}

Unit example_unit(
    std::string name, std::int64_t cases,
    std::function<std::vector<examples::ExampleResult>(const runtime::Device&, std::mt19937&)>
        run) {
  Unit u;
  u.name = "example " + name;
  u.cases = cases;
  u.run = [run = std::move(run)](const runtime::Device& device, std::uint64_t seed) {
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    Outcome o;
    std::string names;
    for (const auto& r : run(device, rng)) {
      append_floats(o.bytes, r.output);
      names += r.name + ";";
    }
    o.fingerprint = digest(names);
    return o;
  };
  return u;
}

// A contiguous row-major matrix of 16-bit elements from the seed's stream.
runtime::Buffer gemm_operand(const runtime::Device& device, Rng& rng, const FloatFormat& f,
                             std::int64_t count) {
  const MmaWarpInputs spread{3, false};
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
  for (auto& b : bits)
    b = static_cast<std::uint16_t>(matrix_element(rng, f, spread, spread.spread));
  runtime::Buffer buffer(device, bits.size() * 2);
  buffer.upload(bits);
  return buffer;
}

Unit gemm_unit(ops::GemmKernel kernel, const std::string& config_text, DType ab, std::int64_t m,
               std::int64_t n, std::int64_t k) {
  Unit u;
  u.name = "gemm " + std::string(ops::name(kernel)) + " " + config_text + " " +
           std::string(runtime::name(ab)) + " " + std::to_string(m) + "x" + std::to_string(n) +
           "x" + std::to_string(k) + " D = A.B + C";
  u.cases = m * n;
  u.run = [=](const runtime::Device& device, std::uint64_t seed) {
    Rng rng(seed);
    const FloatFormat& f = ab == DType::bf16 ? kBF16 : kF16;
    runtime::Buffer a = gemm_operand(device, rng, f, m * k),
                    b = gemm_operand(device, rng, f, k * n);
    std::vector<float> c_values(static_cast<std::size_t>(m * n));
    for (auto& v : c_values) v = static_cast<float>(rng.below(64)) - 32;
    runtime::Buffer c(device, c_values.size() * 4), d(device, c_values.size() * 4);
    c.upload(c_values);
    d.fill(0xFF);
    const runtime::TensorView av(a, ab, {m, k}, {k, 1}), bv(b, ab, {k, n}, {n, 1});
    const runtime::TensorView cv(c, DType::f32, {m, n}, {n, 1}), dv(d, DType::f32, {m, n}, {n, 1});
    ops::GemmOptions options{.alpha = 1.0f,
                             .beta = 1.0f,
                             .kernel = kernel,
                             .config = ops::parse_gemm_config(config_text)};
    ops::Gemm gemm(av, bv, &cv, dv, options);
    gemm.execute(av, bv, &cv, dv);
    Outcome o;
    o.bytes = d.download<std::uint8_t>(c_values.size() * 4);
    o.fingerprint = digest(std::string(ops::name(gemm.kernel())) + " " + gemm.config().describe());
    return o;
  };
  return u;
}

// `configured`, where given, is text the op's describe() must hold (the
// configuration the unit exists for: "K split 2 ways"); a device on which it
// does not (another SM count) refuses the unit, saying so.
Unit gemm_amax_unit(ops::GemmAmaxKernel kernel, DType ab, DType sf, int vec, DType c_dtype,
                    ops::GemmAmaxPrecision precision, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::string configured = "") {
  ops::testing::GemmAmaxCase c;
  c.ab = ab, c.sf = sf, c.vec = vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.l = 1;
  c.tile = std::nullopt, c.kernel = kernel, c.precision = precision;
  Unit u;
  u.name = "gemm_amax " + std::string(ops::name(kernel)) + " " + c.describe();
  u.cases = m * n + 4 / (runtime::bits(c_dtype) / 8);  // C's elements, and amax in C's element size
  u.run = [c, configured](const runtime::Device& device, std::uint64_t seed) {
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    ops::testing::GemmAmaxSetup s = ops::testing::make_gemm_amax(device, c, rng);
    s.out.buffer->fill(0xFF);
    const float zero = 0.0f;
    s.amax.buffer->copy_from_host(&zero, 4);
    ops::GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                     s.options());
    std::string reasons;
    for (const auto& r : op.check_support()) reasons += r + "; ";
    if (!reasons.empty()) throw Error("gemm_amax refuses the case: " + reasons);
    if (op.describe().find(configured) == std::string::npos)
      throw Error("the unit is for a configuration with '" + configured + "', and on device '" +
                  device.properties().name + "' (" + std::to_string(device.properties().sm_count) +
                  " SMs) gemm_amax chose another: " + op.describe());
    op.execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view);
    Outcome o;
    o.bytes = s.out.buffer->download<std::uint8_t>(s.out.buffer->size());
    const auto amax = s.amax.buffer->download<std::uint8_t>(4);
    o.bytes.insert(o.bytes.end(), amax.begin(), amax.end());
    o.fingerprint = digest(op.describe());
    return o;
  };
  return u;
}

}  // namespace

Family kernel_family() {
  Family f{
      "kernels", "whole shipped kernels: examples, GEMM sm80/sm90a, block-scaled GEMM + amax", {}};
  f.units.push_back(
      example_unit("mma_m16n8k8_demo", 16 * 8, [](const runtime::Device& d, std::mt19937&) {
        return std::vector<examples::ExampleResult>{examples::run_mma_demo(d)};
      }));
  std::int64_t bf16_cases = 0;
  for (const auto& c : examples::bf16_gemm_cases()) bf16_cases += c.m * c.n;
  f.units.push_back(
      example_unit("bf16_gemm_m16n8k16 (five shapes)", bf16_cases, examples::run_bf16_gemm));
  f.units.push_back(
      example_unit("warp_gemm 16x8x16", 16 * 8, [](const runtime::Device& d, std::mt19937& rng) {
        return std::vector<examples::ExampleResult>{examples::run_warp_gemm_16x8x16(d, rng)};
      }));
  f.units.push_back(
      example_unit("warp_gemm 64x32x32", 64 * 32, [](const runtime::Device& d, std::mt19937& rng) {
        return std::vector<examples::ExampleResult>{examples::run_warp_gemm_64x32x32(d, rng)};
      }));
  // sm80: the configurations its heuristic and autotuner choose among.
  for (const char* config :
       {"128x128x32 s3 w2x2 c1x1", "128x128x32 s4 w2x2 c1x1", "128x256x32 s3 w2x4 c1x1",
        "256x128x32 s3 w4x2 c1x1", "128x64x32 s4 w2x2 c1x1", "64x128x32 s4 w2x2 c1x1",
        "64x64x32 s3 w2x2 c1x1", "64x64x64 s3 w2x2 c1x1", "32x32x32 s2 w1x1 c1x1"})
    f.units.push_back(gemm_unit(ops::GemmKernel::sm80, config, DType::bf16, 40, 48, 256));
  f.units.push_back(
      gemm_unit(ops::GemmKernel::sm80, "64x64x32 s3 w2x2 c1x1", DType::f16, 40, 48, 256));
  // sm90a: cooperative, ping-pong, stream-K and clustered tiles.
  for (const char* config :
       {"128x128x64 s3 w2x1 c1x1", "64x64x64 s2 w1x1 c1x1", "128x256x64 s3 w2x1 c1x1",
        "128x128x64 s4 w1x1 c1x1 pingpong", "64x256x64 s3 w1x1 c1x1 pingpong",
        "128x128x64 s4 w2x1 c1x1 streamk", "128x256x64 s3 w2x1 c2x1", "128x256x64 s3 w2x1 c1x2"})
    f.units.push_back(gemm_unit(ops::GemmKernel::sm90a, config, DType::bf16, 40, 48, 256));
  f.units.push_back(
      gemm_unit(ops::GemmKernel::sm90a, "128x128x64 s3 w2x1 c1x1", DType::f16, 40, 48, 256));
  using ops::GemmAmaxKernel;
  using ops::GemmAmaxPrecision;
  for (GemmAmaxKernel kernel :
       {GemmAmaxKernel::skinny, GemmAmaxKernel::sm80, GemmAmaxKernel::sm90a}) {
    const std::int64_t m = kernel == GemmAmaxKernel::skinny ? 16 : 72;
    f.units.push_back(gemm_amax_unit(kernel, DType::e4m3, DType::e8m0, 32, DType::f32,
                                     GemmAmaxPrecision::exact, m, 64, 256));
    f.units.push_back(gemm_amax_unit(kernel, DType::e2m1, DType::e4m3, 16, DType::bf16,
                                     GemmAmaxPrecision::exact, m, 64, 256));
  }
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::sm90a, DType::e4m3, DType::e8m0, 32, DType::f32,
                                   GemmAmaxPrecision::fast, 72, 64, 256));
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::sm90a, DType::e5m2, DType::e8m0, 32, DType::bf16,
                                   GemmAmaxPrecision::exact, 72, 64, 256));
  // swapped: chosen between the skinny kernel's M and the prepass path's
  // M x L (A to bf16 by a pre-pass, B's codes into wgmma's fragments; K a
  // multiple of 64), at shapes where automatic selection takes it. K = 1024
  // is 16 blocks of 64 over one output tile: on the H100's 132 SMs the K
  // range is split in 2, whose partial sums meet in the workspace in split
  // order.
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::swapped, DType::e4m3, DType::e8m0, 32,
                                   DType::f32, GemmAmaxPrecision::exact, 40, 128, 256));
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::swapped, DType::e2m1, DType::e4m3, 16,
                                   DType::bf16, GemmAmaxPrecision::exact, 40, 192, 256));
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::swapped, DType::e4m3, DType::e8m0, 32,
                                   DType::bf16, GemmAmaxPrecision::exact, 24, 128, 1024,
                                   "K split 2 ways"));
  // prepass: chosen where M x L is large (A and B to bf16, then the sm90a
  // bf16 GEMM with an amax epilogue), named here at a small shape.
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::prepass, DType::e4m3, DType::e8m0, 32,
                                   DType::f32, GemmAmaxPrecision::exact, 72, 64, 256));
  f.units.push_back(gemm_amax_unit(GemmAmaxKernel::prepass, DType::e2m1, DType::e4m3, 16,
                                   DType::bf16, GemmAmaxPrecision::exact, 72, 64, 256));
  return f;
}

}  // namespace warpforge::difftest
