// Attention test problems (header-only: tests/ops runs them on the simulator,
// tests/gpu on the device): Q, K, V (and dO) in device memory filled with
// fresh random values, laid out as a case says (SDPA's (batch, heads, seq,
// d), FlashAttention's (batch, seq, heads, d), varlen's packed rows, padded
// rows), every byte outside the logical elements poisoned with NaN, and the
// outputs poisoned before the kernel runs; the result checked element by
// element against the fp64 reference within its derived bound
// (attention_reference.hpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "warpforge/ops/attention.hpp"
#include "warpforge/ops/attention_reference.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops::testing {

struct AttentionCase {
  std::string name;
  std::int64_t batch = 1, heads_q = 2, heads_kv = 2, seq_q = 64, seq_k = 64, head_dim = 64;
  runtime::DType dtype = runtime::DType::bf16;
  bool seq_major = false;  // memory order (batch, seq, heads, d) instead of (batch, heads, seq, d)
  std::int64_t pad = 0;    // elements (a multiple of 8) after each row of head_dim
  // Varlen: the sequences' lengths (seq_q/seq_k are then ignored).
  std::vector<std::int32_t> lens_q, lens_k;
  AttentionOptions options;
  // Inputs: N(0,1) values, Q multiplied by `gain` (large logits); with
  // `ramp`, Q's first element 4·sqrt(d) and K's first j (even KV heads) or
  // -j (odd ones), so each row's weight sits on its last (first) visible key
  // and a mask off by one key moves most of it.
  double gain = 1.0;
  bool ramp = false;

  bool varlen() const { return !lens_q.empty(); }
};

// A device tensor with its host copy; `host` holds what was uploaded.
struct AttentionTensor {
  runtime::Buffer buffer;
  runtime::TensorView view;
  HostTensor host;
};

// Q/K/V/O-like: dense (batch, heads, seq, d) or varlen (rows, heads, d),
// laid out per the case, NaN everywhere first, then (unless `poisoned`)
// fresh values from `fill(b, h, i, d)` at every logical element.
template <class Fill>
AttentionTensor make_attention_tensor(const runtime::Device& device, const AttentionCase& c,
                                      std::int64_t heads, std::int64_t seq, bool poisoned, Fill fill) {
  const std::int64_t d = c.head_dim, row = d + c.pad;
  std::vector<std::int64_t> shape, strides;
  std::int64_t elements;
  if (c.varlen()) {
    shape = {seq, heads, d};
    strides = c.seq_major ? std::vector<std::int64_t>{heads * row, row, 1}
                          : std::vector<std::int64_t>{row, seq * row, 1};
    elements = seq * heads * row;
  } else {
    shape = {c.batch, heads, seq, d};
    strides = c.seq_major ? std::vector<std::int64_t>{seq * heads * row, row, heads * row, 1}
                          : std::vector<std::int64_t>{heads * seq * row, seq * row, row, 1};
    elements = c.batch * heads * seq * row;
  }
  const std::size_t bytes = static_cast<std::size_t>(elements) * runtime::bits(c.dtype) / 8;
  runtime::Buffer buffer(device, std::max<std::size_t>(bytes, 16));
  buffer.fill(0xff);  // NaN in f16 and bf16
  runtime::TensorView view(buffer, c.dtype, shape, strides);
  HostTensor host = HostTensor::download(view);
  if (!poisoned) {
    if (c.varlen()) {
      for (std::int64_t r = 0; r < seq; ++r)
        for (std::int64_t h = 0; h < heads; ++h)
          for (std::int64_t x = 0; x < d; ++x) host.set({r, h, x}, fill(0, h, r, x));
    } else {
      for (std::int64_t b = 0; b < c.batch; ++b)
        for (std::int64_t h = 0; h < heads; ++h)
          for (std::int64_t i = 0; i < seq; ++i)
            for (std::int64_t x = 0; x < d; ++x) host.set({b, h, i, x}, fill(b, h, i, x));
    }
    host.upload(view);
  }
  return {std::move(buffer), view, std::move(host)};
}

inline AttentionTensor make_lse(const runtime::Device& device, const AttentionCase& c, std::int64_t rows) {
  std::vector<std::int64_t> shape =
      c.varlen() ? std::vector<std::int64_t>{c.heads_q, rows} : std::vector<std::int64_t>{c.batch, c.heads_q, rows};
  runtime::Buffer buffer(device, static_cast<std::size_t>(c.heads_q * c.batch * rows * 4));
  buffer.fill(0xff);  // NaN
  runtime::TensorView view(buffer, runtime::DType::f32, shape);
  return {std::move(buffer), view, HostTensor::download(view)};
}

