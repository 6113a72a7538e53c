// The row ops the extension hands out (normalizations, and the softmax,
// SwiGLU, cross-entropy and norm + quantize ops after them): each an ops::
// class built from sample views given in its roles' order (absent ones
// nullopt), run from views (Python tensors, XLA FFI buffers) or from data
// addresses (the torch operators' path: 0 for an absent tensor), and made
// once per description (op_cache.hpp).
//
// A Traits class says, for one op: its ops:: class, tensors struct and
// options, its roles' names, how the struct is made from the views, how
// the op executes, and its options' part of the cache key.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "op_cache.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::python {

using OptionalViews = std::vector<std::optional<runtime::TensorView>>;

template <class Traits>
class RowOp {
 public:
  using Options = typename Traits::Options;

  RowOp(const OptionalViews& samples, const Options& options)
      : samples_(checked(samples)), op_(Traits::tensors(samples_), options) {}

  std::vector<std::string> check_support() const { return op_.check_support(); }
  std::string kernel_name() const { return std::string(op_.kernel_name()); }
  std::string describe() const { return op_.describe(); }
  std::size_t workspace_bytes() const { return op_.workspace_bytes(); }
  void compile() { op_.compile(); }
  const OptionalViews& samples() const { return samples_; }

  void run(const OptionalViews& views, runtime::Stream* stream) {
    std::lock_guard lock(run_mutex_);  // one run at a time: an op's workspace is one (see GemmAmaxOp)
    Traits::execute(op_, Traits::tensors(checked(views)), stream);
  }
  // run() on other data of the samples' description: a data address a role
  // (0 where the samples had none).
  void run_at(const std::vector<std::uint64_t>& addresses, runtime::Stream* stream) {
    if (addresses.size() != samples_.size())
      throw OpsError(std::string(Traits::kName) + ": " + std::to_string(addresses.size()) +
                     " addresses for " + std::to_string(samples_.size()) + " tensors");
    OptionalViews views;
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      const auto& s = samples_[i];
      if (s && addresses[i])
        views.emplace_back(runtime::TensorView(s->device(), addresses[i], s->dtype(), s->shape(), s->strides()));
      else
        views.emplace_back(std::nullopt);
    }
    run(views, stream);
  }

 private:
  static OptionalViews checked(const OptionalViews& views) {
    if (views.size() != Traits::kRoles.size())
      throw OpsError(std::string(Traits::kName) + " takes " + std::to_string(Traits::kRoles.size()) +
                     " tensors (absent ones None), got " + std::to_string(views.size()));
    for (std::size_t i : Traits::kRequired)
      if (!views[i]) throw OpsError(std::string(Traits::kName) + ": " + Traits::kRoles[i] + " is required");
    return views;
  }

  OptionalViews samples_;
  typename Traits::Op op_;
  std::mutex run_mutex_;
};

template <class Traits>
std::shared_ptr<RowOp<Traits>> cached_row_op(const OptionalViews& views, const typename Traits::Options& options) {
  std::vector<const runtime::TensorView*> pointers;
  for (const auto& v : views) pointers.push_back(v ? &*v : nullptr);
  std::string key = std::string(Traits::kName) + " " + Traits::key(options);
  for (const runtime::TensorView* v : pointers) key += key_of({v}, "");
  return cached<RowOp<Traits>>(key, [&] { return std::make_shared<RowOp<Traits>>(views, options); });
}

// ---- the ops ------------------------------------------------------------------

struct NormTraits {
  using Op = ops::Norm;
  using Options = ops::NormOptions;
  static constexpr const char* kName = "norm";
  static constexpr std::array<const char*, 8> kRoles{"x",   "residual",     "weight", "bias",
                                                      "y",   "residual_out", "mean",   "rstd"};
  static constexpr std::array<std::size_t, 2> kRequired{0, 4};
  static constexpr std::uint64_t kOutputs = 0b11110000;  // y, residual_out, mean, rstd
  static ops::NormTensors tensors(const OptionalViews& v) {
    return {.x = *v[0], .residual = v[1], .weight = v[2], .bias = v[3], .y = *v[4], .residual_out = v[5],
            .mean = v[6], .rstd = v[7]};
  }
  static void execute(Op& op, const ops::NormTensors& t, runtime::Stream* s) { op.execute(t, s); }
  // key(): the options as text ("rms 0x1.0c6f7ap-20": kind, eps in hexadecimal); parse() reads it back.
  static std::string key(const Options& o);
  static Options parse(const std::string& text);
};

struct NormBackwardTraits {
  using Op = ops::NormBackward;
  using Options = ops::NormOptions;
  static constexpr const char* kName = "norm_backward";
  static constexpr std::array<const char*, 9> kRoles{"dy",  "x",  "weight",  "mean", "rstd",
                                                      "dresidual_out", "dx", "dweight", "dbias"};
  static constexpr std::array<std::size_t, 4> kRequired{0, 1, 4, 6};
  static constexpr std::uint64_t kOutputs = 0b111000000;  // dx, dweight, dbias
  static ops::NormBackwardTensors tensors(const OptionalViews& v) {
    return {.dy = *v[0], .x = *v[1], .weight = v[2], .mean = v[3], .rstd = *v[4], .dresidual_out = v[5],
            .dx = *v[6], .dweight = v[7], .dbias = v[8]};
  }
  static void execute(Op& op, const ops::NormBackwardTensors& t, runtime::Stream* s) { op.execute(t, s); }
  static std::string key(const Options& o) { return NormTraits::key(o); }
  static Options parse(const std::string& text) { return NormTraits::parse(text); }
};

// "rms" or "layer"; OpsError naming the value otherwise.
ops::NormKind norm_kind_named(const std::string& kind);

}  // namespace warpforge::python
