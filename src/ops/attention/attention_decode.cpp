// ops::AttentionDecode: the paged decode problem read off the views (with
// every reason it cannot run), the number of splits, the workspace of their
// partial results and their counters, and the launch of the decode kernel.
#include "warpforge/ops/attention_decode.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attention_problem.hpp"
#include "decode_kernel.hpp"
#include "decode_tma_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

struct DecodeProblem {
  DType dtype = DType::bf16;
  std::int64_t batch = 0, heads_q = 0, heads_kv = 0, q_tokens = 0, head_dim = 0;
  std::int64_t pages = 0, page_size = 0, pages_per_sequence = 0;
  std::vector<std::int64_t> q, k, v, o, lse;  // strides: (batch, head, row) or (page, slot, head)
  std::int64_t table_row = 0;
  bool has_lse = false;
  double scale = 1;
  bool causal = true;
  std::int64_t window_left = -1;

  std::string describe() const {
    return std::string(runtime::name(dtype)) + " b" + std::to_string(batch) + " hq" + std::to_string(heads_q) +
           " hkv" + std::to_string(heads_kv) + " tokens" + std::to_string(q_tokens) + " d" +
           std::to_string(head_dim) + " pages of " + std::to_string(page_size) + ", up to " +
           std::to_string(pages_per_sequence) + " a sequence" + (causal ? " causal" : "") +
           (window_left >= 0 ? " window_left " + std::to_string(window_left) : "");
  }
};

void check_matrix(const char* role, const TensorView& v, std::vector<std::string>& why) {
  if (v.dtype() != DType::bf16 && v.dtype() != DType::f16)
    why.push_back(std::string(role) + " is " + std::string(runtime::name(v.dtype())) + "; decode takes bf16 or f16");
  if (v.rank() != 4) return;
  if (v.strides()[3] != 1 && v.shape()[3] > 1)
    why.push_back(std::string(role) + "'s head_dim stride is " + std::to_string(v.strides()[3]) +
                  "; it must be 1 (head_dim contiguous)");
  for (int i = 0; i < 3; ++i)
    if (v.strides()[i] % 8 != 0 && v.shape()[i] > 1)
      why.push_back(std::string(role) + "'s stride " + std::to_string(v.strides()[i]) + " (dimension " +
                    std::to_string(i) + " of " + v.describe() +
                    ") is not a multiple of 8 elements; the kernels move 16-byte pieces");
  if (v.address() % 16 != 0) why.push_back(std::string(role) + " starts at an address that is not 16-byte aligned");
}