inline AttentionTensor make_cu_seqlens(const runtime::Device& device, const std::vector<std::int32_t>& lens) {
  std::vector<std::int32_t> cu(lens.size() + 1, 0);
  std::partial_sum(lens.begin(), lens.end(), cu.begin() + 1);
  runtime::Buffer buffer(device, cu.size() * 4);
  runtime::TensorView view(buffer, runtime::DType::i32, {static_cast<std::int64_t>(cu.size())});
  view.copy_from_host(cu.data(), cu.size() * 4);
  return {std::move(buffer), view, HostTensor{}};
}

inline std::vector<std::int32_t> cumulative(const std::vector<std::int32_t>& lens) {
  std::vector<std::int32_t> cu(lens.size() + 1, 0);
  std::partial_sum(lens.begin(), lens.end(), cu.begin() + 1);
  return cu;
}

// The inputs of one case, made and uploaded.
struct AttentionInputs {
  AttentionTensor q, k, v, d_o;
  std::optional<AttentionTensor> cu_q, cu_k;
  std::vector<std::int32_t> cu_q_host, cu_k_host;
  std::int64_t rows_q, rows_k;
};

inline AttentionInputs make_attention_inputs(const runtime::Device& device, const AttentionCase& c,
                                             std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::int64_t rows_q = c.varlen() ? std::accumulate(c.lens_q.begin(), c.lens_q.end(), std::int64_t{0}) : c.seq_q;
  const std::int64_t rows_k = c.varlen() ? std::accumulate(c.lens_k.begin(), c.lens_k.end(), std::int64_t{0}) : c.seq_k;
  auto random = [&](double gain) { return [&normal, &rng, gain](auto...) { return gain * normal(rng); }; };
  // The key's position within its sequence (varlen rows count on across sequences).
  auto key_position = [&](std::int64_t row) {
    if (!c.varlen()) return row;
    std::int64_t first = 0;
    for (std::int32_t len : c.lens_k) {
      if (row < first + len) return row - first;
      first += len;
    }
    return row - first;
  };
  AttentionInputs in{
      make_attention_tensor(device, c, c.heads_q, rows_q, false,
                            [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t x) {
                              if (c.ramp && x == 0) return 4.0 * std::sqrt(double(c.head_dim));
                              return c.gain * normal(rng);
                            }),
      make_attention_tensor(device, c, c.heads_kv, rows_k, false,
                            [&](std::int64_t, std::int64_t h, std::int64_t i, std::int64_t x) {
                              if (c.ramp && x == 0) {
                                const double j = double(key_position(i));
                                return h % 2 ? -j : j;
                              }
                              return normal(rng);
                            }),
      make_attention_tensor(device, c, c.heads_kv, rows_k, false, random(1.0)),
      make_attention_tensor(device, c, c.heads_q, rows_q, false, random(1.0)),
      std::nullopt, std::nullopt, {}, {}, rows_q, rows_k};
  if (c.varlen()) {
    in.cu_q = make_cu_seqlens(device, c.lens_q);
    in.cu_k = make_cu_seqlens(device, c.lens_k);
    in.cu_q_host = cumulative(c.lens_q);
    in.cu_k_host = cumulative(c.lens_k);
  }
  return in;
}

inline AttentionOptions case_options(const AttentionCase& c) {
  AttentionOptions o = c.options;
  if (c.varlen()) {
    o.max_seqlen_q = *std::max_element(c.lens_q.begin(), c.lens_q.end());
    o.max_seqlen_k = *std::max_element(c.lens_k.begin(), c.lens_k.end());
  }
  return o;
}

