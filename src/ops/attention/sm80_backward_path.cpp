// The sm80 backward kernels (sm80_backward_kernels.cpp) behind
// AttentionBackwardPath: their workspace and their launches in order; the
// passes before and after the dK/dV kernel, which the sm90a backward shares
// (sm80_backward_passes.hpp).
#include "attention_path.hpp"
#include "sm80_backward_kernels.hpp"
#include "sm80_backward_passes.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Arg;
using runtime::Device;

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

class Sm80BackwardLaunch final : public AttentionBackwardLaunch {
 public:
  Sm80BackwardLaunch(const Device& device, const AttentionProblem& p, const Sm80BackwardSpec& spec)
      : p_(p), spec_(spec), passes_(device, p), kv_(device, build_sm80_backward_kv(spec)) {}

  void run(const AttentionBackwardTensors& t, runtime::DevicePtr workspace, runtime::Stream* stream) override {
    passes_.before(t, workspace, stream);
    const BackwardArgs a(p_, t, workspace);
    kv_.launch(spec_.name("kv"),
               {.grid = {u32((p_.seq_k + spec_.block_n - 1) / spec_.block_n), u32(p_.heads_kv), u32(p_.batch)},
                .block = {128},
                .dynamic_shared_bytes = u32(spec_.kv_shared_bytes())},
               a.common({t.q, t.k, t.v, t.d_o, t.lse, t.dk, t.dv, a.cu_q, a.cu_k, a.delta, a.dq_accum},
                        {&p_.q, &p_.k, &p_.v, &p_.d_o, &p_.lse, &p_.dk, &p_.dv}),
               stream);
    passes_.after(t, workspace, stream);
  }

 private:
  AttentionProblem p_;
  Sm80BackwardSpec spec_;
  Sm80BackwardPasses passes_;
  runtime::Module kv_;
};

}  // namespace

BackwardArgs::BackwardArgs(const AttentionProblem& p, const AttentionBackwardTensors& t, runtime::DevicePtr workspace)
    : cu_q(t.cu_seqlens_q ? Arg(*t.cu_seqlens_q) : Arg(t.q)),  // unread when dense
      cu_k(t.cu_seqlens_k ? Arg(*t.cu_seqlens_k) : Arg(t.q)),
      delta(Arg::pointer(workspace)),
      dq_accum(Arg::pointer(p.deterministic ? workspace : workspace + dq_accum_offset(p))),
      p_(p) {}

std::vector<Arg> BackwardArgs::common(std::vector<Arg> args,
                                      std::initializer_list<const AttentionStrides*> strides) const {
  for (std::int64_t v : {p_.seq_q, p_.seq_k, p_.group(), static_cast<std::int64_t>(backward_rows_q(p_)), p_.heads_q})
    args.emplace_back(u32(v));
  for (const AttentionStrides* st : strides)
    for (std::int64_t v : {st->batch, st->head, st->row}) args.emplace_back(static_cast<std::uint64_t>(v));
  args.emplace_back(static_cast<float>(p_.scale));
  args.emplace_back(p_.scale_log2());
  args.emplace_back(static_cast<std::int32_t>(p_.window_left));
  args.emplace_back(static_cast<std::int32_t>(p_.window_right));
  return args;
}

Sm80BackwardPasses::Sm80BackwardPasses(const Device& device, const AttentionProblem& p)
    : p_(p),
      spec_(sm80_backward_spec(p)),
      rows_(device, build_sm80_backward_rows(spec_)),
      dq_(device, spec_.deterministic ? build_sm80_backward_dq(spec_) : build_sm80_backward_finish(spec_)) {}

runtime::LaunchConfig Sm80BackwardPasses::rows_config() const {
  return {.grid = {u32((p_.seq_q + 63) / 64), u32(p_.heads_q), u32(p_.batch)}, .block = {128}};
}

void Sm80BackwardPasses::before(const AttentionBackwardTensors& t, runtime::DevicePtr workspace,
                                runtime::Stream* stream) {
  const BackwardArgs a(p_, t, workspace);
  rows_.launch(spec_.name("rows"), rows_config(), a.common({t.o, t.d_o, a.cu_q, a.delta, a.dq_accum}, {&p_.o, &p_.d_o}),
               stream);
}

