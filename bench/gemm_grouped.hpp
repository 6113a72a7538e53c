// bench_gemm --grouped: ops::GroupedGemm (mixture-of-experts) over the expert
// shapes of published models, each beside, in the same run, a loop of cuBLAS
// bf16 GEMMs over the groups (cublasGemmEx per non-empty group; the loop
// knows the group sizes, which our op reads on the device) and the read-once
// floor: the active experts' weight bytes (codes and scales when packed)
// read once by the stream_read example kernel, timed as the GEMM is.
//
//   bench_gemm --grouped [--models mixtral,qwen3,gpt-oss,deepseek,dense] [--tokens 1,16,128,1024,8192,32768]
//              [--weights bf16|mxfp4|nvfp4|mxfp8] [--proj gate_up|down] [--skew S] [--reps R]
//              [--grouped-kernel auto|stream|sm90a|sm80]
//
// A model's layer: E experts, top k, hidden H, expert width F; gate/up
// multiplies (tokens·k) x H by (H, 2F) per expert, down (tokens·k) x F by
// (F, H); "dense" (not in the default list) is the dense weight-only GEMM
// of the decode target, N = K = 8192: 4 experts of which routing r
// gives every token to expert r (one active group, the others empty; 4 so
// that the rotation below keeps it out of L2). The routing: each token takes k distinct experts drawn with
// weights 1/(rank+1)^S (a skew; S = 1 by default) over a shuffled order of
// the experts; the pairs sorted by expert give the offsets. Each timed run
// takes the next of 4 routings (other experts' weights each time, so that
// no run finds the active experts' weights in L2 from the run before).
// Operands are filled with constant bytes (finite values whose scales fold):
// this times the kernels; their results are checked by the tests.
//
// Included by bench/gemm.cpp only (it uses that file's median and
// check_cublas); the part of that program that is the grouped GEMM's.
#pragma once

#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "warpforge/ops/grouped_gemm.hpp"

namespace {

struct MoeModel {
  const char* name;
  std::int64_t experts, top_k, hidden, expert;
  bool one_active = false;  // routing r: every token to expert r
};
// Published configurations (REFERENCE.md's MoE shapes).
constexpr MoeModel kMoeModels[] = {{"mixtral", 8, 2, 4096, 14336},
                                   {"qwen3", 128, 8, 2048, 768},
                                   {"gpt-oss", 128, 4, 2880, 2880},
                                   {"deepseek", 256, 8, 7168, 2048}};
// The dense weight-only GEMM, N = K = 8192, one active expert of 4 (--models dense).
constexpr MoeModel kDenseModel{"dense", 4, 1, 8192, 4096, true};

struct GroupedBenchOptions {
  std::vector<MoeModel> models{std::begin(kMoeModels), std::end(kMoeModels)};
  std::vector<std::int64_t> tokens{1, 16, 128, 1024, 8192, 32768};
  std::string weights = "bf16";
  bool down = false;
  double skew = 1.0;
  int reps = 10;
  ops::GroupedGemmKernel kernel = ops::GroupedGemmKernel::automatic;
};

[[noreturn]] void grouped_usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_gemm --grouped: %s\nusage: bench_gemm --grouped [--models mixtral,qwen3,gpt-oss,deepseek,dense] "
               "[--tokens 1,16,...] [--weights bf16|mxfp4|nvfp4|mxfp8] [--proj gate_up|down] [--skew S>=0] "
               "[--reps R>=5] [--grouped-kernel auto|stream|sm90a|sm80]\n",
               why.c_str());
  std::exit(2);
}

