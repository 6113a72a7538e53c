// The sm80 forward kernel (sm80_forward_kernel.cpp) behind AttentionPath.
#include "attention_path.hpp"
#include "sm80_forward_kernel.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Device;

class Sm80ForwardLaunch final : public AttentionLaunch {
 public:
  Sm80ForwardLaunch(const Device& device, const AttentionProblem& p, const Sm80AttentionSpec& spec)
      : p_(p), spec_(spec), module_(device, build_sm80_attention_forward(spec)) {}

  void run(const AttentionAddresses& at, runtime::Stream* stream) override {
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    runtime::LaunchConfig launch{
        .grid = {u32((p_.seq_q + spec_.block_m - 1) / spec_.block_m), u32(p_.heads_q), u32(p_.batch)},
        .block = {u32(spec_.threads())},
        .dynamic_shared_bytes = u32(spec_.shared_bytes()),
    };
    // Pointers the kernel does not read (no lse, dense) take O's address.
    const auto pointer = [&](runtime::DevicePtr a) { return runtime::Arg::pointer(a ? a : at[3]); };
    std::vector<runtime::Arg> args = {pointer(at[0]), pointer(at[1]), pointer(at[2]), pointer(at[3]), pointer(at[4]),
                                      pointer(at[5]), pointer(at[6]), u32(p_.seq_q), u32(p_.seq_k), u32(p_.group())};
    for (const AttentionStrides& s : {p_.q, p_.k, p_.v, p_.o, p_.lse})
      for (std::int64_t v : {s.batch, s.head, s.row}) args.emplace_back(u64(v));
    args.emplace_back(p_.scale_log2());
    args.emplace_back(static_cast<std::int32_t>(p_.window_left));
    args.emplace_back(static_cast<std::int32_t>(p_.window_right));
    module_.launch(spec_.kernel_name(), launch, args, stream);
  }

 private:
  AttentionProblem p_;
  Sm80AttentionSpec spec_;
  runtime::Module module_;
};

class Sm80ForwardPath final : public AttentionPath {
 public:
  AttentionKernel kind() const override { return AttentionKernel::sm80; }

  std::vector<std::string> refusals(const AttentionProblem& p, const Device& device) const override {
    std::vector<std::string> why;
    const Sm80AttentionSpec spec = sm80_attention_spec(p);
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    if (limit && static_cast<std::size_t>(spec.shared_bytes()) > limit)
      why.push_back("head_dim " + std::to_string(p.head_dim) + " stages Q, K and V tiles of " +
                    std::to_string(spec.shared_bytes()) + " bytes of shared memory; device '" +
                    device.properties().name + "' allows " + std::to_string(limit) + " per block");
    if (p.batch > 65535)  // grid.z (CUDA driver API cuLaunchKernel)
      why.push_back("batch = " + std::to_string(p.batch) + "; the sm80 kernel runs at most 65535 (grid.z)");
    if (p.heads_q > 65535)
      why.push_back("heads_q = " + std::to_string(p.heads_q) + "; the sm80 kernel runs at most 65535 (grid.y)");
    return why;
  }

  std::string configuration(const AttentionProblem& p, const Device& /*device*/) const override {
    const Sm80AttentionSpec spec = sm80_attention_spec(p);
    return std::to_string(spec.block_m) + "x" + std::to_string(spec.block_n) + " blocks, " +
           std::to_string(spec.warps()) + " warps, " + std::to_string(spec.shared_bytes()) +
           " bytes of shared memory";
  }

  std::unique_ptr<AttentionLaunch> compile(const AttentionProblem& p, const Device& device) const override {
    return std::make_unique<Sm80ForwardLaunch>(device, p, sm80_attention_spec(p));
  }
};

}  // namespace

const AttentionPath& sm80_attention_path() {
  static const Sm80ForwardPath path;
  return path;
}

}  // namespace warpforge::ops
