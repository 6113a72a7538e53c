// The row ops the extension hands out (normalizations, and the softmax,
// SwiGLU, cross-entropy and norm + quantize ops after them): each an ops::
// class built from sample views given in its roles' order (absent ones
// nullopt), run from views (Python tensors, XLA FFI buffers) or from data
// addresses (the torch operators' path: 0 for an absent tensor), and made
// once per description (op_cache.hpp).
//
// A Traits class says, for one op: its ops:: class and options, its roles'
// names (which are required, which are outputs), how the op is made from
// the views and how it executes them, and its options as text (key(), which
// parse() reads back: the one spelling the Python package, the cache and the
// XLA FFI handler's `options` attribute share).
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
#include "warpforge/ops/cross_entropy.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/ops/norm_quantize.hpp"
#include "warpforge/ops/softmax.hpp"
#include "warpforge/ops/swiglu.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::python {

using OptionalViews = std::vector<std::optional<runtime::TensorView>>;

template <class Traits>
class RowOp {
 public:
  using Options = typename Traits::Options;

  RowOp(const OptionalViews& samples, const Options& options)
      : samples_(checked(samples)), op_(Traits::make(samples_, options)) {}

  std::vector<std::string> check_support() const { return op_.check_support(); }
  std::string kernel_name() const { return std::string(op_.kernel_name()); }
  std::string describe() const { return op_.describe(); }
  std::size_t workspace_bytes() const { return op_.workspace_bytes(); }
  void compile() { op_.compile(); }
  const OptionalViews& samples() const { return samples_; }

