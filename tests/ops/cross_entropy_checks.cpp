#include "cross_entropy_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace warpforge::ops::testing {

using runtime::DType;
using runtime::TensorView;

namespace {

struct CrossEntropyReference {
  std::vector<double> loss, grad, loss_scale, grad_scale;  // loss: a row (or one); the scales bound the errors
};

CrossEntropyReference reference(const CrossEntropyCase& c, const HostRows& x,
                                const std::vector<std::int64_t>& labels) {
  CrossEntropyReference r;
  const double eps = c.label_smoothing;
  double count = 0, total = 0, total_scale = 0;
  for (std::int64_t i = 0; i < c.rows; ++i) count += labels[static_cast<std::size_t>(i)] != c.ignore_index;
  const double scale = c.reduction == LossReduction::mean ? 1.0 / count : 1.0;
  for (std::int64_t i = 0; i < c.rows; ++i) {
    const std::int64_t y = labels[static_cast<std::size_t>(i)];
    const bool valid = y != c.ignore_index, in_range = y >= 0 && y < c.v;
    double m = -std::numeric_limits<double>::infinity(), sum = 0, sum_x = 0, abs_x = 0;
    for (std::int64_t j = 0; j < c.v; ++j) m = std::max<double>(m, x.at(i, j));
    for (std::int64_t j = 0; j < c.v; ++j) sum += std::exp(x.at(i, j) - m), sum_x += x.at(i, j), abs_x += std::fabs(x.at(i, j));
    const double lse = m + std::log(sum), xy = in_range ? x.at(i, y) : 0.0;
    double loss = lse - (1 - eps) * xy - eps * sum_x / static_cast<double>(c.v);
    if (!valid) loss = 0;
    else if (!in_range) loss = std::numeric_limits<double>::quiet_NaN();
    const double loss_scale = std::fabs(lse) + std::fabs(xy) + eps * abs_x / static_cast<double>(c.v) + 1;
    total += loss, total_scale += valid ? loss_scale : 0;
    if (c.reduction == LossReduction::none) r.loss.push_back(loss), r.loss_scale.push_back(loss_scale);
    for (std::int64_t j = 0; j < c.v; ++j) {
      const double p = std::exp(x.at(i, j) - m) / sum;
      const double target = (j == y ? 1 - eps : 0) + eps / static_cast<double>(c.v);
      double g = valid ? scale * (p - target) : 0.0;
      if (valid && !in_range) g = std::numeric_limits<double>::quiet_NaN();
      r.grad.push_back(g);
      r.grad_scale.push_back(valid ? scale * (p + target) : 0.0);
    }
  }
  if (c.reduction != LossReduction::none) {
    r.loss.push_back(c.reduction == LossReduction::mean ? total / count : total);
    r.loss_scale.push_back(c.reduction == LossReduction::mean ? total_scale / count : total_scale);
  }
  // Losses past f32's range are its infinity (the f32 loss can hold no more).
  for (double& l : r.loss)
    if (std::isinf(static_cast<float>(l))) l = static_cast<float>(l);
  return r;
}

DeviceRows upload_labels(const runtime::Device& device, DType dtype, const std::vector<std::int64_t>& labels) {
  HostRows none{DType::f32, 0, 0, {}};
  (void)none;
  std::vector<std::uint8_t> bytes;
  for (std::int64_t l : labels) {
    if (dtype == DType::i64) {
      std::uint8_t b[8];
      std::memcpy(b, &l, 8);
      bytes.insert(bytes.end(), b, b + 8);
    } else {
      const auto n = static_cast<std::int32_t>(l);
      std::uint8_t b[4];
      std::memcpy(b, &n, 4);
      bytes.insert(bytes.end(), b, b + 4);
    }
  }
  auto buffer = std::make_shared<runtime::Buffer>(device, std::max<std::size_t>(bytes.size(), 16));
  if (!bytes.empty()) buffer->copy_from_host(bytes.data(), bytes.size());
  TensorView view(*buffer, dtype, {static_cast<std::int64_t>(labels.size())});
  return {buffer, runtime::Tensor(view, buffer)};
}

}  // namespace

