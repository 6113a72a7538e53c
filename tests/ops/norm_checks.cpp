#include "norm_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "row_ops_support.hpp"

namespace warpforge::ops::testing {

using runtime::DType;
using runtime::TensorView;

namespace {

struct Reference {
  std::vector<double> y, h;
  std::vector<double> mean, rstd, scale;  // scale: the row's max |xhat · w| + max |b|
};

Reference norm_reference(NormKind kind, const HostRows& x, const HostRows* residual, DType h_dtype,
                         const HostRows* w, const HostRows* b, double eps) {
  Reference r;
  const std::int64_t n = x.n;
  for (std::int64_t row = 0; row < x.rows; ++row) {
    std::vector<double> h(static_cast<std::size_t>(n));
    for (std::int64_t c = 0; c < n; ++c)
      h[static_cast<std::size_t>(c)] =
          residual ? rounded(h_dtype, static_cast<float>(double(x.at(row, c)) + residual->at(row, c))) : x.at(row, c);
    double mean = 0, square = 0;
    if (kind == NormKind::layer) {
      for (double v : h) mean += v;
      mean /= static_cast<double>(n);
    }
    for (double v : h) square += (v - mean) * (v - mean);
    const double rstd = 1.0 / std::sqrt(square / static_cast<double>(n) + eps);
    double scale = 0, bias_scale = 0;
    for (std::int64_t c = 0; c < n; ++c) {
      const double xhat = (h[static_cast<std::size_t>(c)] - mean) * rstd;
      const double weight = w ? w->at(0, c) : 1.0, bias = b ? b->at(0, c) : 0.0;
      r.y.push_back(xhat * weight + bias);
      r.h.push_back(h[static_cast<std::size_t>(c)]);
      scale = std::max(scale, std::fabs(xhat * weight));
      bias_scale = std::max(bias_scale, std::fabs(bias));
    }
    r.mean.push_back(mean);
    r.rstd.push_back(rstd);
    r.scale.push_back(scale + bias_scale);
  }
  return r;
}


struct NormRun {
  HostRows x;
  std::optional<HostRows> residual, weight, bias;
  HostRows y, h, mean, rstd;
  std::string kernel, describe;
};

NormRun run_norm(const runtime::Device& device, const NormCase& c, std::mt19937& rng,
                 const std::function<void(HostRows&)>& shape_x = {}) {
  NormRun run;
  run.x = random_rows(rng, c.x, c.rows, c.n, 1.5f, 0.25f);
  if (shape_x) shape_x(run.x);
  if (c.residual) run.residual = random_rows(rng, *c.residual, c.rows, c.n);
  if (c.weight) run.weight = random_rows(rng, *c.weight, 1, c.n, 0.5f, 1.0f);
  if (c.bias) run.bias = random_rows(rng, *c.bias, 1, c.n, 0.5f);
  auto x = upload(device, run.x, c.stride);
  std::optional<DeviceRows> residual, weight, bias, residual_out, mean;
  if (run.residual) residual = upload(device, *run.residual, c.stride);
  if (run.weight) weight = upload_vector(device, *run.weight);
  if (run.bias) bias = upload_vector(device, *run.bias);
  auto y = poisoned(device, c.y, c.rows, c.n, c.stride);
  if (c.residual) residual_out = poisoned(device, *c.residual, c.rows, c.n);
  if (c.kind == NormKind::layer) mean = poisoned_vector(device, DType::f32, c.rows);
  auto rstd = poisoned_vector(device, DType::f32, c.rows);
  auto view = [](const std::optional<DeviceRows>& d) {
    return d ? std::optional<TensorView>(d->view()) : std::nullopt;
  };
  const NormTensors t{.x = x.view(),
                      .residual = view(residual),
                      .weight = view(weight),
                      .bias = view(bias),
                      .y = y.view(),
                      .residual_out = view(residual_out),
                      .mean = view(mean),
                      .rstd = rstd.view()};
  Norm op(t, {.kind = c.kind, .eps = c.eps});
  EXPECT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  run.kernel = op.kernel_name();
  run.describe = op.describe();
  run.y = download(y.view());
  if (residual_out) run.h = download(residual_out->view());
  if (mean) run.mean = download(mean->view());
  run.rstd = download(rstd.view());
  return run;
}

Reference reference_of(const NormCase& c, const NormRun& run) {
  return norm_reference(c.kind, run.x, run.residual ? &*run.residual : nullptr, c.residual.value_or(c.x),
                        run.weight ? &*run.weight : nullptr, run.bias ? &*run.bias : nullptr, c.eps);
}

void expect_matches(const NormCase& c, const NormRun& run, const Reference& ref) {
  const double u = unit_roundoff(c.y);
  auto y = compare(run.y, ref.y, [&](std::int64_t r, std::int64_t col) {
    return u * std::fabs(ref.y[static_cast<std::size_t>(r * c.n + col)]) + kStatistics * ref.scale[static_cast<std::size_t>(r)];
  });
  EXPECT_EQ(y.count, 0) << run.describe << "\n y:" << y.first;
  if (c.residual) {
    auto h = compare(run.h, ref.h, [](std::int64_t, std::int64_t) { return 0.0; });
    EXPECT_EQ(h.count, 0) << "residual_out:" << h.first;
  }
  HostRows one{DType::f32, 1, c.rows, {}};
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const double rstd = ref.rstd[static_cast<std::size_t>(r)];
    EXPECT_NEAR(run.rstd.values[static_cast<std::size_t>(r)], rstd, 1e-5 * rstd) << "rstd of row " << r;
    if (c.kind == NormKind::layer) {
      const double scale = 1e-5 * (std::fabs(ref.mean[static_cast<std::size_t>(r)]) + 1 / rstd);
      EXPECT_NEAR(run.mean.values[static_cast<std::size_t>(r)], ref.mean[static_cast<std::size_t>(r)], scale)
          << "mean of row " << r;
    }
  }
}

}  // namespace