  void run(const OptionalViews& views, runtime::Stream* stream) {
    std::lock_guard lock(run_mutex_);  // one run at a time: an op's workspace is one (see GemmAmaxOp)
    Traits::execute(op_, checked(views), stream);
  }
  // run() on other data of the samples' description: a data address a role
  // (read where the samples had the tensor: 0 may be an empty one's).
  void run_at(const std::vector<std::uint64_t>& addresses, runtime::Stream* stream) {
    if (addresses.size() != samples_.size())
      throw OpsError(std::string(Traits::kName) + ": " + std::to_string(addresses.size()) +
                     " addresses for " + std::to_string(samples_.size()) + " tensors");
    OptionalViews views;
    views.reserve(samples_.size());
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      const auto& s = samples_[i];
      if (s)
        views.emplace_back(runtime::TensorView(s->device(), addresses[i], s->dtype(), s->shape(), s->strides()));
      else
        views.emplace_back(std::nullopt);
    }
    run(views, stream);
  }

 private:
  static const OptionalViews& checked(const OptionalViews& views) {
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

// The ops without options (their key is empty).
struct NoOptions {};

struct NormTraits {
  using Op = ops::Norm;
  using Options = ops::NormOptions;
  static constexpr const char* kName = "norm";
  static constexpr std::array<const char*, 8> kRoles{"x",   "residual",     "weight", "bias",
                                                      "y",   "residual_out", "mean",   "rstd"};
  static constexpr std::array<std::size_t, 2> kRequired{0, 4};
  static constexpr std::uint64_t kOutputs = 0b11110000;  // y, residual_out, mean, rstd
  static Op make(const OptionalViews& v, const Options& o) { return Op(tensors(v), o); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  static ops::NormTensors tensors(const OptionalViews& v) {
    return {.x = *v[0], .residual = v[1], .weight = v[2], .bias = v[3], .y = *v[4], .residual_out = v[5],
            .mean = v[6], .rstd = v[7]};
  }
  // "rms 0x1.0c6f7ap-20": the kind, eps in hexadecimal.
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
  static Op make(const OptionalViews& v, const Options& o) { return Op(tensors(v), o); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  static ops::NormBackwardTensors tensors(const OptionalViews& v) {
    return {.dy = *v[0], .x = *v[1], .weight = v[2], .mean = v[3], .rstd = *v[4], .dresidual_out = v[5],
            .dx = *v[6], .dweight = v[7], .dbias = v[8]};
  }
  static std::string key(const Options& o) { return NormTraits::key(o); }
  static Options parse(const std::string& text) { return NormTraits::parse(text); }
};

struct SoftmaxTraits {
  using Op = ops::Softmax;
  using Options = NoOptions;
  static constexpr const char* kName = "softmax";
  static constexpr std::array<const char*, 2> kRoles{"x", "y"};
  static constexpr std::array<std::size_t, 2> kRequired{0, 1};
  static constexpr std::uint64_t kOutputs = 0b10;
  static Op make(const OptionalViews& v, const Options&) { return Op(*v[0], *v[1]); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(*v[0], *v[1], s); }
  static std::string key(const Options&) { return ""; }
  static Options parse(const std::string&) { return {}; }
};

struct SoftmaxBackwardTraits {
  using Op = ops::SoftmaxBackward;
  using Options = NoOptions;
  static constexpr const char* kName = "softmax_backward";
  static constexpr std::array<const char*, 3> kRoles{"y", "dy", "dx"};
  static constexpr std::array<std::size_t, 3> kRequired{0, 1, 2};
  static constexpr std::uint64_t kOutputs = 0b100;
  static Op make(const OptionalViews& v, const Options&) { return Op(*v[0], *v[1], *v[2]); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(*v[0], *v[1], *v[2], s); }
  static std::string key(const Options&) { return ""; }
  static Options parse(const std::string&) { return {}; }
};

struct SwigluTraits {
  using Op = ops::Swiglu;
  using Options = NoOptions;
  static constexpr const char* kName = "swiglu";
  static constexpr std::array<const char*, 4> kRoles{"gate", "up", "x", "out"};
  static constexpr std::array<std::size_t, 1> kRequired{3};
  static constexpr std::uint64_t kOutputs = 0b1000;
  static ops::SwigluTensors tensors(const OptionalViews& v) { return {.gate = v[0], .up = v[1], .x = v[2], .out = *v[3]}; }
  static Op make(const OptionalViews& v, const Options&) { return Op(tensors(v)); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  static std::string key(const Options&) { return ""; }
  static Options parse(const std::string&) { return {}; }
};

struct SwigluBackwardTraits {
  using Op = ops::SwigluBackward;
  using Options = NoOptions;
  static constexpr const char* kName = "swiglu_backward";
  static constexpr std::array<const char*, 7> kRoles{"dout", "gate", "up", "x", "dgate", "dup", "dx"};
  static constexpr std::array<std::size_t, 1> kRequired{0};
  static constexpr std::uint64_t kOutputs = 0b1110000;
  static ops::SwigluBackwardTensors tensors(const OptionalViews& v) {
    return {.dout = *v[0], .gate = v[1], .up = v[2], .x = v[3], .dgate = v[4], .dup = v[5], .dx = v[6]};
  }
  static Op make(const OptionalViews& v, const Options&) { return Op(tensors(v)); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  static std::string key(const Options&) { return ""; }
  static Options parse(const std::string&) { return {}; }
};

struct CrossEntropyTraits {
  using Op = ops::CrossEntropy;
  using Options = ops::CrossEntropyOptions;
  static constexpr const char* kName = "cross_entropy";
  static constexpr std::array<const char*, 5> kRoles{"logits", "labels", "loss", "lse", "dlogits"};
  static constexpr std::array<std::size_t, 3> kRequired{0, 1, 2};
  static constexpr std::uint64_t kOutputs = 0b11100;  // loss, lse, dlogits (dlogits may be the logits)
  static ops::CrossEntropyTensors tensors(const OptionalViews& v) {
    return {.logits = *v[0], .labels = *v[1], .loss = *v[2], .lse = v[3], .dlogits = v[4]};
  }
  static Op make(const OptionalViews& v, const Options& o) { return Op(tensors(v), o); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  // "mean -100 0x0p+0": the reduction, the ignore index, label smoothing in hexadecimal.
  static std::string key(const Options& o);
  static Options parse(const std::string& text);
};

struct CrossEntropyScaleTraits {
  using Op = ops::CrossEntropyScale;
  using Options = NoOptions;
  static constexpr const char* kName = "cross_entropy_scale";
  static constexpr std::array<const char*, 2> kRoles{"dlogits", "dloss"};
  static constexpr std::array<std::size_t, 2> kRequired{0, 1};
  static constexpr std::uint64_t kOutputs = 0b1;  // scaled in place:
  static constexpr std::uint64_t kInPlace = 0b1;  // an input too (an XLA call aliases the two)
  static Op make(const OptionalViews& v, const Options&) { return Op({.dlogits = *v[0], .dloss = *v[1]}); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) {
    op.execute({.dlogits = *v[0], .dloss = *v[1]}, s);
  }
  static std::string key(const Options&) { return ""; }
  static Options parse(const std::string&) { return {}; }
};

struct NormQuantizeTraits {
  using Op = ops::RmsNormQuantize;
  using Options = ops::NormQuantizeOptions;
  static constexpr const char* kName = "rms_norm_quantize";
  static constexpr std::array<const char*, 8> kRoles{"x",      "residual",     "weight", "data",
                                                      "scales", "residual_out", "rstd",   "y"};
  static constexpr std::array<std::size_t, 3> kRequired{0, 3, 4};
  static constexpr std::uint64_t kOutputs = 0b11111000;
  static ops::NormQuantizeTensors tensors(const OptionalViews& v) {
    return {.x = *v[0], .residual = v[1], .weight = v[2], .data = *v[3], .scales = *v[4], .residual_out = v[5],
            .rstd = v[6], .y = v[7]};
  }
  static Op make(const OptionalViews& v, const Options& o) { return Op(tensors(v), o); }
  static void execute(Op& op, const OptionalViews& v, runtime::Stream* s) { op.execute(tensors(v), s); }
  // "mxfp8 0x1.0c6f7ap-20 1": the format's name (warpforge.quantize's), eps, normalize.
  static std::string key(const Options& o);
  static Options parse(const std::string& text);
};

// "rms" or "layer"; OpsError naming the value otherwise.
ops::NormKind norm_kind_named(const std::string& kind);

}  // namespace warpforge::python