DecodeProblem read_problem(const AttentionDecodeTensors& t, const AttentionDecodeOptions& options,
                           std::vector<std::string>& why) {
  DecodeProblem p;
  for (auto [role, v] : {std::pair{"Q", &t.q}, {"k_cache", &t.k_cache}, {"v_cache", &t.v_cache}, {"O", &t.o}})
    if (v->rank() != 4)
      why.push_back(std::string(role) + " is " + v->describe() + "; decode takes rank 4 (" +
                    (v == &t.q || v == &t.o ? "batch, heads_q, q_tokens, head_dim" : "pages, page_size, heads_kv, head_dim") +
                    ")");
  for (auto [role, v] : {std::pair{"k_cache", &t.k_cache}, {"v_cache", &t.v_cache}, {"block_table", &t.block_table},
                         {"kv_lens", &t.kv_lens}, {"O", &t.o}})
    if (!(v->device() == t.q.device()))
      why.push_back(std::string(role) + " is on " + v->device().describe() + "; Q is on " + t.q.device().describe() +
                    ": every tensor must be on one device");
  if (!why.empty()) return p;
  check_matrix("Q", t.q, why);
  check_matrix("k_cache", t.k_cache, why);
  check_matrix("v_cache", t.v_cache, why);
  check_matrix("O", t.o, why);
  p.dtype = t.q.dtype();
  p.batch = t.q.shape()[0], p.heads_q = t.q.shape()[1], p.q_tokens = t.q.shape()[2], p.head_dim = t.q.shape()[3];
  p.pages = t.k_cache.shape()[0], p.page_size = t.k_cache.shape()[1], p.heads_kv = t.k_cache.shape()[2];
  for (auto [role, v] : {std::pair{"k_cache", &t.k_cache}, {"v_cache", &t.v_cache}, {"O", &t.o}})
    if (v->dtype() != p.dtype)
      why.push_back(std::string(role) + " is " + std::string(runtime::name(v->dtype())) + " and Q " +
                    std::string(runtime::name(p.dtype)) + "; they must be of one dtype");
  if (t.o.shape() != t.q.shape()) why.push_back("O is " + t.o.describe() + "; it must have Q's shape");
  if (t.v_cache.shape() != t.k_cache.shape())
    why.push_back("v_cache is " + t.v_cache.describe() + "; it must have k_cache's shape");
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    why.push_back("head_dim = " + std::to_string(p.head_dim) + "; decode takes 64, 128 or 256");
  if (t.k_cache.shape()[3] != p.head_dim)
    why.push_back("k_cache's head_dim is " + std::to_string(t.k_cache.shape()[3]) + " and Q's " +
                  std::to_string(p.head_dim) + "; they must be equal");
  if (p.heads_kv < 1 || p.heads_q % p.heads_kv != 0)
    why.push_back("heads_q = " + std::to_string(p.heads_q) + ", heads_kv = " + std::to_string(p.heads_kv) +
                  "; heads_kv must be >= 1 and divide heads_q (grouped-query attention)");
  else if (p.heads_q / p.heads_kv * p.q_tokens > 64)
    why.push_back("heads_q / heads_kv x q_tokens = " + std::to_string(p.heads_q / p.heads_kv * p.q_tokens) +
                  " rows a KV head; decode takes up to 64 (1 to 8 tokens at up to 8 query heads a KV head)");
  if (p.batch < 1 || p.heads_q < 1 || p.q_tokens < 1 || p.pages < 1 || p.page_size < 1)
    why.push_back("batch " + std::to_string(p.batch) + ", heads_q " + std::to_string(p.heads_q) + ", q_tokens " +
                  std::to_string(p.q_tokens) + ", pages " + std::to_string(p.pages) + ", page_size " +
                  std::to_string(p.page_size) + "; each must be >= 1");
  const TensorView& bt = t.block_table;
  if (bt.dtype() != DType::i32 || bt.rank() != 2 || bt.shape()[0] != p.batch || (bt.shape()[1] > 1 && bt.strides()[1] != 1))
    why.push_back("block_table is " + bt.describe() +
                  "; it must be i32 (batch, pages_per_sequence) with pages contiguous (stride 1)");
  else
    p.pages_per_sequence = bt.shape()[1], p.table_row = bt.strides()[0];
  const TensorView& lens = t.kv_lens;
  if (lens.dtype() != DType::i32 || lens.rank() != 1 || lens.shape()[0] != p.batch || (p.batch > 1 && lens.strides()[0] != 1))
    why.push_back("kv_lens is " + lens.describe() + "; it must be i32 (batch), contiguous");
  for (const TensorView* v : {&bt, &lens})
    if (v->address() % 4 != 0) why.push_back("block_table and kv_lens must be 4-byte aligned");
  if (t.lse) {
    p.has_lse = true;
    if (t.lse->dtype() != DType::f32 || t.lse->shape() != std::vector<std::int64_t>{p.batch, p.heads_q, p.q_tokens})
      why.push_back("lse is " + t.lse->describe() + "; it must be f32 (batch, heads_q, q_tokens)");
    else
      p.lse = t.lse->strides();
    if (!(t.lse->device() == t.q.device())) why.push_back("lse is on another device than Q");
  }
  p.q = {t.q.strides()[0], t.q.strides()[1], t.q.strides()[2]};
  p.o = {t.o.strides()[0], t.o.strides()[1], t.o.strides()[2]};
  p.k = {t.k_cache.strides()[0], t.k_cache.strides()[1], t.k_cache.strides()[2]};
  p.v = {t.v_cache.strides()[0], t.v_cache.strides()[1], t.v_cache.strides()[2]};
  if (p.lse.empty()) p.lse = {0, 0, 0};
  p.scale = options.scale.value_or(1.0 / std::sqrt(double(p.head_dim)));
  if (!std::isfinite(p.scale) || p.scale <= 0)
    why.push_back("scale = " + std::to_string(p.scale) + "; it must be finite and > 0");
  p.causal = options.causal;
  p.window_left = options.window_left;
  if (p.window_left < -1) why.push_back("window_left = " + std::to_string(p.window_left) + "; it is -1 or >= 0");
  if (options.splits < 0 || options.splits > 4096)
    why.push_back("splits = " + std::to_string(options.splits) + "; 0 (chosen) or 1 to 4096");
  if (p.batch > 65535 || p.heads_kv > 65535)
    why.push_back("batch " + std::to_string(p.batch) + ", heads_kv " + std::to_string(p.heads_kv) +
                  "; each at most 65535 (the grid's y and z)");
  return p;
}

