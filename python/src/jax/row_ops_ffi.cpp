// The XLA FFI handler behind warpforge.jax's row ops (warpforge/jax_rows.py):
// one typed handler for every row op (row_ops.hpp), for the CUDA platform (on
// XLA's stream) and the CPU platform (the simulator). Attributes: `op` (the
// Traits' name), `present` (a bit a role, in the op's role order, for the
// tensors the call has), `options` (the op's options as Traits::key writes
// them). Arguments are the present input roles and results the present
// output roles, each in role order, dense row-major; a role an op updates in
// place (Traits::kInPlace) is both, the call aliasing the two.
#include <nanobind/nanobind.h>

#include <string>
#include <string_view>

#include "../bindings.hpp"
#include "../row_ops.hpp"
#include "ffi_buffers.hpp"

namespace ffi = xla::ffi;
namespace nb = nanobind;

namespace warpforge::python {
namespace {

// The roles an op reads and writes in place (an input the call aliases to a result).
template <class Traits>
constexpr std::uint64_t in_place() {
  if constexpr (requires { Traits::kInPlace; })
    return Traits::kInPlace;
  else
    return 0;
}

template <class Traits>
void run_row_op(const runtime::Device& device, runtime::Stream* stream, const ffi::RemainingArgs& args,
                const ffi::RemainingRets& rets, std::int64_t present, std::string_view options) {
  CallBuffers buffers(device);
  OptionalViews views;
  std::size_t arg = 0, ret = 0;
  for (std::size_t i = 0; i < Traits::kRoles.size(); ++i) {
    if (!((present >> i) & 1)) {
      views.emplace_back(std::nullopt);
      continue;
    }
    const char* role = Traits::kRoles[i];
    if ((Traits::kOutputs >> i) & 1) {
      if ((in_place<Traits>() >> i) & 1) ++arg;  // the aliased input: the result's buffer is the same
      auto b = rets.get<ffi::AnyBuffer>(ret++);
      if (b.has_error()) throw OpsError(std::string(Traits::kName) + ": no result for " + role);
      views.emplace_back(buffers.dense(*b.value(), role));
    } else {
      auto b = args.get<ffi::AnyBuffer>(arg++);
      if (b.has_error()) throw OpsError(std::string(Traits::kName) + ": no argument for " + role);
      views.emplace_back(buffers.dense(b.value(), role));
    }
  }
  cached_row_op<Traits>(views, Traits::parse(std::string(options)))->run(views, stream);
}

ffi::Error row_op(const runtime::Device& device, runtime::Stream* stream, const ffi::RemainingArgs& args,
                  const ffi::RemainingRets& rets, std::string_view op, std::int64_t present,
                  std::string_view options) {
  return refusal_as_invalid_argument([&] {
    if (op == NormTraits::kName)
      run_row_op<NormTraits>(device, stream, args, rets, present, options);
    else if (op == NormBackwardTraits::kName)
      run_row_op<NormBackwardTraits>(device, stream, args, rets, present, options);
    else if (op == SoftmaxTraits::kName)
      run_row_op<SoftmaxTraits>(device, stream, args, rets, present, options);
    else if (op == SoftmaxBackwardTraits::kName)
      run_row_op<SoftmaxBackwardTraits>(device, stream, args, rets, present, options);
    else if (op == SwigluTraits::kName)
      run_row_op<SwigluTraits>(device, stream, args, rets, present, options);
    else if (op == SwigluBackwardTraits::kName)
      run_row_op<SwigluBackwardTraits>(device, stream, args, rets, present, options);
    else if (op == CrossEntropyTraits::kName)
      run_row_op<CrossEntropyTraits>(device, stream, args, rets, present, options);
    else if (op == CrossEntropyScaleTraits::kName)
      run_row_op<CrossEntropyScaleTraits>(device, stream, args, rets, present, options);
    else if (op == NormQuantizeTraits::kName)
      run_row_op<NormQuantizeTraits>(device, stream, args, rets, present, options);
    else
      throw OpsError("no row op '" + std::string(op) + "'");
  });
}

ffi::Error row_op_cuda(void* stream, std::int32_t ordinal, ffi::RemainingArgs args, ffi::RemainingRets rets,
                       std::string_view op, std::int64_t present, std::string_view options) {
  return on_xla_stream(stream, ordinal, [&](const runtime::Device& device, runtime::Stream* s) {
    return row_op(device, s, args, rets, op, present, options);
  });
}

ffi::Error row_op_host(ffi::RemainingArgs args, ffi::RemainingRets rets, std::string_view op, std::int64_t present,
                       std::string_view options) {
  return row_op(simulator(), nullptr, args, rets, op, present, options);
}

template <class Binding>
auto row_op_signature(Binding binding) {
  return std::move(binding)
      .RemainingArgs()
      .RemainingRets()
      .template Attr<std::string_view>("op")
      .template Attr<std::int64_t>("present")
      .template Attr<std::string_view>("options");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(kRowOpCuda, row_op_cuda, row_op_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kRowOpHost, row_op_host, row_op_signature(ffi::Ffi::Bind()));

void bind_jax_row_ops(nb::module_& m) {
  nb::dict targets;
  targets["cuda"] = handler_capsule(kRowOpCuda);
  targets["cpu"] = handler_capsule(kRowOpHost);
  m.attr("jax_row_op_targets") = targets;
}

}  // namespace warpforge::python