// Runs the forward of `c` on `device` and checks O and lse against the
// reference.
inline void check_attention_forward(const runtime::Device& device, const AttentionCase& c, std::mt19937& rng,
                                    AttentionKernel kernel = AttentionKernel::automatic) {
  AttentionInputs in = make_attention_inputs(device, c, rng);
  AttentionTensor o = make_attention_tensor(device, c, c.heads_q, in.rows_q, true, [](auto...) { return 0.0; });
  AttentionTensor lse = make_lse(device, c, in.rows_q);
  AttentionOptions options = case_options(c);
  options.kernel = kernel;
  AttentionTensors t{.q = in.q.view, .k = in.k.view, .v = in.v.view, .o = o.view, .lse = &lse.view,
                     .cu_seqlens_q = in.cu_q ? &in.cu_q->view : nullptr,
                     .cu_seqlens_k = in.cu_k ? &in.cu_k->view : nullptr};
  Attention op(t, options);
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  device.synchronize();
  const AttentionReference want =
      attention_reference(in.q.host, in.k.host, in.v.host, nullptr, options,
                          c.varlen() ? &in.cu_q_host : nullptr, c.varlen() ? &in.cu_k_host : nullptr);
  const AttentionCheck co = check_within_bound(attention_rows(HostTensor::download(o.view)), want.o, want.o_bound);
  const AttentionCheck cl = check_within_bound(attention_rows(HostTensor::download(lse.view)), want.lse, want.lse_bound);
  EXPECT_EQ(co.failures, 0) << c.name << ": O " << co.describe() << "\n" << op.describe();
  EXPECT_EQ(cl.failures, 0) << c.name << ": lse " << cl.describe() << "\n" << op.describe();
}

}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {

// The forward (this op's) then the backward of `c`, dQ, dK and dV checked
// against the reference within its bound; returns the gradients' bytes (for
// the determinism tests).
inline std::vector<std::uint8_t> check_attention_backward(const runtime::Device& device, const AttentionCase& c,
                                                          std::mt19937& rng, bool deterministic = false,
                                                          AttentionInputs* given = nullptr,
                                                          AttentionKernel kernel = AttentionKernel::automatic) {
  std::optional<AttentionInputs> made;
  if (!given) made.emplace(make_attention_inputs(device, c, rng));
  AttentionInputs& in = given ? *given : *made;
  auto poisoned = [&](std::int64_t heads, std::int64_t rows) {
    return make_attention_tensor(device, c, heads, rows, true, [](auto...) { return 0.0; });
  };
  AttentionTensor o = poisoned(c.heads_q, in.rows_q), dq = poisoned(c.heads_q, in.rows_q),
                  dk = poisoned(c.heads_kv, in.rows_k), dv = poisoned(c.heads_kv, in.rows_k);
  AttentionTensor lse = make_lse(device, c, in.rows_q);
  AttentionOptions options = case_options(c);
  options.deterministic = deterministic;
  const runtime::TensorView* cu_q = in.cu_q ? &in.cu_q->view : nullptr;
  const runtime::TensorView* cu_k = in.cu_k ? &in.cu_k->view : nullptr;
  attention({.q = in.q.view, .k = in.k.view, .v = in.v.view, .o = o.view, .lse = &lse.view, .cu_seqlens_q = cu_q,
             .cu_seqlens_k = cu_k},
            options);
  const AttentionBackwardTensors t{.q = in.q.view, .k = in.k.view, .v = in.v.view, .o = o.view, .lse = lse.view,
                                   .d_o = in.d_o.view, .dq = dq.view, .dk = dk.view, .dv = dv.view,
                                   .cu_seqlens_q = cu_q, .cu_seqlens_k = cu_k};
  options.kernel = kernel;
  AttentionBackward op(t, options);
  EXPECT_TRUE(op.check_support().empty()) << op.describe();
  if (!op.check_support().empty()) return {};
  op.execute(t);
  device.synchronize();
  // The gradients of the computation the kernel runs (D from the forward's
  // O, which the forward tests hold to its bound).
  const std::vector<double> o_read = attention_rows(HostTensor::download(o.view));
  const AttentionReference want =
      attention_reference(in.q.host, in.k.host, in.v.host, &in.d_o.host, options,
                          c.varlen() ? &in.cu_q_host : nullptr, c.varlen() ? &in.cu_k_host : nullptr, &o_read);
  std::vector<std::uint8_t> bits;
  for (auto [name, got, value, bound] :
       {std::tuple{"dQ", &dq, &want.dq, &want.dq_bound}, {"dK", &dk, &want.dk, &want.dk_bound},
        {"dV", &dv, &want.dv, &want.dv_bound}}) {
    const HostTensor host = HostTensor::download(got->view);
    const AttentionCheck check = check_within_bound(attention_rows(host), *value, *bound);
    EXPECT_EQ(check.failures, 0) << c.name << ": " << name << " " << check.describe() << "\n" << op.describe();
    bits.insert(bits.end(), host.bytes.begin(), host.bytes.end());
  }
  return bits;
}

// The correctness cases of the forward (the issue's: head_dim 64/128/256,
// lengths that are not multiples of the blocks from 1 to 300, causal and
// sliding windows with rows that see no key, both alignments, GQA and MQA,
// both memory orders and padded rows, varlen batches with KV lengths of 1,
// large logits, f16) and of the backward; small enough for the simulator,
// run as they are on a GPU too.
inline std::vector<AttentionCase> forward_cases() {
  AttentionOptions causal{.causal = true};
  std::vector<AttentionCase> cases = {
      {.name = "d64 square", .seq_q = 64, .seq_k = 64},
      {.name = "d128 ragged causal", .seq_q = 100, .seq_k = 100, .head_dim = 128, .options = causal},
      // Three key blocks of 80 at head_dim 256: K's and V's two-slot rings wrap.
      {.name = "d256 batch 2", .batch = 2, .heads_q = 1, .heads_kv = 1, .seq_q = 40, .seq_k = 200, .head_dim = 256},
      {.name = "f16 d64", .seq_q = 65, .seq_k = 33, .dtype = runtime::DType::f16},
      {.name = "seq-major padded d128", .batch = 2, .seq_q = 30, .seq_k = 90, .head_dim = 128, .seq_major = true, .pad = 8},
      {.name = "MQA causal", .heads_q = 4, .heads_kv = 1, .seq_q = 70, .seq_k = 70, .options = causal},
      {.name = "GQA 2:1 window left", .heads_q = 4, .heads_kv = 2, .seq_q = 90, .seq_k = 90,
       .options = {.causal = true, .window_left = 16}},
      {.name = "window both sides", .seq_q = 130, .seq_k = 130, .options = {.window_left = 8, .window_right = 8}},
      {.name = "causal short queries (bottom-right)", .seq_q = 37, .seq_k = 150, .options = causal},
      {.name = "causal short queries (top-left)", .seq_q = 37, .seq_k = 150,
       .options = {.causal = true, .alignment = MaskAlignment::top_left}},
      {.name = "causal long queries: rows that see no key", .seq_q = 150, .seq_k = 37, .options = causal},
      {.name = "window past the keys: rows that see no key", .seq_q = 100, .seq_k = 20,
       .options = {.causal = true, .window_left = 4}},
      {.name = "one key", .seq_q = 33, .seq_k = 1},
      {.name = "one query one key", .heads_q = 1, .heads_kv = 1, .seq_q = 1, .seq_k = 1, .head_dim = 128},
      {.name = "seq 300", .heads_q = 1, .heads_kv = 1, .seq_q = 300, .seq_k = 300, .options = causal},
      {.name = "large logits", .seq_q = 80, .seq_k = 120, .head_dim = 128, .gain = 30},
      {.name = "ramp causal (weight on the diagonal)", .seq_q = 100, .seq_k = 100, .options = causal, .ramp = true},
      {.name = "ramp window (weight on both edges)", .seq_q = 100, .seq_k = 100,
       .options = {.window_left = 5, .window_right = 3}, .ramp = true},
      {.name = "varlen causal", .heads_q = 2, .heads_kv = 1, .options = causal},
      {.name = "varlen window seq-major", .heads_q = 2, .heads_kv = 2, .head_dim = 128, .seq_major = true,
       .options = {.window_left = 20, .window_right = 0}},
      {.name = "scale", .seq_q = 50, .seq_k = 50, .options = {.scale = 0.3}},
  };
  cases[18].lens_q = {5, 0, 130, 1}, cases[18].lens_k = {7, 3, 130, 1};
  cases[19].lens_q = {1, 64, 65}, cases[19].lens_k = {1, 80, 60};
  return cases;
}

inline std::vector<AttentionCase> backward_cases() {
  AttentionOptions causal{.causal = true};
  std::vector<AttentionCase> cases = {
      {.name = "d64 square", .seq_q = 64, .seq_k = 64},
      {.name = "d128 ragged causal", .seq_q = 70, .seq_k = 70, .head_dim = 128, .options = causal},
      {.name = "d256", .heads_q = 1, .heads_kv = 1, .seq_q = 40, .seq_k = 50, .head_dim = 256},
      {.name = "f16 seq-major padded", .seq_q = 33, .seq_k = 65, .dtype = runtime::DType::f16, .seq_major = true, .pad = 8},
      {.name = "GQA 2:1 window", .heads_q = 4, .heads_kv = 2, .seq_q = 90, .seq_k = 90,
       .options = {.causal = true, .window_left = 16}},
      {.name = "MQA both sides", .heads_q = 3, .heads_kv = 1, .seq_q = 80, .seq_k = 80,
       .options = {.window_left = 8, .window_right = 8}},
      {.name = "causal long queries: rows that see no key", .seq_q = 100, .seq_k = 30, .options = causal},
      {.name = "causal top-left", .seq_q = 30, .seq_k = 100, .options = {.causal = true, .alignment = MaskAlignment::top_left}},
      {.name = "one key", .seq_q = 17, .seq_k = 1},
      {.name = "large logits", .seq_q = 50, .seq_k = 60, .gain = 20},
      {.name = "varlen causal GQA", .heads_q = 2, .heads_kv = 1, .options = causal},
      // Two 64-key blocks, the second ragged; GQA sums two heads' dK and dV.
      {.name = "d256 GQA causal", .heads_q = 2, .heads_kv = 1, .seq_q = 90, .seq_k = 100, .head_dim = 256,
       .options = causal},
      {.name = "d256 varlen window", .heads_q = 1, .heads_kv = 1, .head_dim = 256,
       .options = {.window_left = 20, .window_right = 0}},
  };
  cases[10].lens_q = {5, 0, 70, 1}, cases[10].lens_k = {7, 3, 70, 1};
  cases[12].lens_q = {1, 80, 3}, cases[12].lens_k = {2, 70, 1};
  return cases;
}

}  // namespace warpforge::ops::testing