// For experiments on a GPU (scripts/gpu-attn-decode.sh's sweep):
// WARPFORGE_DECODE_TILING=BLOCK_N,STAGES sets the keys a stage and the
// stages of every decode kernel compiled after it; a tiling the kernel
// cannot take is a refusal.
void tiling_from_environment(DecodeSpec& s, std::vector<std::string>& why) {
  const char* text = std::getenv("WARPFORGE_DECODE_TILING");
  if (!text || !*text) return;
  int block_n = 0, stages = 0;
  char end = 0;
  if (std::sscanf(text, "%d,%d%c", &block_n, &stages, &end) != 2 || block_n < 16 || block_n > 256 || stages < 2 ||
      stages > 8 || block_n % (16 * s.key_groups()) != 0) {
    why.push_back("WARPFORGE_DECODE_TILING '" + std::string(text) + "': expected BLOCK_N,STAGES, block_n a multiple of " +
                  std::to_string(16 * s.key_groups()) + " up to 256 (16 keys a warp of the " +
                  std::to_string(s.key_groups()) + " sharing a row tile), 2 to 8 stages");
    return;
  }
  s.block_n = block_n, s.stages = stages;
}

// Why the TMA-fed kernel cannot take the problem ("" where it can): it is
// sm_90a's, and its copies are of page_rows = min(page_size, block_n) keys,
// a power of two from 16 that divides the page and holds a warp's keys.
// WARPFORGE_DECODE_TMA=0 (GPU experiments) keeps the cp.async kernel.
std::string tma_refusal(const DecodeProblem& p, const DecodeSpec& s) {
  if (!s.sm90a) return "the device is not sm_90 (TMA and the template are sm_90a's)";
  if (const char* off = std::getenv("WARPFORGE_DECODE_TMA"); off && std::string(off) == "0")
    return "WARPFORGE_DECODE_TMA=0";
  const std::int64_t rows = std::min<std::int64_t>(p.page_size, s.block_n);
  if (rows < 16 || (rows & (rows - 1)) != 0 || p.page_size % rows != 0 || s.block_n % rows != 0)
    return "page_size " + std::to_string(p.page_size) + " is not 16, 32 or a multiple of " + std::to_string(s.block_n) +
           " (a TMA copy is a power of two of keys from 16 within a page)";
  if (rows < s.block_n / s.key_groups())
    return "pages of " + std::to_string(p.page_size) + " keys are shorter than a warp's " +
           std::to_string(s.block_n / s.key_groups()) + " keys of a block (" + std::to_string(s.rows()) +
           " rows a KV head)";
  return {};
}

