// Paged decode test problems (header-only: tests/ops on the simulator,
// tests/gpu on the device): a KV cache of pages assigned to the sequences in
// a shuffled order, every slot past a sequence's keys and every page no
// sequence uses poisoned with NaN (a kernel that reads one shows it), fresh
// random Q, outputs poisoned; checked against the reference of the same
// problem written as varlen attention (each sequence's keys gathered from
// its pages), within its bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ops/attention_cases.hpp"
#include "warpforge/ops/attention_decode.hpp"

namespace warpforge::ops::testing {

struct DecodeCase {
  std::string name;
  std::int64_t heads_q = 4, heads_kv = 1, q_tokens = 1, head_dim = 128, page_size = 16;
  std::vector<std::int32_t> kv_lens = {100};  // one a sequence
  std::int64_t pages_per_sequence = 0;         // 0: just enough for the longest
  runtime::DType dtype = runtime::DType::bf16;
  AttentionDecodeOptions options;
  double gain = 1.0;  // multiplies Q (large logits)
};

inline void check_decode(const runtime::Device& device, const DecodeCase& c, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::int64_t batch = static_cast<std::int64_t>(c.kv_lens.size());
  const std::int32_t longest = *std::max_element(c.kv_lens.begin(), c.kv_lens.end());
  const std::int64_t per_seq = c.pages_per_sequence ? c.pages_per_sequence : (longest + c.page_size - 1) / c.page_size;
  const std::int64_t pages = batch * per_seq + 3;  // three pages no sequence uses
  const std::int64_t D = c.head_dim;

  // Pages in a shuffled order; the block table's unused entries point at page 0.
  std::vector<std::int32_t> order(static_cast<std::size_t>(pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int32_t> table(static_cast<std::size_t>(batch * per_seq));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = order[i];

  auto cache = [&](std::vector<double>& keep) {
    runtime::Buffer buffer(device, static_cast<std::size_t>(pages * c.page_size * c.heads_kv * D * 2));
    buffer.fill(0xff);  // NaN
    runtime::TensorView view(buffer, c.dtype, {pages, c.page_size, c.heads_kv, D});
    HostTensor host = HostTensor::download(view);
    keep.assign(static_cast<std::size_t>(batch * longest * c.heads_kv * D), 0.0);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < c.kv_lens[b]; ++j)
        for (std::int64_t h = 0; h < c.heads_kv; ++h)
          for (std::int64_t d = 0; d < D; ++d) {
            const std::int64_t page = table[static_cast<std::size_t>(b * per_seq + j / c.page_size)];
            host.set({page, j % c.page_size, h, d}, normal(rng));
            keep[static_cast<std::size_t>(((b * longest + j) * c.heads_kv + h) * D + d)] =
                host.get({page, j % c.page_size, h, d});
          }
    host.upload(view);
    return std::pair{std::move(buffer), view};
  };
  std::vector<double> k_values, v_values;
  auto [k_buffer, k_cache] = cache(k_values);
  auto [v_buffer, v_cache] = cache(v_values);

  const AttentionCase shape{.batch = batch, .heads_q = c.heads_q, .heads_kv = c.heads_kv, .seq_q = c.q_tokens,
                            .seq_k = 1, .head_dim = D, .dtype = c.dtype};
  AttentionTensor q = make_attention_tensor(device, shape, c.heads_q, c.q_tokens, false,
                                            [&](auto...) { return c.gain * normal(rng); });
  AttentionTensor o = make_attention_tensor(device, shape, c.heads_q, c.q_tokens, true, [](auto...) { return 0.0; });
  AttentionTensor lse = make_lse(device, shape, c.q_tokens);
  runtime::Buffer table_buffer(device, table.size() * 4), lens_buffer(device, c.kv_lens.size() * 4);
  runtime::TensorView table_view(table_buffer, runtime::DType::i32, {batch, per_seq});
  runtime::TensorView lens_view(lens_buffer, runtime::DType::i32, {batch});
  table_view.copy_from_host(table.data(), table.size() * 4);
  lens_view.copy_from_host(c.kv_lens.data(), c.kv_lens.size() * 4);

  const AttentionDecodeTensors t{.q = q.view, .k_cache = k_cache, .v_cache = v_cache, .block_table = table_view,
                                 .kv_lens = lens_view, .o = o.view, .lse = &lse.view};
  AttentionDecode op(t, c.options);
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  // Twice, O poisoned between: the second run finds the splits' counters
  // at zero again (else no CTA would combine, and O stays poisoned).
  op.execute(t);
  o.buffer.fill(0xff);  // NaN
  lse.buffer.fill(0xff);
  op.execute(t);
  device.synchronize();

  // The reference: varlen attention, Q rows b·q_tokens + t, each sequence's
  // keys gathered (host copies in the dtype: the values are exact in it).
  auto host_copy = [&](std::vector<std::int64_t> shape) {
    HostTensor h;
    h.dtype = c.dtype;
    h.shape = shape;
    h.strides = runtime::TensorView::contiguous_strides(shape);
    std::int64_t n = 1;
    for (auto x : shape) n *= x;
    h.bytes.assign(static_cast<std::size_t>(n) * 2, 0);
    return h;
  };
  const std::int64_t total_k = std::accumulate(c.kv_lens.begin(), c.kv_lens.end(), std::int64_t{0});
  HostTensor rq = host_copy({batch * c.q_tokens, c.heads_q, D}), rk = host_copy({total_k, c.heads_kv, D}),
             rv = host_copy({total_k, c.heads_kv, D});
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t h = 0; h < c.heads_q; ++h)
      for (std::int64_t i = 0; i < c.q_tokens; ++i)
        for (std::int64_t d = 0; d < D; ++d) rq.set({b * c.q_tokens + i, h, d}, q.host.get({b, h, i, d}));
  std::int64_t row = 0;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t j = 0; j < c.kv_lens[b]; ++j, ++row)
      for (std::int64_t h = 0; h < c.heads_kv; ++h)
        for (std::int64_t d = 0; d < D; ++d) {
          const auto at = static_cast<std::size_t>(((b * longest + j) * c.heads_kv + h) * D + d);
          rk.set({row, h, d}, k_values[at]);
          rv.set({row, h, d}, v_values[at]);
        }
  std::vector<std::int32_t> lens_q(static_cast<std::size_t>(batch), static_cast<std::int32_t>(c.q_tokens));
  const std::vector<std::int32_t> cu_q = cumulative(lens_q), cu_k = cumulative(c.kv_lens);
  AttentionOptions options{.scale = c.options.scale, .causal = c.options.causal, .window_left = c.options.window_left};
  AttentionReference want = attention_reference(rq, rk, rv, nullptr, options, &cu_q, &cu_k);
  const AttentionCheck co = check_within_bound(attention_rows(HostTensor::download(o.view)), want.o, want.o_bound);
  const AttentionCheck cl = check_within_bound(attention_rows(HostTensor::download(lse.view)), want.lse, want.lse_bound);
  EXPECT_EQ(co.failures, 0) << c.name << ": O " << co.describe() << "\n" << op.describe();
  EXPECT_EQ(cl.failures, 0) << c.name << ": lse " << cl.describe() << "\n" << op.describe();
}

