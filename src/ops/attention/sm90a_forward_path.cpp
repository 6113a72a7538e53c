// The sm90a forward design (sm90a_forward_kernel.cpp) behind AttentionPath:
// its TMA maps (sm90a_tensor_map.hpp) and its launch.
#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

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

// The launch is built once: a run replaces the data addresses in the
// arguments, and Q's, K's and V's TMA maps are kept by the tensor's address
// (each encoding is a check of the description and a cuTensorMapEncodeTiled
// call: host time a call, docs/experiments/2026-11-30-attention-host.md). A
// model's layers, and torch's caching allocator handing the same blocks
// back call after call, make a few addresses recur; at most kMapsKept are
// kept an operand, then the maps are made afresh.
class Sm90aForwardLaunch final : public AttentionLaunch {
 public:
  Sm90aForwardLaunch(const Device& device, const AttentionProblem& p, const Sm90aAttentionSpec& spec)
      : p_(p), spec_(spec), device_(device), module_(device, build_sm90a_attention_forward(spec)),
        kernel_(module_.prepare(spec.kernel_name())) {
    const QueryItems work = query_items(p_, spec_);
    config_ = {.grid = {u32(ctas(work, spec_, device_))},
               .block = {u32(spec_.threads())},
               .dynamic_shared_bytes = spec_.shared_bytes()};
    // The maps and pointers (kMaps + kPointers) come with each run.
    args_.assign(kMaps, runtime::Arg::bytes_of(runtime::TensorMap{}));
    args_.resize(kMaps + kPointers, runtime::Arg::pointer(0));
    for (std::int64_t v : {p_.seq_q, p_.seq_k, p_.group()}) args_.emplace_back(u32(v));
    for (const AttentionStrides& s : {p_.o, p_.lse})
      for (std::int64_t v : {s.batch, s.head, s.row}) args_.emplace_back(static_cast<std::uint64_t>(v));
    args_.emplace_back(p_.scale_log2());
    args_.emplace_back(static_cast<std::int32_t>(p_.window_left));
    args_.emplace_back(static_cast<std::int32_t>(p_.window_right));
    for (std::int64_t v : {work.items, work.blocks, p_.heads_q}) args_.emplace_back(u32(v));
  }

  void run(const AttentionAddresses& at, runtime::Stream* stream) override {
    const std::int64_t rows_q = p_.varlen ? p_.total_q : p_.seq_q, rows_k = p_.varlen ? p_.total_k : p_.seq_k;
    const std::int64_t batch = p_.varlen ? 1 : p_.batch;
    const struct {
      const AttentionStrides& strides;
      std::int64_t rows, heads;
      std::uint32_t box_rows;
    } maps[kMaps] = {{p_.q, rows_q, p_.heads_q, u32(spec_.block_m())},
                     {p_.k, rows_k, p_.heads_kv, u32(spec_.block_n)},
                     {p_.v, rows_k, p_.heads_kv, u32(spec_.block_n)}};
    const auto encoded = [&](std::size_t i) {
      return runtime::Arg::bytes_of(attention_tensor_map(device_, at[i], p_.dtype, maps[i].strides, maps[i].rows,
                                                         maps[i].heads, batch, p_.head_dim, maps[i].box_rows));
    };
    std::lock_guard lock(mutex_);  // the arguments and maps are this launch's, shared by its runs
    for (std::size_t i = 0; i < kMaps; ++i) {
      auto found = kept_[i].find(at[i]);
      if (found == kept_[i].end()) {
        if (kept_[i].size() >= kMapsKept) kept_[i].clear();
        found = kept_[i].emplace(at[i], encoded(i)).first;
      }
      args_[i] = found->second;  // 128 bytes into the argument's own (no allocation)
    }
    // O, then lse and the offsets (O's address where absent: the kernel does not read them).
    for (std::size_t i = 0; i < kPointers; ++i) args_[kMaps + i] = runtime::Arg::pointer(at[3 + i] ? at[3 + i] : at[3]);
    kernel_.launch(config_, args_, stream);
  }

 private:
  static constexpr std::size_t kMaps = 3, kPointers = 4, kMapsKept = 64;
  AttentionProblem p_;
  Sm90aAttentionSpec spec_;
  Device device_;
  runtime::Module module_;
  runtime::PreparedLaunch kernel_;
  runtime::LaunchConfig config_;
  std::mutex mutex_;
  std::vector<runtime::Arg> args_;
  std::array<std::unordered_map<runtime::DevicePtr, runtime::Arg>, kMaps> kept_;  // Q's, K's, V's maps by address
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