// The TMA-fed kernel where it can run.
void take_tma(const DecodeProblem& p, DecodeSpec& s, std::string& why_not) {
  why_not = tma_refusal(p, s);
  if (!why_not.empty()) return;
  s.tma = true;
  s.page_rows = static_cast<int>(std::min<std::int64_t>(p.page_size, s.block_n));
}

// The TMA kernel's ring: up to 8 stages of a block's K and V in what one CTA
// an SM leaves beside Q (~200 KB).
void size_tma_ring(DecodeSpec& s) {
  if (!s.tma || std::getenv("WARPFORGE_DECODE_TILING")) return;
  const int taken = s.row_tiles() * 16 * s.head_dim * 2;
  s.stages = std::clamp(static_cast<int>(((200 << 10) - taken) / static_cast<int>(s.stage_bytes())), 2, 8);
}

DecodeSpec spec_for(const DecodeProblem& p, int splits, const runtime::DeviceProperties& device) {
  DecodeSpec s;
  s.dtype = p.dtype;
  s.head_dim = static_cast<int>(p.head_dim);
  s.group = static_cast<int>(p.heads_q / std::max<std::int64_t>(p.heads_kv, 1));
  s.q_tokens = static_cast<int>(p.q_tokens);
  // 64-key blocks; at head_dim 256 two stages of them fill the shared memory.
  s.block_n = 64;
  s.stages = p.head_dim == 256 ? 2 : 3;
  s.causal = p.causal;
  s.window_left = p.window_left >= 0;
  s.has_lse = p.has_lse;
  s.split_output = splits > 1;
  // sm_90a code runs on sm_90 devices only (arch-specific: PTX ISA 5.1):
  // other devices take the sm_80 build, without the L2 prefetch hint.
  s.sm90a = device.compute_capability_major == 9;
  return s;
}

}  // namespace

struct AttentionDecode::State {
  runtime::Device device;
  DecodeProblem problem;
  std::vector<std::string> refusals;
  std::vector<std::vector<std::int64_t>> shapes, strides;
  int splits = 1;
  DecodeSpec spec;
  bool caller_workspace = false;
  std::string no_tma;  // why the cp.async kernel runs ("" where the TMA-fed one does)
  std::optional<runtime::Module> module;
  std::optional<runtime::PreparedLaunch> kernel;  // found once: a launch looks nothing up by name
  std::optional<runtime::Buffer> workspace;
  // The launch, built by the first execute(); the TMA maps' arguments (the
  // last two) made again when a cache's address changes.
  runtime::LaunchConfig launch;
  std::vector<runtime::Arg> args;
  runtime::DevicePtr k_mapped = 0, v_mapped = 0;

  // The splits' partial O and lse, then a counter a (sequence, KV head).
  std::string no_workspace() const {
    return "no workspace given: with caller_workspace, execute() needs one of " + std::to_string(workspace_bytes()) +
           " bytes (workspace_bytes())";
  }
  std::size_t workspace_bytes() const {
    if (splits <= 1) return 0;
    return static_cast<std::size_t>(splits * problem.batch * problem.heads_q * problem.q_tokens *
                                        (problem.head_dim + 1) * 4 +
                                    problem.batch * problem.heads_kv * 4);
  }
};