void Sm80BackwardPasses::after(const AttentionBackwardTensors& t, runtime::DevicePtr workspace,
                               runtime::Stream* stream) {
  const BackwardArgs a(p_, t, workspace);
  if (spec_.deterministic)
    dq_.launch(spec_.name("dq"),
               {.grid = rows_config().grid, .block = {128}, .dynamic_shared_bytes = u32(spec_.dq_shared_bytes())},
               a.common({t.q, t.k, t.v, t.d_o, t.lse, t.dq, a.cu_q, a.cu_k, a.delta},
                        {&p_.q, &p_.k, &p_.v, &p_.d_o, &p_.lse, &p_.dq}),
               stream);
  else
    dq_.launch(spec_.name("finish"), rows_config(), a.common({a.dq_accum, t.dq, a.cu_q}, {&p_.dq}), stream);
}

std::vector<std::string> Sm80BackwardPasses::refusals(const AttentionProblem& p, const Device& device) {
  std::vector<std::string> why;
  const Sm80BackwardSpec spec = sm80_backward_spec(p);
  const std::size_t limit = device.properties().shared_bytes_per_block_optin;
  if (limit && spec.deterministic && static_cast<std::size_t>(spec.dq_shared_bytes()) > limit)
    why.push_back("head_dim " + std::to_string(p.head_dim) + " stages " + std::to_string(spec.dq_shared_bytes()) +
                  " bytes of shared memory in the deterministic dQ pass; device '" + device.properties().name +
                  "' allows " + std::to_string(limit) + " per block");
  if (p.batch > 65535 || p.heads_q > 65535)
    why.push_back("batch " + std::to_string(p.batch) + ", heads_q " + std::to_string(p.heads_q) +
                  "; the backward runs at most 65535 of each (the grid's z and y)");
  // The workspace indexes (row·heads_q + head)·head_dim in 32 bits.
  if (backward_rows_q(p) * static_cast<std::size_t>(p.heads_q * p.head_dim) >= (std::size_t{1} << 32))
    why.push_back("rows_q x heads_q x head_dim = " +
                  std::to_string(backward_rows_q(p) * static_cast<std::size_t>(p.heads_q * p.head_dim)) +
                  "; the backward indexes its workspace in 32 bits");
  return why;
}

namespace {

class Sm80BackwardPath final : public AttentionBackwardPath {
 public:
  AttentionKernel kind() const override { return AttentionKernel::sm80; }

  std::vector<std::string> refusals(const AttentionProblem& p, const Device& device) const override {
    std::vector<std::string> why = Sm80BackwardPasses::refusals(p, device);
    const Sm80BackwardSpec spec = sm80_backward_spec(p);
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    if (limit && static_cast<std::size_t>(spec.kv_shared_bytes()) > limit)
      why.push_back("head_dim " + std::to_string(p.head_dim) + " stages " + std::to_string(spec.kv_shared_bytes()) +
                    " bytes of shared memory; device '" + device.properties().name + "' allows " +
                    std::to_string(limit) + " per block");
    return why;
  }

  std::string configuration(const AttentionProblem& p, const Device& /*device*/) const override {
    const Sm80BackwardSpec s = sm80_backward_spec(p);
    return std::to_string(s.block_n) + "-key blocks against " + std::to_string(s.block_m) + "-query blocks, " +
           (s.deterministic ? "dQ in a pass of its own (deterministic)" : "dQ added with f32 atomics");
  }

  std::size_t workspace_bytes(const AttentionProblem& p) const override { return backward_workspace_bytes(p); }

  std::unique_ptr<AttentionBackwardLaunch> compile(const AttentionProblem& p, const Device& device) const override {
    return std::make_unique<Sm80BackwardLaunch>(device, p, sm80_backward_spec(p));
  }
};

}  // namespace

const AttentionBackwardPath& sm80_attention_backward_path() {
  static const Sm80BackwardPath path;
  return path;
}

}  // namespace warpforge::ops
