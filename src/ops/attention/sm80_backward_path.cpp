// The sm80 backward kernels (sm80_backward_kernels.cpp) behind
// AttentionBackwardPath: their workspace and their launches in order.
#include "attention_path.hpp"
#include "sm80_backward_kernels.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Arg;
using runtime::Device;

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

class Sm80BackwardLaunch final : public AttentionBackwardLaunch {
 public:
  Sm80BackwardLaunch(const Device& device, const AttentionProblem& p, const Sm80BackwardSpec& spec)
      : p_(p),
        spec_(spec),
        rows_(device, build_sm80_backward_rows(spec)),
        kv_(device, build_sm80_backward_kv(spec)),
        dq_(device, spec.deterministic ? build_sm80_backward_dq(spec) : build_sm80_backward_finish(spec)) {}

  void run(const AttentionBackwardTensors& t, runtime::DevicePtr workspace, runtime::Stream* stream) override {
    const Arg cu_q = t.cu_seqlens_q ? Arg(*t.cu_seqlens_q) : Arg(t.q);  // unread when dense
    const Arg cu_k = t.cu_seqlens_k ? Arg(*t.cu_seqlens_k) : Arg(t.q);
    const Arg delta = Arg::pointer(workspace);
    const Arg dq_accum = Arg::pointer(spec_.deterministic ? workspace : workspace + dq_accum_offset(p_));
    // The parameters every kernel takes after its pointers (sm80_backward_kernels.hpp).
    auto common = [&](std::vector<Arg> args, std::initializer_list<const AttentionStrides*> strides) {
      for (std::int64_t v : {p_.seq_q, p_.seq_k, p_.group(), static_cast<std::int64_t>(backward_rows_q(p_)), p_.heads_q})
        args.emplace_back(u32(v));
      for (const AttentionStrides* st : strides)
        for (std::int64_t v : {st->batch, st->head, st->row}) args.emplace_back(static_cast<std::uint64_t>(v));
      args.emplace_back(static_cast<float>(p_.scale));
      args.emplace_back(p_.scale_log2());
      args.emplace_back(static_cast<std::int32_t>(p_.window_left));
      args.emplace_back(static_cast<std::int32_t>(p_.window_right));
      return args;
    };
    const runtime::LaunchConfig rows{.grid = {u32((p_.seq_q + 63) / 64), u32(p_.heads_q), u32(p_.batch)},
                                     .block = {128}};
    rows_.launch(spec_.name("rows"), rows, common({t.o, t.d_o, cu_q, delta, dq_accum}, {&p_.o, &p_.d_o}), stream);
    kv_.launch(spec_.name("kv"),
               {.grid = {u32((p_.seq_k + spec_.block_n - 1) / spec_.block_n), u32(p_.heads_kv), u32(p_.batch)},
                .block = {128},
                .dynamic_shared_bytes = u32(spec_.kv_shared_bytes())},
               common({t.q, t.k, t.v, t.d_o, t.lse, t.dk, t.dv, cu_q, cu_k, delta, dq_accum},
                      {&p_.q, &p_.k, &p_.v, &p_.d_o, &p_.lse, &p_.dk, &p_.dv}),
               stream);
    if (spec_.deterministic)
      dq_.launch(spec_.name("dq"),
                 {.grid = rows.grid, .block = {128}, .dynamic_shared_bytes = u32(spec_.dq_shared_bytes())},
                 common({t.q, t.k, t.v, t.d_o, t.lse, t.dq, cu_q, cu_k, delta},
                        {&p_.q, &p_.k, &p_.v, &p_.d_o, &p_.lse, &p_.dq}),
                 stream);
    else
      dq_.launch(spec_.name("finish"), rows, common({dq_accum, t.dq, cu_q}, {&p_.dq}), stream);
  }

 private:
  AttentionProblem p_;
  Sm80BackwardSpec spec_;
  runtime::Module rows_, kv_, dq_;
};

class Sm80BackwardPath final : public AttentionBackwardPath {
 public:
  AttentionKernel kind() const override { return AttentionKernel::sm80; }

  std::vector<std::string> refusals(const AttentionProblem& p, const Device& device) const override {
    std::vector<std::string> why;
    const Sm80BackwardSpec spec = sm80_backward_spec(p);
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    const int bytes = std::max(spec.kv_shared_bytes(), spec.deterministic ? spec.dq_shared_bytes() : 0);
    if (limit && static_cast<std::size_t>(bytes) > limit)
      why.push_back("head_dim " + std::to_string(p.head_dim) + " stages " + std::to_string(bytes) +
                    " bytes of shared memory; device '" + device.properties().name + "' allows " +
                    std::to_string(limit) + " per block");
    if (p.batch > 65535 || p.heads_q > 65535)
      why.push_back("batch " + std::to_string(p.batch) + ", heads_q " + std::to_string(p.heads_q) +
                    "; the sm80 backward runs at most 65535 of each (the grid's z and y)");
    // The workspace indexes (row·heads_q + head)·head_dim in 32 bits.
    if (backward_rows_q(p) * static_cast<std::size_t>(p.heads_q * p.head_dim) >= (std::size_t{1} << 32))
      why.push_back("rows_q x heads_q x head_dim = " +
                    std::to_string(backward_rows_q(p) * static_cast<std::size_t>(p.heads_q * p.head_dim)) +
                    "; the sm80 backward indexes its workspace in 32 bits");
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