namespace {
std::vector<const TensorView*> views_of(const AttentionDecodeTensors& t) {
  return {&t.q, &t.k_cache, &t.v_cache, &t.block_table, &t.kv_lens, &t.o, t.lse};
}

// A cache (pages, page_size, heads_kv, head_dim) as the TMA kernel's map
// (decode_tma_kernel.hpp): 64 elements, the slot, the 64-element panel, the
// head, the page; a box lands as page_rows rows of each 128-byte panel. L2
// promotion 128 bytes, a box row: a slot's 256 bytes of a head are a box's
// two panels, read page_rows rows apart, and at 256 (the maps' default) L2
// fetched both on the first and looked the second up again (H200, s8 gpu-w2:
// 1.75 lookups a sector read against 1.50, 128k keys 0.91 of the floor
// against 0.97 at 128 in the same run).
runtime::TensorMap cache_map(const runtime::Device& device, const DecodeProblem& p, int page_rows,
                             runtime::DevicePtr cache, const std::vector<std::int64_t>& strides) {
  // A stride of a dimension of extent 1 is never stepped: any multiple of 16 will do.
  const auto bytes = [](std::int64_t elements, std::int64_t extent) {
    return extent > 1 ? static_cast<std::uint64_t>(elements * 2) : std::uint64_t{16};
  };
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  return runtime::make_tensor_map(
      device, {.dtype = p.dtype,
                 .address = cache,
                 .dims = {64, u(p.page_size), u(p.head_dim / 64), u(p.heads_kv), u(p.pages)},
                 .strides_bytes = {bytes(strides[1], p.page_size), 128, bytes(strides[2], p.heads_kv),
                                   bytes(strides[0], p.pages)},
                 .box = {64, static_cast<std::uint32_t>(page_rows), static_cast<std::uint32_t>(p.head_dim / 64), 1, 1},
                 .swizzle = runtime::TensorMapSwizzle::b128,
                 .l2_promotion = runtime::TensorMapL2Promotion::b128});
}
}  // namespace

AttentionDecode::AttentionDecode(const AttentionDecodeTensors& t, AttentionDecodeOptions options)
    : state_(std::make_unique<State>(State{t.q.device()})) {
  State& s = *state_;
  s.problem = read_problem(t, options, s.refusals);
  s.caller_workspace = options.caller_workspace;
  for (const TensorView* v : views_of(t)) {
    s.shapes.push_back(v ? v->shape() : std::vector<std::int64_t>{});
    s.strides.push_back(v ? v->strides() : std::vector<std::int64_t>{});
  }
  if (!s.refusals.empty()) return;
  const DecodeProblem& p = s.problem;
  // Enough CTAs that every SM streams, in one whole wave: batch x heads_kv x
  // splits at most twice the SMs (two CTAs an SM by shared memory), each
  // split of at least one 64-key block of the cache. Rounding up instead left
  // a partial second wave (batch 8, 8 KV heads: 5 splits, 320 CTAs in 264
  // slots, 0.50 of the read floor on an H200 at every length).
  // The TMA-fed kernel holds one CTA an SM (its ring), the cp.async one two.
  s.spec = spec_for(p, 1, s.device.properties());
  tiling_from_environment(s.spec, s.refusals);
  take_tma(p, s.spec, s.no_tma);
  const std::int64_t capacity = p.pages_per_sequence * p.page_size;
  const std::int64_t sms = std::max(1, t.q.device().properties().sm_count);
  const std::int64_t wanted = ((s.spec.tma ? 1 : 2) * sms) / (p.batch * p.heads_kv);
  s.splits = options.splits > 0 ? options.splits
                                : static_cast<int>(std::clamp<std::int64_t>(wanted, 1, std::min<std::int64_t>((capacity + 63) / 64, 256)));
  s.spec.split_output = s.splits > 1;
  size_tma_ring(s.spec);
  const std::size_t limit = s.device.properties().shared_bytes_per_block_optin;
  if (limit && static_cast<std::size_t>(s.spec.shared_bytes()) > limit)
    s.refusals.push_back("the decode kernel stages " + std::to_string(s.spec.shared_bytes()) +
                         " bytes of shared memory; device '" + s.device.properties().name + "' allows " +
                         std::to_string(limit) + " per block");
}

AttentionDecode::~AttentionDecode() = default;
AttentionDecode::AttentionDecode(AttentionDecode&&) noexcept = default;
AttentionDecode& AttentionDecode::operator=(AttentionDecode&&) noexcept = default;

std::vector<std::string> AttentionDecode::check_support() const { return state_->refusals; }
int AttentionDecode::splits() const { return state_->splits; }
std::size_t AttentionDecode::workspace_bytes() const { return state_->refusals.empty() ? state_->workspace_bytes() : 0; }

