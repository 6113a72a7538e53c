// The attention reference itself: its forward against softmax written out
// for a case small enough to compute by hand, and its gradients against
// central finite differences of L = Σ O·dO (fp64, host only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "warpforge/ops/attention_reference.hpp"

namespace warpforge::ops {
namespace {

// A host-only f32 tensor (batch, heads, seq, d) of N(0,1) values in steps
// of 2^-12, so that x ± 2^-10 is exact in f32.
HostTensor host_tensor(std::vector<std::int64_t> shape, std::mt19937& rng) {
  HostTensor t;
  t.dtype = runtime::DType::f32;
  t.shape = shape;
  t.strides = runtime::TensorView::contiguous_strides(shape);
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  t.bytes.resize(static_cast<std::size_t>(n) * 4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = std::round(normal(rng) * 4096.0f) / 4096.0f;
    std::memcpy(t.bytes.data() + 4 * i, &x, 4);
  }
  return t;
}

TEST(AttentionReference, TwoKeysByHand) {
  std::mt19937 rng(1);
  HostTensor q = host_tensor({1, 1, 1, 64}, rng), k = host_tensor({1, 1, 2, 64}, rng),
             v = host_tensor({1, 1, 2, 64}, rng);
  const auto r = attention_reference(q, k, v, nullptr, {});
  double s[2] = {0, 0};
  for (int j = 0; j < 2; ++j)
    for (int d = 0; d < 64; ++d) s[j] += q.get({0, 0, 0, d}) * k.get({0, 0, j, d}) / 8.0;
  const double p0 = 1 / (1 + std::exp(s[1] - s[0]));
  for (int d = 0; d < 64; ++d)
    EXPECT_NEAR(r.o[d], p0 * v.get({0, 0, 0, d}) + (1 - p0) * v.get({0, 0, 1, d}), 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(std::exp(s[0]) + std::exp(s[1])), 1e-12);
  // A causal mask aligned bottom-right lets the one query see both keys;
  // aligned top-left, only the first.
  const auto tl = attention_reference(q, k, v, nullptr, {.causal = true, .alignment = MaskAlignment::top_left});
  for (int d = 0; d < 64; ++d) EXPECT_NEAR(tl.o[d], v.get({0, 0, 0, d}), 1e-12);
  EXPECT_NEAR(tl.lse[0], s[0], 1e-12);
}

// dL/dx for L = Σ O·dO by central differences, against the reference's
// gradients, for a GQA problem with a sliding window.
TEST(AttentionReference, GradientsMatchFiniteDifferences) {
  std::mt19937 rng(2);
  HostTensor q = host_tensor({1, 2, 5, 64}, rng), k = host_tensor({1, 1, 7, 64}, rng),
             v = host_tensor({1, 1, 7, 64}, rng), d_o = host_tensor({1, 2, 5, 64}, rng);
  const AttentionOptions options{.scale = 0.3, .causal = true, .window_left = 3};
  const auto r = attention_reference(q, k, v, &d_o, options);
  auto loss = [&] {
    const auto f = attention_reference(q, k, v, nullptr, options);
    double l = 0;
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 5; ++i)
        for (int d = 0; d < 64; ++d) l += f.o[static_cast<std::size_t>((i * 2 + h) * 64 + d)] * d_o.get({0, h, i, d});
    return l;
  };
  // Perturbs x at `index` by ±h.
  auto derivative = [&](HostTensor& x, std::vector<std::int64_t> index) {
    const double h = 0x1p-10, x0 = x.get(index);
    x.set(index, x0 + h);
    const double up = loss();
    x.set(index, x0 - h);
    const double down = loss();
    x.set(index, x0);
    return (up - down) / (2 * h);
  };
  int checked = 0;
  for (int i = 0; i < 5; ++i)
    for (int d : {0, 17, 63}) {
      const double want = derivative(q, {0, 1, i, d});
      EXPECT_NEAR(r.dq[static_cast<std::size_t>((i * 2 + 1) * 64 + d)], want, 1e-4 * (1 + std::abs(want)));
      ++checked;
    }
  for (int j = 0; j < 7; ++j)
    for (int d : {3, 40}) {
      const double dk = derivative(k, {0, 0, j, d}), dv = derivative(v, {0, 0, j, d});
      EXPECT_NEAR(r.dk[static_cast<std::size_t>(j * 64 + d)], dk, 1e-4 * (1 + std::abs(dk)));
      EXPECT_NEAR(r.dv[static_cast<std::size_t>(j * 64 + d)], dv, 1e-4 * (1 + std::abs(dv)));
      checked += 2;
    }
  EXPECT_EQ(checked, 43);
  // Key 6 is right of every row's diagonal but the last's: visible to row 4 only.
  EXPECT_NE(r.dv[6 * 64], 0.0);
}

}  // namespace
}  // namespace warpforge::ops
