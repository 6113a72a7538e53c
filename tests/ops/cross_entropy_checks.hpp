// The cross-entropy checks against fp64 references (loss within 2^-16 of
// its terms' magnitudes, gradient within half an ulp of its dtype plus 2^-16
// of its terms: row_ops_support.hpp), run on the simulator by
// cross_entropy_sim_test.cpp and on a GPU by tests/gpu/cross_entropy_gpu_test.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "row_ops_support.hpp"
#include "warpforge/ops/cross_entropy.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

struct CrossEntropyCase {
  runtime::DType logits = runtime::DType::bf16;
  runtime::DType labels = runtime::DType::i64;
  std::int64_t rows = 6, v = 200;
  LossReduction reduction = LossReduction::mean;
  float label_smoothing = 0.0f;
  std::int64_t ignore_index = -100;
  bool in_place = false;  // the gradient written over the logits
  bool caller_workspace = false;  // the caller's workspace, poisoned (NaN): nothing unwritten may be read
  float sigma = 3.0f;
};

// Runs the loss and its gradient, then CrossEntropyScale by a dloss (per row
// for none), against the fp64 reference; `shape` may rewrite the logits and
// labels (by default every fifth label is the ignore index); kernel: the span expected.
void check_cross_entropy(const runtime::Device& device, const CrossEntropyCase& c, std::uint32_t seed,
                         const char* kernel = nullptr,
                         const std::function<void(HostRows& logits, std::vector<std::int64_t>& labels)>& shape = {});

// Every row ignored (mean: NaN loss, a zero gradient), a NaN logit, a target
// of -inf (loss +inf), a label out of range (NaN), logits near each dtype's largest.
void check_cross_entropy_special_rows(const runtime::Device& device);

}  // namespace warpforge::ops::testing
