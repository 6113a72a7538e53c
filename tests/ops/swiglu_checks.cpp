#include "swiglu_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "warpforge/ops/swiglu.hpp"

namespace warpforge::ops::testing {

using runtime::DType;
using runtime::TensorView;

namespace {

constexpr double kApprox = 1.0 / 65536;  // 2^-16: ex2.approx and rcp.approx, relative

double sigmoid(double g) {
  return 1.0 / (1.0 + std::exp(-g));
}

// silu(g) as PyTorch computes it: g · σ(g), so -inf · 0 is NaN.
double silu(double g) {
  return g * sigmoid(g);
}

// A (rows, 2n) tensor: the gate and up values side by side (halves, or interleaved).
HostRows joined(const HostRows& gate, const HostRows& up, bool interleaved) {
  HostRows x{gate.dtype, gate.rows, 2 * gate.n, {}};
  for (std::int64_t r = 0; r < gate.rows; ++r)
    for (std::int64_t c = 0; c < 2 * gate.n; ++c) {
      const bool is_gate = interleaved ? c % 2 == 0 : c < gate.n;
      const std::int64_t col = interleaved ? c / 2 : c % gate.n;
      x.values.push_back(is_gate ? gate.at(r, col) : up.at(r, col));
    }
  return x;
}

// Values past the dtype's range round to ±inf (what the kernel's
// conversion writes, and PyTorch's).
void beyond_range(DType dtype, std::vector<double>& want) {
  for (double& w : want)
    if (std::isinf(rounded(dtype, static_cast<float>(w)))) w = rounded(dtype, static_cast<float>(w));
}

TensorView half(const TensorView& x, std::int64_t n, bool second) {
  return TensorView(x.device(), x.address() + (second ? static_cast<std::uint64_t>(n * runtime::bits(x.dtype()) / 8) : 0),
                    x.dtype(), {x.shape()[0], n}, {x.strides()[0], 1});
}

}  // namespace

void check_swiglu(const runtime::Device& device, const SwigluCase& c, std::uint32_t seed, const char* kernel,
                  const std::function<void(HostRows&)>& shape_gate) {
  SCOPED_TRACE("swiglu " + std::to_string(c.rows) + "x" + std::to_string(c.n) + " " + std::string(runtime::name(c.in)) +
               (c.interleaved ? " interleaved" : " halves"));
  std::mt19937 rng(seed);
  HostRows gate = random_rows(rng, c.in, c.rows, c.n, 3.0f), up = random_rows(rng, c.in, c.rows, c.n);
  if (shape_gate) shape_gate(gate);
  auto x = upload(device, joined(gate, up, c.interleaved));
  auto out = poisoned(device, c.out, c.rows, c.n);
  SwigluTensors t{.out = out.view()};
  if (c.interleaved)
    t.x = x.view();
  else
    t.gate = half(x.view(), c.n, false), t.up = half(x.view(), c.n, true);
  Swiglu op(t);
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  if (kernel) EXPECT_EQ(op.kernel_name(), kernel) << op.describe();
  std::vector<double> want;
  for (std::int64_t r = 0; r < c.rows; ++r)
    for (std::int64_t col = 0; col < c.n; ++col) want.push_back(silu(gate.at(r, col)) * up.at(r, col));
  const double u = unit_roundoff(c.out);
  beyond_range(c.out, want);
  auto m = compare(download(out.view()), want, [&](std::int64_t r, std::int64_t col) {
    return (u + kApprox) * std::fabs(want[static_cast<std::size_t>(r * c.n + col)]) + 1e-37;
  });
  EXPECT_EQ(m.count, 0) << op.describe() << "\n out:" << m.first;

  HostRows dout = random_rows(rng, c.out, c.rows, c.n);
  auto udout = upload(device, dout);
  auto dx = poisoned(device, c.in, c.rows, 2 * c.n);
  SwigluBackwardTensors b{.dout = udout.view()};
  if (c.interleaved) {
    b.x = x.view(), b.dx = dx.view();
  } else {
    b.gate = t.gate, b.up = t.up;
    b.dgate = half(dx.view(), c.n, false), b.dup = half(dx.view(), c.n, true);
  }
  SwigluBackward back(b);
  ASSERT_TRUE(back.check_support().empty()) << back.describe();
  back.execute(b);
  // dgate's factor 1 + g(1 - σ) cancels near g = -1.28: its bound is
  // relative to the terms, dout · up · σ · (1 + |g|(1 - σ)).
  HostRows dg{c.in, c.rows, c.n, {}}, du{c.in, c.rows, c.n, {}}, dg_scale{c.in, c.rows, c.n, {}},
      du_scale{c.in, c.rows, c.n, {}};
  for (std::int64_t r = 0; r < c.rows; ++r)
    for (std::int64_t col = 0; col < c.n; ++col) {
      const double g = gate.at(r, col), s = sigmoid(g), d = dout.at(r, col) * up.at(r, col);
      dg.values.push_back(static_cast<float>(d * s * (1 + g * (1 - s))));
      dg_scale.values.push_back(static_cast<float>(std::fabs(d * s) * (1 + std::fabs(g * (1 - s)))));
      du.values.push_back(static_cast<float>(dout.at(r, col) * silu(g)));
      du_scale.values.push_back(std::fabs(du.values.back()));
    }
  const HostRows want_dx = joined(dg, du, c.interleaved), scale = joined(dg_scale, du_scale, c.interleaved);
  std::vector<double> dgate_up(want_dx.values.begin(), want_dx.values.end());
  beyond_range(c.in, dgate_up);
  const double ui = unit_roundoff(c.in);
  auto mb = compare(download(dx.view()), dgate_up, [&](std::int64_t r, std::int64_t col) {
    const auto i = static_cast<std::size_t>(r * 2 * c.n + col);
    return ui * std::fabs(dgate_up[i]) + 4 * kApprox * scale.values[i] + 1e-30;
  });
  EXPECT_EQ(mb.count, 0) << back.describe() << "\n dx:" << mb.first;
}

void check_swiglu_special_values(const runtime::Device& device) {
  const float inf = std::numeric_limits<float>::infinity();
  check_swiglu(device, {.rows = 2, .n = 64}, 70, nullptr, [&](HostRows& g) {
    const float specials[] = {-inf, inf, std::numeric_limits<float>::quiet_NaN(), -100.0f, 100.0f, 0.0f, -0.0f};
    for (std::size_t i = 0; i < std::size(specials); ++i) g.values[i * 3] = specials[i];
  });
  for (auto [dtype, big] : {std::pair{DType::bf16, 3.0e38f}, std::pair{DType::f32, 3.3e38f}, std::pair{DType::f16, 6.0e4f}})
    check_swiglu(device, {.in = dtype, .out = dtype, .rows = 2, .n = 128}, 71, nullptr, [&](HostRows& g) {
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (float& v : g.values) v = rounded(dtype, big * u(rng));
    });
}

}  // namespace warpforge::ops::testing