std::string AttentionDecode::describe() const {
  const State& s = *state_;
  if (!s.refusals.empty()) return "AttentionDecode refuses " + s.problem.describe() + ":" + join_reasons(s.refusals);
  return "AttentionDecode " + s.problem.describe() + ": " + std::to_string(s.splits) + " split" +
         (s.splits > 1 ? "s" : "") + " a sequence (" + std::to_string(s.problem.batch * s.problem.heads_kv * s.splits) +
         " CTAs of the split kernel " + s.spec.kernel_name() + ", " + std::to_string(s.spec.block_n) +
         "-key blocks in " + std::to_string(s.spec.stages) +
         (s.spec.tma ? " TMA stages fed by a producer warp, copies of " + std::to_string(s.spec.page_rows) + " keys"
                     : " cp.async stages (not the TMA-fed kernel: " + s.no_tma + ")") +
         (s.splits > 1 ? ", the last CTA of each sequence and KV head combining the splits" : "") +
         "), workspace " +
         std::to_string(workspace_bytes()) + " bytes";
}

void AttentionDecode::compile() {
  State& s = *state_;
  if (!s.refusals.empty()) throw OpsError("AttentionDecode cannot run " + s.problem.describe() + ":" + join_reasons(s.refusals));
  if (s.module) return;
  s.module.emplace(s.device, s.spec.tma ? build_decode_tma(s.spec) : build_decode_split(s.spec));
  s.kernel = s.module->prepare(s.spec.kernel_name());
  if (s.workspace_bytes() && !s.caller_workspace) {
    s.workspace.emplace(s.device, s.workspace_bytes());
    s.workspace->fill(0);  // the counters start at zero; every launch leaves them so
  }
}

void AttentionDecode::execute(const AttentionDecodeTensors& t, runtime::Stream* stream, const TensorView* workspace) {
  compile();
  State& s = *state_;
  const char* roles[] = {"Q", "k_cache", "v_cache", "block_table", "kv_lens", "O", "lse"};
  std::vector<std::string> why;
  const auto views = views_of(t);
  for (std::size_t i = 0; i < views.size(); ++i) {
    const TensorView* v = views[i];
    const bool built = !s.shapes[i].empty() || i + 1 < views.size();
    if (!v) {
      if (built) why.push_back(std::string(roles[i]) + " is missing: execute() takes the tensors the op was built with");
      continue;
    }
    if (!built || v->shape() != s.shapes[i] || v->strides() != s.strides[i])
      why.push_back(std::string(roles[i]) + " is " + v->describe() +
                    ": execute() needs a view of the shape and strides the op was built with");
    else if (!(v->device() == s.device))
      why.push_back(std::string(roles[i]) + " is on " + v->device().describe() + ": the op was built for " +
                    s.device.describe());
    else if (v->address() % (i == 3 || i == 4 || i == 6 ? 4 : 16) != 0)
      why.push_back(std::string(roles[i]) + " starts at a misaligned address");
  }
  const std::size_t needed = s.workspace_bytes();
  runtime::DevicePtr ws = 0;
  if (workspace) {
    if (!(workspace->device() == s.device) || !workspace->is_contiguous() || workspace->extent_bytes() < needed ||
        workspace->address() % 16 != 0)
      why.push_back("the workspace is " + workspace->describe() + ": it must be on " + s.device.describe() +
                    ", contiguous, 16-byte aligned and of " + std::to_string(needed) + " bytes or more");
    ws = workspace->address();
  } else if (needed && s.caller_workspace) {
    why.push_back(s.no_workspace());
  }
  if (!why.empty()) throw OpsError("AttentionDecode::execute refused:" + join_reasons(why));
  launch({t.q.address(), t.k_cache.address(), t.v_cache.address(), t.block_table.address(), t.kv_lens.address(),
          t.o.address(), t.lse ? t.lse->address() : 0},
         ws, stream);
}

