// Prints the PTX hash of every sm90a kernel configuration the tests, the
// heuristics, the autotuner's candidates and the benchmarks build, one line
// each ("<fnv1a-64> <kernel name> <where it came from>"), sorted by name,
// then a line with the count and a hash over all of them. Run before and
// after a change that should leave the emitted PTX alone (a refactoring of
// the kernels onto shared code) and compare: scripts/ptx-identity.sh does
// both. With --dump DIR, also writes each kernel's PTX to DIR/<name>.ptx.
//
// The configurations: the bf16 GEMM's (ops::Gemm's sm90a path) for the
// decoder sweep and small, odd shapes in every layout and dtype, the
// heuristic's choice and every autotune candidate, on simulated devices of
// several SM counts (tests run on the simulator, whose SM count is the
// host's cores); a deterministic sample of the kernel's whole option space
// (Sm90aSpec); the block-scaled GEMM's sm90a and swapped kernels for the
// block-scaled benchmark's and the tests' shapes in every format, C dtype,
// precision, mma tile and cluster option; the bf16 GEMM with amax that its
// prepass path runs.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../src/ops/gemm/gemm_path.hpp"
#include "../src/ops/gemm/sm90a_kernel.hpp"
#include "../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "../src/ops/gemm_amax/sm90a_gemm_amax_kernel.hpp"
#include "../src/ops/gemm_amax/swapped_gemm_amax_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/decoder_shapes.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace {

using namespace warpforge;
using runtime::DType;

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Kernels {
  std::map<std::string, std::pair<std::uint64_t, std::string>>
      by_name;  // name -> hash, first origin
  std::map<std::string, std::string> text;
  bool keep_text = false;
  // Builds (`build`) only a kernel whose name is new: names spell out every choice.
  void add(const std::string& name, const std::function<std::string()>& build,
           const std::string& origin) {
    if (by_name.count(name)) return;
    const std::string ptx = build();
    const std::uint64_t h = fnv1a(ptx);
    by_name.try_emplace(name, h, origin);
    if (keep_text) text[name] = ptx;
  }
};

runtime::Device simulated(int sms) {
  return runtime::Device(sim::make_backend({.sm_count = sms}));
}

// --- the bf16 GEMM --------------------------------------------------------

ops::GemmProblem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t l,
                              DType ab, DType d, bool a_row, bool b_row, bool has_c, bool amax) {
  auto ld = [](std::int64_t v) { return (v + 7) / 8 * 8; };
  ops::GemmProblem p{.m = m, .n = n, .k = k, .l = l, .ab_dtype = ab, .d_dtype = d};
  p.a = {.row_major = a_row, .ld = ld(a_row ? k : m)};
  p.a.batch_stride = p.a.ld * (a_row ? m : k);
  p.b = {.row_major = b_row, .ld = ld(b_row ? n : k)};
  p.b.batch_stride = p.b.ld * (b_row ? k : n);
  p.d = {.row_major = true, .ld = ld(n), .batch_stride = ld(n) * m};
  p.has_c = has_c;
  if (has_c) p.c = p.d;
  p.amax = amax;
  return p;
}

void add_gemm(Kernels& out, const ops::Sm90aSpec& s, const std::string& origin) {
  try {
    out.add(
        s.name(), [&] { return ops::build_sm90a_gemm(s).to_ptx(); }, origin);
  } catch (const Error&) {
    // A spec the builder refuses (the sample below draws some): nothing to compare.
  }
}

void gemm_for_problem(Kernels& out, const ops::GemmProblem& p, const runtime::Device& dev,
                      const std::string& where) {
  const ops::GemmPath& path = ops::sm90a_gemm_path();
  if (!path.refusals(p, dev).empty()) return;
  const std::size_t limit = dev.properties().shared_bytes_per_block_optin;
  const std::string origin = where + " " + p.describe();
  add_gemm(out, ops::sm90a_spec(p, path.heuristic(p, dev), limit), "heuristic " + origin);
  for (const ops::GemmConfig& c : path.candidates(p, dev))
    add_gemm(out, ops::sm90a_spec(p, c, limit), "candidate " + c.describe() + " " + origin);
}

