// ops::Attention, AttentionBackward and AttentionDecode on a GPU, the shapes
// of issue 46: prefill at 16k tokens a batch (sequence 512 to 16k, batch
// 16k / sequence), head_dim 64, 128 and 256, 16 query heads, causal and
// not, and grouped-query 8:1 at head_dim 128; decode of one query token at
// KV lengths 1k, 8k, 32k and 128k for batch 1, 8 and 64 (32 query and 8 KV
// heads, head_dim 128, pages of 256). For each shape: our time (CUDA events
// around each run after warm-up, the median of --reps) and TFLOP/s, FLOPs
// counted as FlashAttention counts them (4·batch·heads·seq_q·seq_k·head_dim
// forward, 2.5 times that backward, half for causal); for decode the bytes
// of K and V over the time, beside the read floor: the same bytes read once
// by the stream_read example kernel (the fastest of four grid sizes), timed
// alike, and the fraction of it we reach. PyTorch's scaled_dot_product_attention
// backends are the peers of the Python benchmark (python -m warpforge.bench_attention),
// which runs the same shapes.
//
//   build/bench/bench_attention [--kernel auto|sm90a|sm80] [--reps 10] [--prefill] [--decode]
//                               [--backward] [--quick] [--decode-shape BATCH,KV_LEN]
//                               [--decode-splits S,S,...] [--decode-layout slot|head] [--back-to-back N]
//                               [--prefill-shape SEQ,HEAD_DIM,HEADS_KV] [--deterministic]
//
// --quick: sequence 1k and 8k, decode at batch 1 and 8 only (what
// the scripts/gpu-attn-*.sh run within their time). --backward times the
// prefill's backward beside its forward (with --decode alone: the prefill too).
// --decode-shape: that decode shape only (to profile one launch of it);
// --decode-splits: a row for each split count (0: the op's own choice),
// each against the same floor. --decode-layout head: the caches' pages with
// each KV head's slots together (pages, heads_kv, page_size, head_dim in
// memory, the same view by strides; slot, the default, is vLLM's pages,
// page_size, heads_kv, head_dim): whether reading a head's 256-byte pieces
// of each slot costs the memory system. --back-to-back N: each decode sample
// is N calls between the two events over N, ours and the floor alike (the
// GPU's time without the host's launch in it). --prefill-shape: that prefill shape only
// (causal and not; to profile it). --kernel applies to the backward too;
// --deterministic runs the backward's deterministic mode.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/stream_read.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/attention.hpp"
#include "warpforge/ops/attention_decode.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/module.hpp"

using namespace warpforge;
using runtime::DType;

namespace {

struct Options {
  ops::AttentionKernel kernel = ops::AttentionKernel::automatic;
  int reps = 10;
  bool prefill = true, decode = true, backward = false, quick = false, deterministic = false;
  std::optional<std::array<std::int64_t, 3>> prefill_shape;  // seq, head_dim, heads_kv
  std::optional<std::pair<std::int64_t, std::int64_t>> decode_shape;  // batch, kv_len
  std::vector<int> decode_splits = {0};
  bool head_major = false;
  int back_to_back = 1;
};

std::vector<std::int64_t> numbers(const std::string& flag, const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    try {
      std::size_t used = 0;
      out.push_back(std::stoll(text.substr(at, comma - at), &used));
      if (used != comma - at) throw std::invalid_argument(text);
    } catch (const std::logic_error&) {
      throw Error(flag + " '" + text + "': expected integers separated by commas");
    }
    at = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  bool chose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--kernel") {
      const auto k = ops::parse_attention_kernel(value());
      if (!k) throw Error("--kernel: auto, sm90a or sm80");
      o.kernel = *k;
    } else if (a == "--reps") {
      o.reps = std::max(1, std::stoi(value()));
    } else if (a == "--backward") {
      o.backward = true;
    } else if (a == "--prefill" || a == "--decode") {
      if (!chose) o.prefill = o.decode = false, chose = true;
      (a == "--prefill" ? o.prefill : o.decode) = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--decode-shape") {
      const auto v = numbers(a, value());
      if (v.size() != 2 || v[0] < 1 || v[1] < 256 || v[1] % 256)
        throw Error("--decode-shape: BATCH,KV_LEN with BATCH >= 1 and KV_LEN a multiple of 256 (the page)");
      o.decode_shape = std::pair{v[0], v[1]};
    } else if (a == "--prefill-shape") {
      const auto v = numbers(a, value());
      if (v.size() != 3 || v[0] < 1 || 16384 % v[0] || (v[1] != 64 && v[1] != 128 && v[1] != 256) || v[2] < 1 ||
          16 % v[2])
        throw Error("--prefill-shape: SEQ,HEAD_DIM,HEADS_KV with SEQ dividing 16384, HEAD_DIM 64, 128 or 256 and "
                    "HEADS_KV dividing 16");
      o.prefill_shape = std::array{v[0], v[1], v[2]};
    } else if (a == "--deterministic") {
      o.deterministic = true;
    } else if (a == "--decode-layout") {
      const std::string v = value();
      if (v != "slot" && v != "head") throw Error("--decode-layout '" + v + "': slot or head");
      o.head_major = v == "head";
    } else if (a == "--back-to-back") {
      const auto v = numbers(a, value());
      if (v.size() != 1 || v[0] < 1 || v[0] > 1000) throw Error("--back-to-back: N from 1 to 1000");
      o.back_to_back = static_cast<int>(v[0]);
    } else if (a == "--decode-splits") {
      o.decode_splits.clear();
      for (std::int64_t x : numbers(a, value())) {
        if (x < 0 || x > 4096) throw Error("--decode-splits: each 0 (the op's choice) or 1 to 4096");
        o.decode_splits.push_back(static_cast<int>(x));
      }
    } else {
      throw Error("unknown argument '" + a + "'; see the comment at the top of bench/attention.cpp");
    }
  }
  if (o.backward) o.prefill = true;
  return o;
}