void check_norm(const runtime::Device& device, const NormCase& c, std::uint32_t seed, const char* kernel) {
  std::mt19937 rng(seed);
  NormRun run = run_norm(device, c, rng);
  expect_matches(c, run, reference_of(c, run));
  if (kernel) EXPECT_EQ(run.kernel, kernel) << run.describe;
}




void check_norm_backward(const runtime::Device& device, const BackwardCase& c, std::uint32_t seed, const char* kernel) {
  SCOPED_TRACE(std::string(name(c.kind)) + " backward " + std::to_string(c.rows) + "x" + std::to_string(c.n));
  std::mt19937 rng(seed);
  HostRows x = random_rows(rng, c.x, c.rows, c.n, 1.5f, 0.3f), dy = random_rows(rng, c.dy, c.rows, c.n);
  if (c.dy_scale != 1.0f)
    for (float& v : dy.values) v = rounded(c.dy, std::fabs(v) * c.dy_scale);
  std::optional<HostRows> w, dres;
  if (c.weight) w = random_rows(rng, *c.weight, 1, c.n, 0.5f, 1.0f);
  if (c.dresidual) dres = random_rows(rng, c.dx, c.rows, c.n);
  Reference fwd = norm_reference(c.kind, x, nullptr, c.x, w ? &*w : nullptr, nullptr, 1e-5);
  HostRows mean_rows{DType::f32, 1, c.rows, {}}, rstd_rows{DType::f32, 1, c.rows, {}};
  for (std::int64_t r = 0; r < c.rows; ++r) {
    mean_rows.values.push_back(static_cast<float>(fwd.mean[static_cast<std::size_t>(r)]));
    rstd_rows.values.push_back(static_cast<float>(fwd.rstd[static_cast<std::size_t>(r)]));
  }
  // The reference with the statistics the kernel reads (f32).
  std::vector<double> dx_ref, dw_ref(static_cast<std::size_t>(c.n), 0.0), db_ref(static_cast<std::size_t>(c.n), 0.0),
      dw_scale(static_cast<std::size_t>(c.n), 0.0), dx_scale;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const double mean = c.kind == NormKind::layer ? mean_rows.values[static_cast<std::size_t>(r)] : 0.0;
    const double rstd = rstd_rows.values[static_cast<std::size_t>(r)];
    double sum_g = 0, sum_gx = 0, max_g = 0, max_xhat = 0;
    for (std::int64_t col = 0; col < c.n; ++col) {
      const double xhat = (x.at(r, col) - mean) * rstd, g = dy.at(r, col) * (w ? w->at(0, col) : 1.0);
      sum_g += g, sum_gx += g * xhat;
      max_g = std::max(max_g, std::fabs(g)), max_xhat = std::max(max_xhat, std::fabs(xhat));
      dw_ref[static_cast<std::size_t>(col)] += dy.at(r, col) * xhat;
      dw_scale[static_cast<std::size_t>(col)] += std::fabs(dy.at(r, col) * xhat);
      db_ref[static_cast<std::size_t>(col)] += dy.at(r, col);
    }
    for (std::int64_t col = 0; col < c.n; ++col) {
      const double xhat = (x.at(r, col) - mean) * rstd, g = dy.at(r, col) * (w ? w->at(0, col) : 1.0);
      double v = rstd * (g - xhat * sum_gx / static_cast<double>(c.n));
      if (c.kind == NormKind::layer) v -= rstd * sum_g / static_cast<double>(c.n);
      if (dres) v += dres->at(r, col);
      dx_ref.push_back(v);
    }
    dx_scale.push_back(rstd * max_g * (2 + max_xhat));
  }
  auto dx = poisoned(device, c.dx, c.rows, c.n);
  auto ux = upload(device, x), udy = upload(device, dy), urstd = upload_vector(device, rstd_rows),
       umean = upload_vector(device, mean_rows);
  std::optional<DeviceRows> uw, udres, dw, db;
  if (w) uw = upload_vector(device, *w);
  if (dres) udres = upload(device, *dres);
  if (c.dweight) dw = poisoned_vector(device, *c.weight, c.n);
  if (c.dbias) db = poisoned_vector(device, DType::f32, c.n);
  auto view = [](const std::optional<DeviceRows>& d) {
    return d ? std::optional<TensorView>(d->view()) : std::nullopt;
  };
  const NormBackwardTensors t{.dy = udy.view(),
                              .x = ux.view(),
                              .weight = view(uw),
                              .mean = c.kind == NormKind::layer ? std::optional<TensorView>(umean.view()) : std::nullopt,
                              .rstd = urstd.view(),
                              .dresidual_out = view(udres),
                              .dx = dx.view(),
                              .dweight = view(dw),
                              .dbias = view(db)};
  NormBackward op(t, {.kind = c.kind});
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  if (kernel) EXPECT_EQ(op.kernel_name(), kernel) << op.describe();
  if (c.groups) EXPECT_NE(op.describe().find(std::to_string(c.groups) + " row groups"), std::string::npos) << op.describe();
  const double u = unit_roundoff(c.dx);
  auto got = compare(download(dx.view()), dx_ref, [&](std::int64_t r, std::int64_t col) {
    return u * std::fabs(dx_ref[static_cast<std::size_t>(r * c.n + col)]) + kStatistics * dx_scale[static_cast<std::size_t>(r)];
  });
  EXPECT_EQ(got.count, 0) << op.describe() << "\n dx:" << got.first;
  if (dw) {
    const double uw_ = unit_roundoff(*c.weight);
    auto gw = compare(download(dw->view()), dw_ref, [&](std::int64_t, std::int64_t col) {
      return uw_ * std::fabs(dw_ref[static_cast<std::size_t>(col)]) + kStatistics * dw_scale[static_cast<std::size_t>(col)];
    });
    EXPECT_EQ(gw.count, 0) << op.describe() << "\n dweight:" << gw.first;
  }
  if (db) {
    auto gb = compare(download(db->view()), db_ref, [&](std::int64_t, std::int64_t col) {
      return 1e-6 * (1 + std::fabs(db_ref[static_cast<std::size_t>(col)])) * c.rows;
    });
    EXPECT_EQ(gb.count, 0) << op.describe() << "\n dbias:" << gb.first;
  }
}