// The decode cases: grouped-query packing from 1 to 64 rows a KV head, 1 to
// 8 query tokens, page sizes 16 to 256 (and one that is no power of two), KV
// lengths of 1 and of the query tokens alone, one split or several (chosen
// or given, more than the blocks), causal, not causal, sliding window, f16,
// large logits.
inline std::vector<DecodeCase> decode_cases() {
  return {
      {.name = "GQA 4:1 one token", .kv_lens = {300}},
      {.name = "batch 3 GQA 4:1 four tokens", .heads_q = 8, .heads_kv = 2, .q_tokens = 4, .head_dim = 64,
       .page_size = 32, .kv_lens = {4, 77, 200}},
      {.name = "64 rows a KV head", .heads_q = 8, .heads_kv = 1, .q_tokens = 8, .head_dim = 64, .page_size = 64,
       .kv_lens = {150, 9}},
      {.name = "head_dim 256 pages of 256", .heads_q = 2, .heads_kv = 1, .q_tokens = 2, .head_dim = 256,
       .page_size = 256, .kv_lens = {520}},
      {.name = "one split", .kv_lens = {190, 60}, .options = {.splits = 1}},
      {.name = "sliding window", .heads_q = 2, .heads_kv = 2, .q_tokens = 3, .head_dim = 64, .kv_lens = {260, 30},
       .options = {.window_left = 20, .splits = 3}},
      {.name = "not causal", .heads_q = 4, .heads_kv = 2, .q_tokens = 2, .head_dim = 64, .kv_lens = {70, 131},
       .options = {.causal = false, .splits = 2}},
      {.name = "f16 pages of 24 large logits", .heads_q = 4, .heads_kv = 4, .head_dim = 64, .page_size = 24,
       .kv_lens = {100, 47}, .dtype = runtime::DType::f16, .options = {.splits = 2}, .gain = 20},
      {.name = "KV length 1 and the tokens alone", .heads_q = 2, .heads_kv = 1, .q_tokens = 1, .head_dim = 64,
       .kv_lens = {1, 1}},
      {.name = "keys are the query tokens", .heads_q = 2, .heads_kv = 1, .q_tokens = 5, .head_dim = 64,
       .kv_lens = {5, 6}, .options = {.splits = 2}},
      {.name = "more splits than blocks", .heads_q = 2, .heads_kv = 1, .head_dim = 64, .kv_lens = {100},
       .pages_per_sequence = 40, .options = {.splits = 9}},
      {.name = "15 rows a KV head", .heads_q = 3, .heads_kv = 1, .q_tokens = 5, .head_dim = 64, .kv_lens = {90}},
      // The combine's loops past one pass: 150 splits over 128 threads, and
      // each warp's share (every fourth split) past 8; many empty splits.
      {.name = "150 splits", .heads_q = 2, .heads_kv = 1, .head_dim = 64, .page_size = 64, .kv_lens = {9700, 3000},
       .options = {.splits = 150}},
  };
}

}  // namespace warpforge::ops::testing