void check_cross_entropy(const runtime::Device& device, const CrossEntropyCase& c, std::uint32_t seed,
                         const char* kernel,
                         const std::function<void(HostRows& logits, std::vector<std::int64_t>& labels)>& shape) {
  SCOPED_TRACE("cross_entropy " + std::to_string(c.rows) + "x" + std::to_string(c.v) + " " +
               std::string(runtime::name(c.logits)) + " " + std::string(name(c.reduction)) + " smoothing " +
               std::to_string(c.label_smoothing) + (c.in_place ? " in place" : ""));
  std::mt19937 rng(seed);
  HostRows x = random_rows(rng, c.logits, c.rows, c.v, c.sigma);
  std::uniform_int_distribution<std::int64_t> pick(0, c.v - 1);
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < c.rows; ++i) labels.push_back(i % 5 == 3 ? c.ignore_index : pick(rng));
  if (shape) shape(x, labels);
  const CrossEntropyReference ref = reference(c, x, labels);

  auto logits = upload(device, x);
  auto ulabels = upload_labels(device, c.labels, labels);
  const std::int64_t losses = c.reduction == LossReduction::none ? c.rows : 1;
  auto loss = poisoned_vector(device, DType::f32, losses);
  auto lse = poisoned_vector(device, DType::f32, c.rows);
  auto separate = poisoned(device, c.logits, c.rows, c.v);
  const TensorView grad = c.in_place ? logits.view() : separate.view();
  const CrossEntropyTensors t{.logits = logits.view(), .labels = ulabels.view(), .loss = loss.view(), .lse = lse.view(),
                              .dlogits = grad};
  CrossEntropy op(t, {.ignore_index = c.ignore_index, .label_smoothing = c.label_smoothing, .reduction = c.reduction,
                      .caller_workspace = c.caller_workspace});
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  if (c.caller_workspace) {
    auto workspace = poisoned_vector(device, DType::f32, static_cast<std::int64_t>(op.workspace_bytes() / 4));
    const TensorView space = workspace.view();
    op.execute(t, nullptr, &space);
  } else {
    op.execute(t);
  }
  if (kernel) EXPECT_EQ(op.kernel_name(), std::string_view(kernel)) << op.describe();
  auto ml = compare(download(loss.view()), ref.loss, [&](std::int64_t, std::int64_t i) {
    return kStatistics * ref.loss_scale[static_cast<std::size_t>(i)];
  });
  EXPECT_EQ(ml.count, 0) << op.describe() << "\n loss:" << ml.first;
  const double u = unit_roundoff(c.logits);
  const HostRows g = download(grad);
  auto mg = compare(g, ref.grad, [&](std::int64_t i, std::int64_t j) {
    const auto at = static_cast<std::size_t>(i * c.v + j);
    return u * std::fabs(ref.grad[at]) + kStatistics * ref.grad_scale[at];
  });
  EXPECT_EQ(mg.count, 0) << op.describe() << "\n gradient:" << mg.first;

  // The backward: the gradient times a dloss (per row for none; rows whose
  // dloss is 1, every third, are left as they are).
  HostRows dloss{DType::f32, 1, losses, {}};
  for (std::int64_t i = 0; i < losses; ++i) dloss.values.push_back(i % 3 == 0 ? 1.0f : 0.5f + static_cast<float>(i % 7));
  auto udloss = upload_vector(device, dloss);
  CrossEntropyScale scale({.dlogits = grad, .dloss = udloss.view()});
  ASSERT_TRUE(scale.check_support().empty()) << scale.describe();
  scale.execute({.dlogits = grad, .dloss = udloss.view()});
  const HostRows scaled = download(grad);
  for (std::int64_t i = 0; i < c.rows; ++i) {
    const float f = dloss.values[static_cast<std::size_t>(losses == 1 ? 0 : i)];
    for (std::int64_t j = 0; j < c.v; ++j) {
      const float before = g.at(i, j), after = scaled.at(i, j), want = rounded(c.logits, before * f);
      ASSERT_TRUE(std::memcmp(&after, &want, 4) == 0 || (std::isnan(after) && std::isnan(want)))
          << "row " << i << " column " << j << ": " << before << " x " << f << " gave " << after;
    }
  }
}

void check_cross_entropy_special_rows(const runtime::Device& device) {
  const float inf = std::numeric_limits<float>::infinity();
  check_cross_entropy(device, {.rows = 4, .v = 64}, 60, nullptr, [](HostRows&, std::vector<std::int64_t>& labels) {
    for (auto& l : labels) l = -100;
  });
  check_cross_entropy(device, {.rows = 5, .v = 64, .reduction = LossReduction::none, .label_smoothing = 0.1f}, 61,
                      nullptr, [&](HostRows& x, std::vector<std::int64_t>& labels) {
                        x.values[3] = std::numeric_limits<float>::quiet_NaN();        // row 0
                        labels[1] = 9, x.values[64 + 9] = -inf;                        // row 1: loss +inf
                        labels[2] = 64;                                                // row 2: out of range
                        labels[4] = 0;
                      });
  for (auto [dtype, big] : {std::pair{DType::bf16, 3.0e38f}, std::pair{DType::f32, 3.3e38f}, std::pair{DType::f16, 6.0e4f}})
    check_cross_entropy(device, {.logits = dtype, .rows = 3, .v = 100, .reduction = LossReduction::none,
                                 .label_smoothing = 0.1f},
                        62, nullptr, [&](HostRows& x, std::vector<std::int64_t>&) {
                          std::mt19937 rng(3);
                          std::uniform_real_distribution<float> u(-1.0f, 1.0f);
                          for (float& v : x.values) v = rounded(dtype, big * u(rng));
                        });
}

}  // namespace warpforge::ops::testing