void check_norm_one_element_rows(const runtime::Device& device) {
  check_norm(device, {.rows = 6, .n = 1}, 500);
  // layer: var 0, so y = bias exactly.
  NormCase c{.kind = NormKind::layer, .bias = DType::bf16, .rows = 6, .n = 1};
  std::mt19937 rng(501);
  NormRun run = run_norm(device, c, rng);
  for (std::int64_t r = 0; r < c.rows; ++r) EXPECT_EQ(run.y.at(r, 0), run.bias->at(0, 0)) << r;
}

void check_norm_all_equal_rows(const runtime::Device& device) {
  for (DType dt : {DType::bf16, DType::f16, DType::f32}) {
    NormCase c{.kind = NormKind::layer, .x = dt, .y = dt, .weight = dt, .bias = dt, .rows = 4, .n = 777};
    std::mt19937 rng(600);
    const float values[] = {0.3f, -1234.5f, 3.0e-3f, 7.0f};
    NormRun run = run_norm(device, c, rng, [&](HostRows& x) {
      for (std::int64_t r = 0; r < x.rows; ++r)
        for (std::int64_t col = 0; col < x.n; ++col)
          x.values[static_cast<std::size_t>(r * x.n + col)] = rounded(dt, values[r]);
    });
    for (std::int64_t r = 0; r < c.rows; ++r)
      for (std::int64_t col = 0; col < c.n; ++col)
        ASSERT_EQ(run.y.at(r, col), rounded(dt, run.bias->at(0, col))) << runtime::name(dt) << " " << r << "," << col;
    // rms of an all-equal row v: y = w · v / sqrt(v² + eps).
    NormCase rms{.x = dt, .y = dt, .weight = dt, .rows = 4, .n = 777};
    NormRun rrun = run_norm(device, rms, rng, [&](HostRows& x) {
      for (std::int64_t r = 0; r < x.rows; ++r)
        for (std::int64_t col = 0; col < x.n; ++col)
          x.values[static_cast<std::size_t>(r * x.n + col)] = rounded(dt, values[r]);
    });
    expect_matches(rms, rrun, reference_of(rms, rrun));
  }
}

