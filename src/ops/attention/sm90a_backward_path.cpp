// The sm90a backward (sm90a_backward_kernel.cpp) behind
// AttentionBackwardPath: the sm80 rows pass, the sm90a dK/dV kernel (its
// TMA maps made for each run: sm90a_tensor_map.hpp, and dq_accum's here),
// then the sm80 finish or dq pass (sm80_backward_passes.hpp). It takes
// head_dim 64, 128 and 256.
#include <algorithm>

#include "attention_path.hpp"
#include "sm80_backward_passes.hpp"
#include "sm90a_backward_kernel.hpp"
#include "sm90a_tensor_map.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Arg;
using runtime::Device;

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The workspace's f32 dQ sums (dq_accum: rows x heads x head_dim, dense) for
// the kernel's TMA reduce-adds, head_dim as groups of 8 columns (32 bytes):
// dims (8 columns, rows, head_dim/8 groups, heads), the rows' stride ahead
// of the groups' (a map's strides need no order), so that a box of 64 rows
// by `box_columns`/8 groups of one head lies in shared memory group by
// group, each 64 rows of 32 bytes; no swizzle.
runtime::TensorMap dq_accum_tensor_map(const Device& device, runtime::DevicePtr address, std::int64_t rows,
                                       std::int64_t heads, std::int64_t head_dim, std::uint32_t box_columns) {
  const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  return runtime::make_tensor_map(device, {.dtype = runtime::DType::f32,
                                           .address = address,
                                           .dims = {8, u64(rows), u64(head_dim / 8), u64(heads)},
                                           .strides_bytes = {u64(heads * head_dim * 4), 32, u64(head_dim * 4)},
                                           .box = {8, 64, box_columns / 8, 1},
                                           .swizzle = runtime::TensorMapSwizzle::none});
}

class Sm90aBackwardLaunch final : public AttentionBackwardLaunch {
 public:
  Sm90aBackwardLaunch(const Device& device, const AttentionProblem& p, const Sm90aBackwardSpec& spec)
      : p_(p), spec_(spec), device_(device), passes_(device, p), kv_(device, build_sm90a_backward_kv(spec)) {}

  void run(const AttentionBackwardTensors& t, runtime::DevicePtr workspace, runtime::Stream* stream) override {
    passes_.before(t, workspace, stream);
    const std::int64_t rows_q = p_.varlen ? p_.total_q : p_.seq_q, rows_k = p_.varlen ? p_.total_k : p_.seq_k;
    const std::int64_t batch = p_.varlen ? 1 : p_.batch;
    const std::uint32_t bm = static_cast<std::uint32_t>(spec_.block_m), bn = static_cast<std::uint32_t>(spec_.block_n);
    const auto mq = attention_tensor_map(device_, t.q, p_.q, rows_q, p_.heads_q, batch, p_.head_dim, bm);
    const auto mk = attention_tensor_map(device_, t.k, p_.k, rows_k, p_.heads_kv, batch, p_.head_dim, bn);
    const auto mv = attention_tensor_map(device_, t.v, p_.v, rows_k, p_.heads_kv, batch, p_.head_dim, bn);
    const auto mdo = attention_tensor_map(device_, t.d_o, p_.d_o, rows_q, p_.heads_q, batch, p_.head_dim, bm);
    // (Deterministic mode has no dq_accum: the map, unread, names the workspace.)
    const auto mdq = dq_accum_tensor_map(device_, p_.deterministic ? workspace : workspace + dq_accum_offset(p_),
                                         static_cast<std::int64_t>(backward_rows_q(p_)), p_.heads_q, p_.head_dim,
                                         static_cast<std::uint32_t>(spec_.dq_columns()));
    const BackwardArgs a(p_, t, workspace);
    const std::uint32_t key_blocks = u32((p_.seq_k + bn - 1) / bn);
    std::vector<Arg> args = a.common({Arg::bytes_of(mq), Arg::bytes_of(mk), Arg::bytes_of(mv), Arg::bytes_of(mdo),
                                      Arg::bytes_of(mdq), t.lse, t.dk, t.dv, a.cu_q, a.cu_k, a.delta, a.dq_accum},
                                     {&p_.lse, &p_.dk, &p_.dv});
    // About a wave of CTAs a group: the key blocks of as many (head,
    // sequence) pairs as the SMs hold (one CTA an SM).
    const int sms = device_.properties().sm_count;
    args.emplace_back(std::max<std::uint32_t>(1, u32(sms) / key_blocks));
    kv_.launch(spec_.kernel_name(),
               {.grid = {u32(p_.heads_kv * p_.batch), key_blocks},
                .block = {u32(spec_.threads())},
                .dynamic_shared_bytes = spec_.shared_bytes()},
               std::move(args), stream);
    passes_.after(t, workspace, stream);
  }

 private:
  AttentionProblem p_;
  Sm90aBackwardSpec spec_;
  Device device_;
  Sm80BackwardPasses passes_;
  runtime::Module kv_;
};

class Sm90aBackwardPath final : public AttentionBackwardPath {
 public:
  AttentionKernel kind() const override { return AttentionKernel::sm90a; }

  std::vector<std::string> refusals(const AttentionProblem& p, const Device& device) const override {
    std::vector<std::string> why = Sm80BackwardPasses::refusals(p, device);
    // wgmma and setmaxnreg exist only on sm_90a (PTX ISA 9.7.15, 9.7.19.5).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device " + device.describe() + " runs " + std::string(ptx::name(device.target())) +
                    "; the sm90a backward needs sm_90a (compute capability 9.0)");
    const Sm90aBackwardSpec spec = sm90a_backward_spec(p);
    if ((p.seq_k + spec.block_n - 1) / spec.block_n > 65535)
      why.push_back("seq_k " + std::to_string(p.seq_k) + "; the sm90a backward runs at most 65535 key blocks of " +
                    std::to_string(spec.block_n) + " (the grid's y)");
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    if (limit && spec.shared_bytes() > limit)
      why.push_back("head_dim " + std::to_string(p.head_dim) + " stages " + std::to_string(spec.shared_bytes()) +
                    " bytes of shared memory; device '" + device.properties().name + "' allows " +
                    std::to_string(limit) + " per block");
    return why;
  }

  std::string configuration(const AttentionProblem& p, const Device& /*device*/) const override {
    const Sm90aBackwardSpec s = sm90a_backward_spec(p);
    return std::to_string(s.block_n) +
           (s.splits_columns() ? "-key blocks (each warpgroup half of dK's and dV's columns) against "
                               : "-key blocks (a warpgroup's 64 each) against ") +
           std::to_string(s.block_m) + "-query blocks, " +
           std::to_string(s.stages) +
           " TMA stages of Q and dO, " +
           (s.deterministic ? "dQ in a pass of its own (deterministic)"
                           : s.dq_by_tma_reduce() ? "dQ added by TMA reduce-adds (cp.reduce.async.bulk.tensor) from two writer lanes"
                                                  : "dQ added with f32 atomics by two writer warps") +
           ", " +
           std::to_string(s.shared_bytes()) + " bytes of shared memory";
  }

  std::size_t workspace_bytes(const AttentionProblem& p) const override { return backward_workspace_bytes(p); }

  std::unique_ptr<AttentionBackwardLaunch> compile(const AttentionProblem& p, const Device& device) const override {
    return std::make_unique<Sm90aBackwardLaunch>(device, p, sm90a_backward_spec(p));
  }
};

}  // namespace

const AttentionBackwardPath& sm90a_attention_backward_path() {
  static const Sm90aBackwardPath path;
  return path;
}

}  // namespace warpforge::ops