std::vector<std::string> comma_list(const std::string& v) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t end = std::min(v.find(',', start), v.size());
    out.push_back(v.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

GroupedBenchOptions parse_grouped(int argc, char** argv) {
  GroupedBenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--grouped") continue;
    if (i + 1 >= argc) grouped_usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--models") {
      o.models.clear();
      for (const std::string& name : comma_list(v)) {
        if (name == kDenseModel.name) {
          o.models.push_back(kDenseModel);
          continue;
        }
        const auto* m = std::find_if(std::begin(kMoeModels), std::end(kMoeModels),
                                     [&](const MoeModel& x) { return name == x.name; });
        if (m == std::end(kMoeModels))
          grouped_usage("--models: '" + name + "': accepted mixtral, qwen3, gpt-oss, deepseek, dense");
        o.models.push_back(*m);
      }
    } else if (a == "--tokens") {
      o.tokens.clear();
      for (const std::string& t : comma_list(v)) {
        const long long x = std::atoll(t.c_str());
        if (x < 1) grouped_usage("--tokens: '" + t + "' is not a positive count");
        o.tokens.push_back(x);
      }
    } else if (a == "--weights") {
      if (v != "bf16" && v != "mxfp4" && v != "nvfp4" && v != "mxfp8") grouped_usage("--weights " + v + ": accepted bf16, mxfp4, nvfp4, mxfp8");
      o.weights = v;
    } else if (a == "--proj") {
      if (v != "gate_up" && v != "down") grouped_usage("--proj " + v + ": accepted gate_up, down");
      o.down = v == "down";
    } else if (a == "--skew") {
      o.skew = std::atof(v.c_str());
      if (!(o.skew >= 0)) grouped_usage("--skew " + v + ": a number >= 0");
    } else if (a == "--reps") {
      o.reps = std::atoi(v.c_str());
      if (o.reps < 5) grouped_usage("--reps " + v + ": at least 5");
    } else if (a == "--grouped-kernel") {
      const auto k = ops::parse_grouped_gemm_kernel(v);
      if (!k) grouped_usage("--grouped-kernel " + v + ": accepted auto, stream, sm90a, sm80");
      o.kernel = *k;
    } else {
      grouped_usage("unknown argument " + a);
    }
  }
  return o;
}

// One routing: each token's k distinct experts, skewed; the group sizes.
std::vector<std::int32_t> moe_routing(const MoeModel& m, std::int64_t tokens, double skew, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> order(static_cast<std::size_t>(m.experts));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> weight(order.size());
  for (std::size_t r = 0; r < order.size(); ++r)
    weight[static_cast<std::size_t>(order[r])] = 1.0 / std::pow(static_cast<double>(r + 1), skew);
  std::vector<std::int32_t> sizes(order.size(), 0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::vector<double> w = weight;
    for (std::int64_t j = 0; j < m.top_k; ++j) {
      std::discrete_distribution<std::int64_t> pick(w.begin(), w.end());
      const auto e = static_cast<std::size_t>(pick(rng));
      ++sizes[e];
      w[e] = 0;  // distinct experts
    }
  }
  return sizes;
}

ops::BlockScaledFormat moe_format(const std::string& name) {
  return name == "mxfp4" ? ops::kMxfp4 : name == "nvfp4" ? ops::kNvfp4 : ops::kMxfp8E4m3;
}

