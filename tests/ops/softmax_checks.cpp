#include "softmax_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "warpforge/ops/softmax.hpp"

namespace warpforge::ops::testing {

using runtime::DType;

namespace {

constexpr double kTiny = 1e-37;              // subnormal results may be flushed by ex2's input rounding

std::vector<double> softmax_reference(const HostRows& x) {
  std::vector<double> y;
  for (std::int64_t r = 0; r < x.rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (std::int64_t c = 0; c < x.n; ++c) {
      nan = nan || std::isnan(x.at(r, c));
      m = std::max<double>(m, x.at(r, c));
    }
    double sum = 0;
    for (std::int64_t c = 0; c < x.n; ++c) sum += std::exp(x.at(r, c) - m);
    for (std::int64_t c = 0; c < x.n; ++c) {
      const double v = std::exp(x.at(r, c) - m) / sum;
      y.push_back(nan || std::isinf(m) ? std::numeric_limits<double>::quiet_NaN() : v);
    }
  }
  return y;
}

}  // namespace

void check_softmax(const runtime::Device& device, const SoftmaxCase& c, std::uint32_t seed, const char* kernel,
                   const std::function<void(HostRows&)>& shape_x) {
  SCOPED_TRACE("softmax " + std::to_string(c.rows) + "x" + std::to_string(c.n) + " " +
               std::string(runtime::name(c.x)));
  std::mt19937 rng(seed);
  HostRows x = random_rows(rng, c.x, c.rows, c.n, c.sigma);
  if (shape_x) shape_x(x);
  auto ux = upload(device, x, c.stride);
  auto y = poisoned(device, c.y, c.rows, c.n, c.stride);
  Softmax op(ux.view(), y.view());
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(ux.view(), y.view());
  if (kernel) EXPECT_EQ(op.kernel_name(), kernel) << op.describe();
  const std::vector<double> want = softmax_reference(x);
  const double u = unit_roundoff(c.y);
  const HostRows got = download(y.view());
  auto m = compare(got, want, [&](std::int64_t r, std::int64_t col) {
    return (u + kStatistics) * std::fabs(want[static_cast<std::size_t>(r * c.n + col)]) + kTiny;
  });
  EXPECT_EQ(m.count, 0) << op.describe() << "\n y:" << m.first;

  // The backward from the kernel's own y (as autograd runs it).
  HostRows dy = random_rows(rng, c.x, c.rows, c.n);
  auto udy = upload(device, dy, c.stride);
  auto dx = poisoned(device, c.y, c.rows, c.n);
  SoftmaxBackward back(y.view(), udy.view(), dx.view());
  ASSERT_TRUE(back.check_support().empty()) << back.describe();
  back.execute(y.view(), udy.view(), dx.view());
  std::vector<double> dx_want, scale;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    double dot = 0, big = 0;
    for (std::int64_t col = 0; col < c.n; ++col) {
      dot += double(got.at(r, col)) * dy.at(r, col);
      big = std::max(big, std::fabs(double(dy.at(r, col))));
    }
    for (std::int64_t col = 0; col < c.n; ++col) dx_want.push_back(got.at(r, col) * (dy.at(r, col) - dot));
    scale.push_back(big + std::fabs(dot));
  }
  auto mb = compare(download(dx.view()), dx_want, [&](std::int64_t r, std::int64_t col) {
    return u * std::fabs(dx_want[static_cast<std::size_t>(r * c.n + col)]) +
           kStatistics * std::fabs(got.at(r, col)) * scale[static_cast<std::size_t>(r)] + kTiny;
  });
  EXPECT_EQ(mb.count, 0) << back.describe() << "\n dx:" << mb.first;
}

void check_softmax_special_rows(const runtime::Device& device) {
  const float inf = std::numeric_limits<float>::infinity();
  check_softmax(device, {.rows = 4, .n = 1}, 50);
  check_softmax(device, {.rows = 3, .n = 300}, 51, nullptr, [](HostRows& x) {
    for (float& v : x.values) v = 0.75f;
  });
  for (auto [dtype, big] : {std::pair{DType::bf16, 3.0e38f}, std::pair{DType::f32, 3.3e38f}, std::pair{DType::f16, 6.0e4f}})
    check_softmax(device, {.x = dtype, .y = dtype, .rows = 3, .n = 200}, 52, nullptr, [&](HostRows& x) {
      std::mt19937 rng(9);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (float& v : x.values) v = rounded(dtype, big * u(rng));
    });
  // Row 0: a NaN; row 1: +inf; row 2: all -inf; row 3: -inf but one element (its y exactly 1 there).
  check_softmax(device, {.rows = 4, .n = 64}, 53, nullptr, [&](HostRows& x) {
    x.values[3] = std::numeric_limits<float>::quiet_NaN();
    x.values[64 + 7] = inf;
    for (std::int64_t c = 0; c < 64; ++c) x.values[static_cast<std::size_t>(2 * 64 + c)] = -inf;
    for (std::int64_t c = 0; c < 64; ++c) x.values[static_cast<std::size_t>(3 * 64 + c)] = c == 5 ? 2.0f : -inf;
  });
}

}  // namespace warpforge::ops::testing