void gemms(Kernels& out) {
  for (int sms : {2, 4, 8, 16, 132}) {
    const runtime::Device dev = simulated(sms);
    const std::string where = std::to_string(sms) + " SMs";
    for (const ops::GemmShape& g : ops::decoder_sweep())
      for (bool b_row : {false, true})
        for (DType d : {DType::bf16, DType::f32})
          gemm_for_problem(
              out, gemm_problem(g.m, g.n, g.k, 1, DType::bf16, d, true, b_row, false, false), dev,
              where);
    // The tests' shapes (tests/ops/gemm_sm90a_cases.hpp): small, odd, batched.
    const std::int64_t shapes[][4] = {{37, 45, 53, 1},    {1, 9, 17, 1},        {67, 131, 75, 1},
                                      {21, 29, 13, 3},    {1, 1, 1, 1},         {11, 75, 139, 1},
                                      {131, 139, 267, 1}, {131, 299, 75, 2},    {131, 299, 139, 1},
                                      {203, 267, 139, 1}, {2048, 2048, 2048, 1}};
    for (const auto& s : shapes)
      for (DType ab : {DType::bf16, DType::f16})
        for (DType d : {DType::f32, DType::bf16, DType::f16})
          for (int layout = 0; layout < 4; ++layout)
            for (int extra = 0; extra < 3; ++extra)
              gemm_for_problem(out,
                               gemm_problem(s[0], s[1], s[2], s[3], ab, d, layout & 1, layout & 2,
                                            extra == 1, extra == 2),
                               dev, where);
  }
  // A deterministic sample of the whole option space.
  std::mt19937 rng(42);
  auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + rng() % v.size()); };
  for (int i = 0; i < 1500; ++i) {
    ops::Sm90aSpec s;
    s.ab = pick({0, 1}) ? DType::bf16 : DType::f16;
    const int d = pick({0, 1, 2});
    s.d = d == 0 ? DType::bf16 : d == 1 ? DType::f16 : DType::f32;
    s.a_k_major = pick({0, 1});
    s.b_k_major = pick({0, 1});
    const int schedule = pick({0, 1, 2, 3});
    s.consumers = schedule == 0 ? 1 : 2;
    s.pingpong = schedule >= 2;
    s.wg_rows = schedule == 3 ? 128 : 64;
    s.tile_n = pick({64, 96, 128, 160, 192, 224, 256});
    if (s.pingpong && s.wg_rows == 128 && s.tile_n > 128) s.tile_n = 128;
    s.stages = pick({2, 3, 4, 5, 6, 8});
    s.epilogue_cols = pick({0, 0, 64, 128});
    if (s.epilogue_cols && s.tile_n % s.epilogue_cols != 0) s.epilogue_cols = 0;
    const int cluster = pick({0, 0, 1, 2});
    s.cluster_m = cluster == 1 ? 2 : 1;
    s.cluster_n = cluster == 2 ? 2 : 1;
    s.stream_k = !s.pingpong && cluster == 0 && s.consumers == 2 && pick({0, 1});
    if (s.a_k_major && s.cluster_n == 1 && pick({0, 1, 2}) == 0) s.a_rows = pick({8, 16, 32, 64});
    if (s.a_rows > s.tile_m()) s.a_rows = 0;
    s.has_c = pick({0, 1});
    s.amax = pick({0, 0, 1});
    add_gemm(out, s, "sample");
  }
}

// --- the block-scaled GEMM ------------------------------------------------

struct Format {
  DType ab, sf;
  int vec;
};

ops::GemmAmaxProblem amax_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t l,
                                  const Format& f, DType c, bool c_n_major) {
  ops::GemmAmaxProblem p{.m = m,
                         .n = n,
                         .k = k,
                         .l = l,
                         .ab_dtype = f.ab,
                         .sf_dtype = f.sf,
                         .c_dtype = c,
                         .vec = f.vec};
  const std::int64_t align = f.ab == DType::e2m1 ? 32 : 16;  // 16 bytes of codes
  const std::int64_t kk = (k + align - 1) / align * align;
  p.a = {kk, 1, kk * m};
  p.b = {kk, 1, kk * n};
  const std::int64_t cn = (n + 7) / 8 * 8, cm = (m + 7) / 8 * 8;
  p.c = c_n_major ? ops::MatrixStrides{cn, 1, cn * m} : ops::MatrixStrides{1, cm, cm * n};
  return p;
}