void check_norm_values_near_the_largest(const runtime::Device& device) {
  // Squares of bf16 and f32 values near 3.4e38 overflow f32; the scaled sums
  // keep the statistics finite, as the fp64 reference's are.
  struct Big {
    DType dtype;
    float magnitude;
  };
  for (Big big : {Big{DType::bf16, 3.0e38f}, Big{DType::f32, 3.3e38f}, Big{DType::f16, 6.0e4f}})
    for (NormKind kind : {NormKind::rms, NormKind::layer}) {
      NormCase c{.kind = kind, .x = big.dtype, .y = big.dtype, .weight = big.dtype, .rows = 3, .n = 300};
      std::mt19937 rng(700);
      std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
      NormRun run = run_norm(device, c, rng, [&](HostRows& x) {
        for (float& v : x.values) v = rounded(big.dtype, big.magnitude * unit(rng));
        x.values[1] = rounded(big.dtype, big.magnitude);  // the largest itself
      });
      SCOPED_TRACE(std::string(runtime::name(big.dtype)) + " " + std::string(name(kind)));
      Reference ref = reference_of(c, run);
      const double u = unit_roundoff(c.y);
      auto y = compare(run.y, ref.y, [&](std::int64_t r, std::int64_t col) {
        return u * std::fabs(ref.y[static_cast<std::size_t>(r * c.n + col)]) + kStatistics * ref.scale[static_cast<std::size_t>(r)];
      });
      EXPECT_EQ(y.count, 0) << run.describe << y.first;
    }
  // The backward's row sums of g · xhat (rms) and g (layer) overflow f32 at dy near 1e37:
  // summed again at the row's scale (no dweight: its sum over rows is infinite).
  for (NormKind kind : {NormKind::rms, NormKind::layer})
    check_norm_backward(device,
                        {.kind = kind, .x = DType::f32, .dy = DType::f32, .dx = DType::f32, .weight = std::nullopt,
                         .dweight = false, .rows = 5, .n = 1000, .dy_scale = 1e37f},
                        710);
}

void check_norm_nan_and_infinity(const runtime::Device& device) {
  // Row 0 holds a NaN: all NaN. Row 1 an infinity: rstd 0, so rms gives 0
  // for finite elements and NaN for the infinite one (inf · 0); layer norm
  // gives a NaN row (the mean is infinite). Row 2 is finite.
  for (NormKind kind : {NormKind::rms, NormKind::layer}) {
    NormCase c{.kind = kind, .rows = 3, .n = 64};
    std::mt19937 rng(800);
    NormRun run = run_norm(device, c, rng, [](HostRows& x) {
      x.values[5] = std::numeric_limits<float>::quiet_NaN();
      x.values[64 + 9] = std::numeric_limits<float>::infinity();
    });
    for (std::int64_t col = 0; col < c.n; ++col) {
      EXPECT_TRUE(std::isnan(run.y.at(0, col))) << col;
      if (kind == NormKind::layer || col == 9)
        EXPECT_TRUE(std::isnan(run.y.at(1, col))) << col;
      else
        EXPECT_EQ(run.y.at(1, col), 0.0f) << col;
      EXPECT_TRUE(std::isfinite(run.y.at(2, col))) << col;
    }
    if (kind == NormKind::rms)
      EXPECT_EQ(run.rstd.values[1], 0.0f);
    else
      EXPECT_TRUE(std::isnan(run.rstd.values[1]));  // var(h) is NaN, as PyTorch's
  }
}

}  // namespace warpforge::ops::testing