int grouped_main(int argc, char** argv) {
  const GroupedBenchOptions o = parse_grouped(argc, argv);
  if (runtime::Device::cuda_count() == 0) {
    std::fprintf(stderr, "bench_gemm --grouped: needs a CUDA GPU (none found); nothing measured\n");
    return 1;
  }
  runtime::Device dev = runtime::Device::cuda(0);
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  const bool packed = o.weights != "bf16";
  constexpr int kRoutings = 4;
  std::printf("GPU: %s. Grouped GEMM (mixture of experts), %s projection, routing skew %.2f, %d routings rotated.\n",
              dev.properties().name.c_str(), o.down ? "down" : "gate/up", o.skew, kRoutings);
  std::printf("Ours: ops::GroupedGemm, bf16 tokens x %s experts, bf16 D, offsets on the device.\n", o.weights.c_str());
  std::printf("Peers: a loop of cuBLAS bf16 GEMMs over the groups (cublasGemmEx, CUBLAS_COMPUTE_32F); the read-once "
              "floor (stream_read over the active experts' weight bytes, the fastest of four grids).\n");
  std::printf("Each figure: the median of %d runs, CUDA events around each, after 3 warm-up runs. Results are checked "
              "by the tests, not here (constant inputs).\n\n",
              o.reps);
  std::printf("| model | tokens | active experts | ours bf16: kernel, us | cuBLAS loop us | ours / loop |%s bf16 read-once us | "
              "bf16 read / ours |%s\n",
              packed ? " ours packed us | packed / ours bf16 |" : "", packed ? " packed read-once us | packed read / ours |" : "");
  std::printf("|---|---|---|---|---|---|%s---|---|%s\n", packed ? "---|---|" : "", packed ? "---|---|" : "");

  runtime::Module read_module(dev, examples::stream_read_kernel(dev.target()));
  const std::uint32_t read_threads = 256, most_ctas = 8 * static_cast<std::uint32_t>(dev.properties().sm_count);
  runtime::Buffer read_folds(dev, std::size_t{most_ctas} * read_threads / 32 * 4);
  std::vector<double> ratios;
  for (const MoeModel& m : o.models) {
    const std::int64_t k = o.down ? m.expert : m.hidden, n = o.down ? m.hidden : 2 * m.expert;
    const std::size_t expert_bytes = static_cast<std::size_t>(k * n) * 2;
    std::optional<runtime::Buffer> b;
    std::optional<ops::PackedWeightsLayout> layout;
    std::optional<runtime::Buffer> codes, scales;
    try {
      b.emplace(dev, expert_bytes * static_cast<std::size_t>(m.experts));
      b->fill(0x3C);  // bf16 0x3C3C: 0.0115
      if (packed) {
        const ops::BlockScaledFormat f = moe_format(o.weights);
        layout = ops::PackedWeightsLayout{f.data, f.scale, f.vec, m.experts, k, n};
        codes.emplace(dev, static_cast<std::size_t>(layout->code_bytes()));
        scales.emplace(dev, static_cast<std::size_t>(layout->scale_bytes()));
        codes->fill(0x22);                                       // FP4 1.0 and 1.0; e4m3 2^-5 x 1.25
        scales->fill(f.scale == DType::e8m0 ? 0x7F : 0x38);  // 1.0: folds
      }
    } catch (const Error& e) {
      std::printf("| %s | | refused: %s |\n", m.name, e.what());
      continue;
    }
    for (const std::int64_t tokens : o.tokens) {
      const std::int64_t rows = tokens * m.top_k;
      std::vector<std::vector<std::int32_t>> sizes;
      double active = 0;
      for (int r = 0; r < kRoutings; ++r) {
        if (m.one_active) {
          sizes.emplace_back(static_cast<std::size_t>(m.experts), 0);
          sizes.back()[static_cast<std::size_t>(r % m.experts)] = static_cast<std::int32_t>(tokens);
        } else {
          sizes.push_back(moe_routing(m, tokens, o.skew, static_cast<std::uint32_t>(1000 * r + tokens)));
        }
        active += static_cast<double>(std::count_if(sizes.back().begin(), sizes.back().end(), [](int s) { return s > 0; }));
      }
      active /= kRoutings;
      std::optional<runtime::Buffer> a, d, offsets;
      std::optional<ops::GroupedGemm> ours, ours_packed;
      std::vector<std::vector<std::int32_t>> ends(kRoutings);
      try {
        a.emplace(dev, static_cast<std::size_t>(rows * k) * 2);
        d.emplace(dev, static_cast<std::size_t>(rows * n) * 2);
        a->fill(0x3C);
        offsets.emplace(dev, static_cast<std::size_t>(kRoutings * m.experts) * 4);
        for (int r = 0; r < kRoutings; ++r) {
          ends[r].resize(sizes[r].size());
          std::partial_sum(sizes[r].begin(), sizes[r].end(), ends[r].begin());
          offsets->copy_from_host(ends[r].data(), ends[r].size() * 4, static_cast<std::size_t>(r * m.experts) * 4);
        }
      } catch (const Error& e) {
        std::printf("| %s | %lld | refused: %s |\n", m.name, static_cast<long long>(tokens), e.what());
        continue;
      }
      const runtime::TensorView va(*a, DType::bf16, {rows, k}), vd(*d, DType::bf16, {rows, n});
      // B (E, K, N) with K contiguous, as torch._grouped_mm takes it. The
      // dense GEMM (one_active): routing r's expert alone, one group
      // without offsets (B (K, N), the packed codes and scales of one group).
      auto b_view = [&](int r) {
        if (!m.one_active) return runtime::TensorView(*b, DType::bf16, {m.experts, k, n}, {k * n, 1, k});
        return runtime::TensorView(*b, DType::bf16, {k, n}, {1, k}, static_cast<std::uint64_t>(r % m.experts) * expert_bytes);
      };
      auto offs = [&](int r) {
        return runtime::TensorView(*offsets, DType::i32, {m.experts}, {}, static_cast<std::uint64_t>(r * m.experts) * 4);
      };
      auto codes_view = [&](int r) {
        const std::int64_t bytes = layout->code_bytes() / (m.one_active ? m.experts : 1);
        return runtime::TensorView(*codes, layout->data == DType::e2m1 ? DType::u8 : layout->data, {bytes}, {},
                                   m.one_active ? static_cast<std::uint64_t>((r % m.experts) * bytes) : 0);
      };
      auto scales_view = [&](int r) {
        const std::int64_t bytes = layout->scale_bytes() / (m.one_active ? m.experts : 1);
        return runtime::TensorView(*scales, layout->scale, {bytes}, {},
                                   m.one_active ? static_cast<std::uint64_t>((r % m.experts) * bytes) : 0);
      };
      const auto offs0 = offs(0);
      const runtime::TensorView* offs0_ptr = m.one_active ? nullptr : &offs0;
      const runtime::TensorView vb0 = b_view(0);
      std::optional<runtime::TensorView> vcodes, vscales;
      try {
        ours.emplace(ops::GroupedGemmTensors{va, vb0, offs0_ptr, vd}, ops::GroupedGemmOptions{.kernel = ops::GroupedGemmKernel::automatic});
        ours->compile();
        if (packed) {
          vcodes.emplace(codes_view(0));
          vscales.emplace(scales_view(0));
          ours_packed.emplace(ops::GroupedGemmTensors{va, *vcodes, offs0_ptr, vd, nullptr, &*vscales},
                              ops::GroupedGemmOptions{.sf_vec_size = layout->vec, .kernel = o.kernel});
          ours_packed->compile();
        }
      } catch (const Error& e) {
        std::printf("| %s | %lld | refused: %s |\n", m.name, static_cast<long long>(tokens), e.what());
        continue;
      }
      auto time = [&](const auto& run) {
        for (int i = 0; i < 3; ++i) run(i % kRoutings);
        std::vector<runtime::Event> starts, stops;
        for (int r = 0; r < o.reps; ++r) starts.push_back(dev.create_event()), stops.push_back(dev.create_event());
        for (int r = 0; r < o.reps; ++r) {
          starts[r].record();
          run(r % kRoutings);
          stops[r].record();
        }
        std::vector<float> ms;
        for (int r = 0; r < o.reps; ++r) ms.push_back(runtime::Event::elapsed_ms(starts[r], stops[r]));
        return static_cast<double>(median(ms)) * 1e-3;
      };
      const double ours_s = time([&](int r) {
        const auto o_r = offs(r);
        const auto b_r = b_view(r);
        ours->execute({va, b_r, m.one_active ? nullptr : &o_r, vd});
      });
      const float alpha = 1.0f, beta = 0.0f;
      const double loop_s = time([&](int r) {
        std::int64_t begin = 0;
        for (std::size_t g = 0; g < sizes[r].size(); ++g) {
          const std::int64_t rows_g = sizes[r][g];
          if (rows_g == 0) continue;
          // Row-major D_g = A_g·B_g is column-major D_gᵀ = B_gᵀ·A_gᵀ; B_g is (N, K) row-major in memory.
          check_cublas(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows_g),
                                    static_cast<int>(k), &alpha,
                                    reinterpret_cast<const void*>(b->address() + g * expert_bytes), CUDA_R_16BF,
                                    static_cast<int>(k), reinterpret_cast<const void*>(a->address() + begin * k * 2),
                                    CUDA_R_16BF, static_cast<int>(k), &beta,
                                    reinterpret_cast<void*>(d->address() + begin * n * 2), CUDA_R_16BF,
                                    static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
          begin += rows_g;
        }
      });
      // The read-once floor of `bytes` from `buffer` (of `size` bytes): each
      // routing's run reads another part where the buffer has room.
      auto read_once_s = [&](const runtime::Buffer& buffer, std::size_t size, std::size_t bytes) {
        if (bytes > size)
          throw std::logic_error("bench_gemm --grouped: the read-once floor of " + std::to_string(bytes) +
                                 " bytes asked of a buffer of " + std::to_string(size));
        const auto vectors = static_cast<std::uint32_t>(bytes / 16);
        double best = 0;
        for (std::uint32_t ctas = most_ctas / 8; ctas <= most_ctas; ctas *= 2) {
          const double t = time([&](int r) {
            const std::size_t at = size >= kRoutings * bytes ? static_cast<std::size_t>(r) * bytes / 16 * 16 : 0;
            read_module.launch(examples::kStreamReadKernel, {.grid = {ctas}, .block = {read_threads}},
                               {runtime::TensorView(dev, buffer.address() + at, DType::u8, {static_cast<std::int64_t>(bytes)}),
                                vectors, read_folds});
          });
          best = best == 0 ? t : std::min(best, t);
        }
        return best;
      };
      const double bf16_read_s = read_once_s(*b, b->size(), static_cast<std::size_t>(active * static_cast<double>(expert_bytes)));
      ratios.push_back(loop_s / ours_s);
      std::printf("| %s | %lld | %.1f | %s %.1f | %.1f | %.2f |", m.name, static_cast<long long>(tokens), active,
                  std::string(ours->kernel_name()).c_str(), ours_s * 1e6, loop_s * 1e6, loop_s / ours_s);
      if (packed) {
        const double packed_s = time([&](int r) {
          const auto o_r = offs(r);
          const auto codes_r = codes_view(r), scales_r = scales_view(r);
          ours_packed->execute({va, codes_r, m.one_active ? nullptr : &o_r, vd, nullptr, &scales_r});
        });
        const double per_expert = static_cast<double>(layout->code_bytes() + layout->scale_bytes()) / static_cast<double>(m.experts);
        // Codes and scales together outgrow the codes' buffer when every
        // expert is active: the floor reads as many bytes of B's bf16 copy.
        const double packed_read_s = read_once_s(*b, b->size(), static_cast<std::size_t>(active * per_expert));
        std::printf(" %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |\n", packed_s * 1e6, ours_s / packed_s, bf16_read_s * 1e6,
                    bf16_read_s / ours_s, packed_read_s * 1e6, packed_read_s / packed_s);
      } else {
        std::printf(" %.1f | %.2f |\n", bf16_read_s * 1e6, bf16_read_s / ours_s);
      }
      std::fflush(stdout);
      if (&m == &o.models.front() && tokens == o.tokens.front())
        std::printf("<!-- kernel: %s -->\n", (packed ? ours_packed : ours)->describe().c_str());
    }
  }
  if (!ratios.empty()) {
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    std::printf("\nours bf16 / cuBLAS loop: geometric mean %.3f, worst %.3f over %zu rows\n",
                std::exp(log_sum / static_cast<double>(ratios.size())), *std::min_element(ratios.begin(), ratios.end()),
                ratios.size());
  }
  cublasDestroy(handle);
  return 0;
}

}  // namespace