void amax_for_problem(Kernels& out, const ops::GemmAmaxProblem& p, const runtime::Device& dev,
                      const std::string& where) {
  const std::string origin = where + " " + p.describe();
  if (ops::sm90a_gemm_amax_path().refusals(p, dev).empty()) {
    const ops::Sm90aGemmAmaxTiling t = ops::sm90a_gemm_amax_tiling(p, dev);
    out.add(
        ops::sm90a_gemm_amax_name(p, t) + "_" + p.describe() + (p.c.col == 1 ? " cn" : " cm"),
        [&] { return ops::build_sm90a_gemm_amax(p, t).to_ptx(); }, "sm90a " + origin);
  }
  if (ops::swapped_gemm_amax_path().refusals(p, dev).empty()) {
    const ops::SwappedGemmAmaxTiling t = ops::swapped_gemm_amax_tiling(p, dev);
    out.add(
        std::string(ops::kSwappedGemmAmaxKernel) + "_t" + std::to_string(t.tokens) + "s" +
            std::to_string(t.stages) + "k" + std::to_string(t.splits) + (t.cluster ? "c" : "") +
            "_" + p.describe() + (p.c.col == 1 ? " cn" : " cm"),
        [&] { return ops::build_swapped_gemm_amax(p, t).to_ptx(); }, "swapped " + origin);
  }
  // The prepass path's bf16 GEMM with amax (prepass_gemm_amax_path.cpp: copies of leading dimension
  // K).
  const std::int64_t ld = (p.k + 7) / 8 * 8;
  ops::GemmProblem g{
      .m = p.m, .n = p.n, .k = p.k, .l = p.l, .ab_dtype = DType::bf16, .d_dtype = p.c_dtype};
  g.a = {.row_major = true, .ld = ld, .batch_stride = p.m * ld};
  g.b = {.row_major = false, .ld = ld, .batch_stride = p.n * ld};
  g.d = {.row_major = true, .ld = p.c.row, .batch_stride = p.c.batch};
  g.amax = true;
  if (p.c.col == 1 && p.c_dtype != DType::e2m1 && p.c_dtype != DType::e4m3 &&
      p.c_dtype != DType::e5m2)
    gemm_for_problem(out, g, dev, "prepass " + where);
}

void block_scaled(Kernels& out) {
  const Format formats[] = {{DType::e4m3, DType::e8m0, 32},
                            {DType::e5m2, DType::e8m0, 32},
                            {DType::e2m1, DType::e8m0, 32},
                            {DType::e2m1, DType::e4m3, 16}};
  const std::int64_t bench[][4] = {
      {1, 8192, 8192, 1},    {16, 8192, 8192, 1},   {64, 8192, 8192, 1},
      {128, 8192, 8192, 1},  {256, 8192, 8192, 1},  {1024, 8192, 8192, 1},
      {4096, 8192, 8192, 1}, {8192, 8192, 8192, 1}, {4096, 4096, 4096, 1}};
  const std::int64_t tests[][4] = {{100, 72, 96, 3},    {200, 300, 320, 1}, {1000, 1040, 2048, 2},
                                   {128, 256, 512, 1},  {257, 129, 192, 1}, {64, 64, 64, 1},
                                   {300, 520, 1088, 1}, {16, 200, 256, 1},  {129, 384, 704, 2},
                                   {1, 1, 64, 1}};
  for (int sms : {2, 4, 8, 16, 132}) {
    const runtime::Device dev = simulated(sms);
    const std::string where = std::to_string(sms) + " SMs";
    auto each = [&](const std::int64_t(&s)[4], bool options) {
      for (const Format& f : formats)
        for (DType c : {DType::bf16, DType::f32, DType::f16})
          for (bool n_major : {true, false}) {
            ops::GemmAmaxProblem p = amax_problem(s[0], s[1], s[2], s[3], f, c, n_major);
            for (auto precision : {ops::GemmAmaxPrecision::exact, ops::GemmAmaxPrecision::fast}) {
              p.precision = precision;
              p.tile.reset();
              p.cluster.reset();
              amax_for_problem(out, p, dev, where);
              if (!options) continue;
              for (int tile_n : {64, 128, 256}) {
                p.tile = ops::GemmAmaxTile{128, tile_n};
                for (int cm : {0, 1, 2}) {
                  if (cm)
                    p.cluster = ops::GemmAmaxTile{cm, 1};
                  else
                    p.cluster.reset();
                  amax_for_problem(out, p, dev, where);
                }
              }
            }
          }
    };
    for (const auto& s : bench) each(s, sms == 132);
    for (const auto& s : tests) each(s, true);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kernels out;
  std::string dump;
  if (argc == 3 && std::string(argv[1]) == "--dump") {
    dump = argv[2];
    out.keep_text = true;
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--dump DIR]\n", argv[0]);
    return 2;
  }
  gemms(out);
  block_scaled(out);
  std::string all;
  for (const auto& [name, v] : out.by_name) {
    std::printf("%016llx %s  (%s)\n", static_cast<unsigned long long>(v.first), name.c_str(),
                v.second.c_str());
    all += name + std::to_string(v.first) + "\n";
  }
  std::printf("%zu kernels, all together %016llx\n", out.by_name.size(),
              static_cast<unsigned long long>(fnv1a(all)));
  if (!dump.empty()) {
    std::filesystem::create_directories(dump);
    for (const auto& [name, ptx] : out.text)
      std::ofstream(std::filesystem::path(dump) / (name + ".ptx")) << ptx;
  }
  return 0;
}