void AttentionDecode::execute_at(const std::array<runtime::DevicePtr, 7>& at, runtime::DevicePtr workspace,
                                 runtime::Stream* stream) {
  compile();
  State& s = *state_;
  const char* roles[] = {"Q", "k_cache", "v_cache", "block_table", "kv_lens", "O", "lse"};
  std::vector<std::string> why;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const bool built = !s.shapes[i].empty() || i + 1 < at.size();
    if (built != (at[i] != 0))
      why.push_back(std::string(roles[i]) + (built ? " is missing (address 0)" : " is given; the op was built without it"));
    else if (at[i] % (i == 3 || i == 4 || i == 6 ? 4 : 16) != 0)
      why.push_back(std::string(roles[i]) + " starts at a misaligned address");
  }
  if (workspace % 16 != 0) why.push_back("the workspace starts at an address that is not 16-byte aligned");
  if (!workspace && s.workspace_bytes() && s.caller_workspace) why.push_back(s.no_workspace());
  if (!why.empty()) throw OpsError("AttentionDecode::execute_at refused:" + join_reasons(why));
  launch(at, workspace, stream);
}

// The launch on data at `at` and the workspace at `workspace` (0: the op's
// own, where it has one), both checked.
void AttentionDecode::launch(const std::array<runtime::DevicePtr, 7>& at, runtime::DevicePtr workspace,
                             runtime::Stream* stream) {
  State& s = *state_;
  const runtime::DevicePtr ws = workspace ? workspace : s.workspace ? s.workspace->address() : 0;
  const DecodeProblem& p = s.problem;
  const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  // The arguments are built once; a call replaces the tensors' addresses
  // (and the TMA maps where a cache moved): host time a call.
  const runtime::Arg pointers[] = {runtime::Arg::pointer(at[0]), runtime::Arg::pointer(at[1]),
                                   runtime::Arg::pointer(at[2]), runtime::Arg::pointer(at[3]),
                                   runtime::Arg::pointer(at[4]), runtime::Arg::pointer(at[5]),
                                   runtime::Arg::pointer(at[6] ? at[6] : at[5]), runtime::Arg::pointer(ws ? ws : at[5])};
  if (s.args.empty()) {
    s.args.assign(std::begin(pointers), std::end(pointers));
    for (const auto* st : {&p.q, &p.k, &p.v, &p.o, &p.lse})
      for (std::int64_t x : *st) s.args.emplace_back(u64(x));
    s.args.emplace_back(u64(p.table_row));
    s.args.emplace_back(u32(p.page_size));
    s.args.emplace_back(u32(p.pages_per_sequence));
    s.args.emplace_back(u32(s.splits));
    s.args.emplace_back(u32(p.heads_q));
    s.args.emplace_back(static_cast<float>(p.scale * 1.4426950408889634));
    s.args.emplace_back(static_cast<std::int32_t>(p.window_left));
    if (s.spec.tma) s.args.resize(s.args.size() + 2, runtime::Arg(0));
    s.launch = {.grid = {u32(s.splits), u32(p.heads_kv), u32(p.batch)},
                .block = {u32(s.spec.threads())},
                .dynamic_shared_bytes = u32(s.spec.shared_bytes())};
  } else {
    std::copy(std::begin(pointers), std::end(pointers), s.args.begin());
  }
  if (s.spec.tma) {
    const std::size_t maps = s.args.size() - 2;
    if (s.k_mapped != at[1])
      s.args[maps] = runtime::Arg::bytes_of(cache_map(s.device, p, s.spec.page_rows, at[1], p.k)), s.k_mapped = at[1];
    if (s.v_mapped != at[2])
      s.args[maps + 1] = runtime::Arg::bytes_of(cache_map(s.device, p, s.spec.page_rows, at[2], p.v)),
      s.v_mapped = at[2];
  }
  s.kernel->launch(s.launch, s.args, stream);
}

void attention_decode(const AttentionDecodeTensors& t, AttentionDecodeOptions options, runtime::Stream* stream) {
  execute_once<AttentionDecode>(t, options, stream);
}

}  // namespace warpforge::ops