// A buffer of `bytes` of bf16 N(0,1) values (a pattern repeated: the
// values' statistics, not their order, set the work).
runtime::Buffer random_buffer(const runtime::Device& dev, std::size_t bytes, unsigned seed) {
  runtime::Buffer b(dev, bytes);
  std::vector<std::uint16_t> pattern(std::size_t{1} << 20);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& x : pattern) x = ops::f32_to_bf16_bits(normal(rng));
  std::vector<std::uint8_t> host(std::min(bytes, pattern.size() * 2));
  std::memcpy(host.data(), pattern.data(), host.size());
  for (std::size_t at = 0; at < bytes; at += host.size()) {
    const std::size_t n = std::min(host.size(), bytes - at);
    runtime::TensorView(b, DType::u8, {static_cast<std::int64_t>(n)}, {}, at).copy_from_host(host.data(), n);
  }
  return b;
}

// The median seconds of `reps` runs of `run`, each between two events (or
// `calls` runs in a row between them, over `calls`), after one warm-up.
double median_seconds(const runtime::Device& dev, int reps, const std::function<void()>& run, int calls = 1) {
  run();
  dev.synchronize();
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    runtime::Event start = dev.create_event(), end = dev.create_event();
    start.record();
    for (int c = 0; c < calls; ++c) run();
    end.record();
    end.synchronize();
    s.push_back(runtime::Event::elapsed_ms(start, end) * 1e-3 / calls);
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// The kernel an op's describe() names ("... kernel sm90a, ...").
std::string kernel_of(const std::string& desc) {
  const std::size_t at = desc.find("kernel ") + 7;
  return desc.substr(at, desc.find(',', at) - at);
}

void prefill(const runtime::Device& dev, const Options& o) {
  std::printf("\nPrefill (bf16, 16 query heads, 16k tokens a batch): ours, kernel %s\n\n",
              std::string(ops::name(o.kernel)).c_str());
  std::printf("| seq | batch | head_dim | heads_kv | causal | forward ms | forward TFLOP/s |%s kernel%s |\n",
              o.backward ? " backward ms | backward TFLOP/s |" : "", o.backward ? " (forward / backward)" : "");
  std::printf("|---|---|---|---|---|---|---|%s---|\n", o.backward ? "---|---|" : "");
  std::vector<std::int64_t> seqs = {512, 1024, 2048, 4096, 8192, 16384};
  if (o.quick) seqs = {1024, 8192};
  struct Grid {
    std::int64_t head_dim, heads_kv;
  };
  std::vector<Grid> grids = {{64, 16}, {128, 16}, {256, 16}, {128, 2}};
  if (o.prefill_shape) seqs = {(*o.prefill_shape)[0]}, grids = {{(*o.prefill_shape)[1], (*o.prefill_shape)[2]}};
  for (const Grid& g : grids)
    for (std::int64_t seq : seqs)
      for (bool causal : {false, true}) {
        const std::int64_t batch = 16384 / seq, hq = 16, d = g.head_dim;
        const std::size_t q_bytes = static_cast<std::size_t>(batch * hq * seq * d * 2),
                          kv_bytes = static_cast<std::size_t>(batch * g.heads_kv * seq * d * 2);
        runtime::Buffer q = random_buffer(dev, q_bytes, 1), k = random_buffer(dev, kv_bytes, 2),
                        v = random_buffer(dev, kv_bytes, 3), out(dev, q_bytes), d_o = random_buffer(dev, q_bytes, 4),
                        dq(dev, q_bytes), dk(dev, kv_bytes), dv(dev, kv_bytes);
        runtime::Buffer lse(dev, static_cast<std::size_t>(batch * hq * seq * 4));
        const runtime::TensorView vq(q, DType::bf16, {batch, hq, seq, d}), vk(k, DType::bf16, {batch, g.heads_kv, seq, d}),
            vv(v, DType::bf16, {batch, g.heads_kv, seq, d}), vo(out, DType::bf16, {batch, hq, seq, d}),
            vlse(lse, DType::f32, {batch, hq, seq}), vdo(d_o, DType::bf16, {batch, hq, seq, d}),
            vdq(dq, DType::bf16, {batch, hq, seq, d}), vdk(dk, DType::bf16, {batch, g.heads_kv, seq, d}),
            vdv(dv, DType::bf16, {batch, g.heads_kv, seq, d});
        const ops::AttentionOptions options{.causal = causal, .kernel = o.kernel};
        const ops::AttentionTensors t{.q = vq, .k = vk, .v = vv, .o = vo, .lse = &vlse};
        const double flops = 4.0 * batch * hq * seq * seq * d * (causal ? 0.5 : 1.0);
        try {
          ops::Attention op(t, options);
          op.compile();
          const double fs = median_seconds(dev, o.reps, [&] { op.execute(t); });
          std::string back, kernel = kernel_of(op.describe());
          if (o.backward) {
            const ops::AttentionBackwardTensors bt{.q = vq, .k = vk, .v = vv, .o = vo, .lse = vlse, .d_o = vdo,
                                                   .dq = vdq, .dk = vdk, .dv = vdv};
            ops::AttentionBackward bop(bt, {.causal = causal, .deterministic = o.deterministic, .kernel = o.kernel});
            bop.compile();
            const double bs = median_seconds(dev, o.reps, [&] { bop.execute(bt); });
            char text[64];
            std::snprintf(text, sizeof text, " %.3f | %.1f |", bs * 1e3, 2.5 * flops / bs / 1e12);
            back = text;
            kernel += " / " + kernel_of(bop.describe());
          }
          std::printf("| %lld | %lld | %lld | %lld | %s | %.3f | %.1f |%s %s |\n", static_cast<long long>(seq),
                      static_cast<long long>(batch), static_cast<long long>(d), static_cast<long long>(g.heads_kv),
                      causal ? "yes" : "no", fs * 1e3, flops / fs / 1e12, back.c_str(), kernel.c_str());
        } catch (const Error& e) {
          std::printf("| %lld | %lld | %lld | %lld | %s | refused: %s |\n", static_cast<long long>(seq),
                      static_cast<long long>(batch), static_cast<long long>(d), static_cast<long long>(g.heads_kv),
                      causal ? "yes" : "no", e.what());
        }
        std::fflush(stdout);
      }
}

void decode(const runtime::Device& dev, const Options& o) {
  std::printf("\nDecode (bf16, one query token, 32 query / 8 KV heads, head_dim 128, pages of 256%s): ours against "
              "the read floor (stream_read over the same K and V bytes, timed alike%s)\n\n",
              o.head_major ? ", each page's heads major" : "",
              o.back_to_back > 1 ? (", " + std::to_string(o.back_to_back) + " calls back to back a sample").c_str() : "");
  std::printf("| batch | kv_len | K+V MB | ours us | ours GB/s | floor us | floor GB/s | ours / floor | splits |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  runtime::Module read(dev, examples::stream_read_kernel(dev.target()));
  const std::uint32_t read_threads = 256, most_ctas = 8 * static_cast<std::uint32_t>(dev.properties().sm_count);
  runtime::Buffer folds(dev, std::size_t{most_ctas} * read_threads / 32 * 4);
  std::vector<std::int64_t> batches = {1, 8, 64}, lens = {1024, 8192, 32768, 131072};
  if (o.quick) batches = {1, 8};
  if (o.decode_shape) batches = {o.decode_shape->first}, lens = {o.decode_shape->second};
  const std::int64_t hq = 32, hkv = 8, d = 128, page = 256;
  for (std::int64_t batch : batches)
    for (std::int64_t len : lens) {
      const std::int64_t pages_per = len / page, pages = batch * pages_per;
      const std::size_t cache_bytes = static_cast<std::size_t>(pages * page * hkv * d * 2);
      if (2 * cache_bytes > dev.properties().global_bytes / 2) {
        std::printf("| %lld | %lld | %.0f | skipped: K and V take more than half the GPU's memory |\n",
                    static_cast<long long>(batch), static_cast<long long>(len), 2.0 * cache_bytes / 1e6);
        continue;
      }
      runtime::Buffer kc = random_buffer(dev, cache_bytes, 5), vc = random_buffer(dev, cache_bytes, 6),
                      q = random_buffer(dev, static_cast<std::size_t>(batch * hq * d * 2), 7),
                      out(dev, static_cast<std::size_t>(batch * hq * d * 2));
      std::vector<std::int32_t> table(static_cast<std::size_t>(pages)), lens_host(static_cast<std::size_t>(batch),
                                                                                 static_cast<std::int32_t>(len));
      for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::int32_t>(i);
      runtime::Buffer tb(dev, table.size() * 4), lb(dev, lens_host.size() * 4);
      const std::vector<std::int64_t> cache_strides =
          o.head_major ? std::vector<std::int64_t>{page * hkv * d, d, page * d, 1} : std::vector<std::int64_t>{};
      const runtime::TensorView vq(q, DType::bf16, {batch, hq, 1, d}), vo(out, DType::bf16, {batch, hq, 1, d}),
          vk(kc, DType::bf16, {pages, page, hkv, d}, cache_strides), vv(vc, DType::bf16, {pages, page, hkv, d}, cache_strides),
          vt(tb, DType::i32, {batch, pages_per}), vl(lb, DType::i32, {batch});
      vt.copy_from_host(table.data(), table.size() * 4);
      vl.copy_from_host(lens_host.data(), lens_host.size() * 4);
      const ops::AttentionDecodeTensors t{.q = vq, .k_cache = vk, .v_cache = vv, .block_table = vt, .kv_lens = vl, .o = vo};
      // The floor: K and V read once, the fastest of 1, 2, 4, 8 CTAs of 256 threads a SM.
      double floor = 1e30;
      for (std::uint32_t per_sm : {1u, 2u, 4u, 8u}) {
        const std::uint32_t ctas = per_sm * static_cast<std::uint32_t>(dev.properties().sm_count);
        const auto vectors = static_cast<std::uint32_t>(cache_bytes / 16);
        floor = std::min(floor, median_seconds(dev, o.reps, [&] {
                           read.launch(examples::kStreamReadKernel, {.grid = {ctas}, .block = {read_threads}},
                                       {kc, vectors, folds});
                           read.launch(examples::kStreamReadKernel, {.grid = {ctas}, .block = {read_threads}},
                                       {vc, vectors, folds});
                         }, o.back_to_back));
      }
      const double bytes = 2.0 * static_cast<double>(cache_bytes);
      for (int splits : o.decode_splits) {
        ops::AttentionDecode op(t, {.splits = splits});
        op.compile();
        const double ours = median_seconds(dev, o.reps, [&] { op.execute(t); }, o.back_to_back);
        std::printf("| %lld | %lld | %.0f | %.1f | %.0f | %.1f | %.0f | %.2f | %d%s |\n", static_cast<long long>(batch),
                    static_cast<long long>(len), bytes / 1e6, ours * 1e6, bytes / ours / 1e9, floor * 1e6,
                    bytes / floor / 1e9, floor / ours, op.splits(), splits ? " (set)" : "");
      }
      std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (runtime::Device::cuda_count() == 0) {
      std::fprintf(stderr, "bench_attention: needs a CUDA GPU (none found); nothing was measured\n");
      return 1;
    }
    const runtime::Device dev = runtime::Device::cuda(0);
    std::printf("bench_attention on %s (%d SMs)\n", dev.properties().name.c_str(), dev.properties().sm_count);
    if (o.prefill) prefill(dev, o);
    if (o.decode) decode(dev, o);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_attention: %s\n", e.what());
    return 1;
  }
}
