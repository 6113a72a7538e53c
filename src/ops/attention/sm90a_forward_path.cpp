// The sm90a forward design (sm90a_forward_kernel.cpp) behind AttentionPath:
// its TMA maps (sm90a_tensor_map.hpp) and its launch.
#include <algorithm>
#include <limits>

#include "attention_path.hpp"
#include "sm90a_forward_kernel.hpp"
#include "sm90a_tensor_map.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Device;

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The kernel's units of work: blocks of block_m() query rows of each head of each
// sequence (of the longest, varlen), or pairs of them (paired).
struct QueryItems {
  std::int64_t blocks, items;
};
QueryItems query_items(const AttentionProblem& p, const Sm90aAttentionSpec& spec) {
  const std::int64_t blocks = (p.seq_q + spec.block_m() - 1) / spec.block_m();
  return {blocks, (spec.paired ? (blocks + 1) / 2 : blocks) * p.heads_q * p.batch};
}

// CTAs: persistent ones (the spec's choice) one an SM (the consumers take
// the register file), each CTA's next item's Q and K/V
// loaded under its last block and epilogue; otherwise one an item (items of
// unequal work, which a fixed stride would share out unevenly), the longest
// first, as the GPU hands CTAs to free SMs.
std::int64_t ctas(const QueryItems& work, const Sm90aAttentionSpec& spec, const Device& device) {
  return spec.persistent ? std::min<std::int64_t>(work.items, std::max(device.properties().sm_count, 1)) : work.items;
}

class Sm90aForwardLaunch final : public AttentionLaunch {
 public:
  Sm90aForwardLaunch(const Device& device, const AttentionProblem& p, const Sm90aAttentionSpec& spec)
      : p_(p), spec_(spec), device_(device), module_(device, build_sm90a_attention_forward(spec)) {}

  void run(const AttentionTensors& t, runtime::Stream* stream) override {
    const std::int64_t rows_q = p_.varlen ? p_.total_q : p_.seq_q, rows_k = p_.varlen ? p_.total_k : p_.seq_k;
    const std::int64_t batch = p_.varlen ? 1 : p_.batch;
    const auto mq = attention_tensor_map(device_, t.q, p_.q, rows_q, p_.heads_q, batch, p_.head_dim, u32(spec_.block_m()));
    const auto mk = attention_tensor_map(device_, t.k, p_.k, rows_k, p_.heads_kv, batch, p_.head_dim, u32(spec_.block_n));
    const auto mv = attention_tensor_map(device_, t.v, p_.v, rows_k, p_.heads_kv, batch, p_.head_dim, u32(spec_.block_n));
    std::vector<runtime::Arg> args = {runtime::Arg::bytes_of(mq), runtime::Arg::bytes_of(mk), runtime::Arg::bytes_of(mv),
                                      t.o, t.lse ? runtime::Arg(*t.lse) : runtime::Arg(t.o),
                                      t.cu_seqlens_q ? runtime::Arg(*t.cu_seqlens_q) : runtime::Arg(t.o),
                                      t.cu_seqlens_k ? runtime::Arg(*t.cu_seqlens_k) : runtime::Arg(t.o),
                                      u32(p_.seq_q), u32(p_.seq_k), u32(p_.group())};
    for (const AttentionStrides& s : {p_.o, p_.lse})
      for (std::int64_t v : {s.batch, s.head, s.row}) args.emplace_back(static_cast<std::uint64_t>(v));
    args.emplace_back(p_.scale_log2());
    args.emplace_back(static_cast<std::int32_t>(p_.window_left));
    args.emplace_back(static_cast<std::int32_t>(p_.window_right));
    const QueryItems work = query_items(p_, spec_);
    for (std::int64_t v : {work.items, work.blocks, p_.heads_q}) args.emplace_back(u32(v));
    module_.launch(spec_.kernel_name(),
                   {.grid = {u32(ctas(work, spec_, device_))},
                    .block = {u32(spec_.threads())},
                    .dynamic_shared_bytes = spec_.shared_bytes()},
                   args, stream);
  }

 private:
  AttentionProblem p_;
  Sm90aAttentionSpec spec_;
  Device device_;
  runtime::Module module_;
};

class Sm90aForwardPath final : public AttentionPath {
 public:
  AttentionKernel kind() const override { return AttentionKernel::sm90a; }

  std::vector<std::string> refusals(const AttentionProblem& p, const Device& device) const override {
    std::vector<std::string> why;
    // wgmma and setmaxnreg exist only on sm_90a (PTX ISA 9.7.15, 9.7.19.5).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device " + device.describe() + " runs " + std::string(ptx::name(device.target())) +
                    "; the sm90a kernel needs sm_90a (compute capability 9.0)");
    const Sm90aAttentionSpec spec = sm90a_attention_spec(p);
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    if (limit && spec.shared_bytes() > limit)
      why.push_back("head_dim " + std::to_string(p.head_dim) + " stages " + std::to_string(spec.shared_bytes()) +
                    " bytes of shared memory; device '" + device.properties().name + "' allows " +
                    std::to_string(limit) + " per block");
    const std::int64_t items = query_items(p, spec).items;
    if (items > std::numeric_limits<std::int32_t>::max())
      why.push_back(std::to_string(query_items(p, spec).blocks) + " blocks of " + std::to_string(spec.block_m()) +
                    " queries x heads_q " +
                    std::to_string(p.heads_q) + " x batch " + std::to_string(p.batch) + " = " +
                    std::to_string(items) + " work units; the sm90a kernel counts at most 2^31 - 1 (u32 "
                    "indices, the grid's x)");
    return why;
  }

  std::string configuration(const AttentionProblem& p, const Device& /*device*/) const override {
    const Sm90aAttentionSpec s = sm90a_attention_spec(p);
    return std::to_string(s.block_m()) + " query rows x " + std::to_string(s.block_n) + "-key blocks (" +
           (s.paired ? "persistent CTAs, one an SM, over pairs of a head's last and first" :
            s.persistent ? "persistent CTAs, one an SM" : "a CTA each, the longest first") + "), " +
           std::to_string(s.stages) + " TMA stages of K and of V (separate rings), " + std::to_string(s.q_buffers()) +
           " Q buffer(s), " + std::to_string(s.consumers) + " consumer warpgroups in ping-pong, each block's softmax under the last one's P·V, " +
           std::to_string(s.shared_bytes()) +
           " bytes of shared memory";
  }

  std::unique_ptr<AttentionLaunch> compile(const AttentionProblem& p, const Device& device) const override {
    return std::make_unique<Sm90aForwardLaunch>(device, p, sm90a_attention_spec(p));
  }
};

}  // namespace

const AttentionPath& sm90a_attention_path() {
  static const Sm90aForwardPath path;
  return path;
}

}  // namespace warpforge::ops
