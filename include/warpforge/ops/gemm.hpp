// GEMM on tensor cores: D = alpha·op(A)·op(B) + beta·C.
//
//   ops::gemm(a, b, nullptr, d);                      // D = A·B
//   ops::Gemm g(a, b, &c, d, {.alpha = 2, .beta = 1});
//   for (auto& why : g.check_support()) std::cout << why << "\n";
//   g.compile();  g.execute(a, b, &c, d, &stream);
//
// Operands are TensorViews: A is (M, K) or (L, M, K), B (K, N) or (L, K, N),
// C and D (M, N) or (L, M, N). Each matrix is row- or column-major, said by
// its strides (one of its last two strides is 1): so NN, NT, TN and TT are
// all expressed without flags. A and B are bf16 or f16 (the same), the
// accumulation is f32, C and D are f32, bf16 or f16. Any M, N, K >= 1.
// Results are deterministic: the same inputs give the same bits every run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// Which kernel runs: the sm_80 one (cp.async + ldmatrix + mma.sync; also what
// sm_89 runs) or the sm_90a one (TMA + mbarrier + wgmma, warp-specialized,
// persistent). automatic picks sm90a on compute capability 9.0 when the
// problem is one TMA can describe, else sm80. sm100a (TMA + tcgen05.mma with
// the accumulator in tensor memory, warp-specialized) is experimental: it
// has run on the simulator, which follows the PTX ISA's text, never on a
// Blackwell GPU, so it runs only when named.
enum class GemmKernel { automatic, sm80, sm90a, sm100a };
std::string_view name(GemmKernel kernel);  // "automatic", "sm80", "sm90a", "sm100a"
// Inverse of name(), also taking "auto"; nullopt for anything else.
std::optional<GemmKernel> parse_gemm_kernel(std::string_view text);

// The tile configuration of one kernel. Fields a path does not use are
// ignored by it (sm80 has no cluster; sm90a has no warps_n).
struct GemmConfig {
  int tile_m = 128, tile_n = 128, tile_k = 32;
  int stages = 3;
  int warps_m = 2, warps_n = 2;      // sm80: the CTA's warp grid; sm90a: consumer warpgroups along M
  int cluster_m = 1, cluster_n = 1;  // sm90a: CTAs per cluster (TMA multicast between them)
  // sm90a: the two consumer warpgroups take alternate tiles of tile_m (64 or
  // 128) x tile_n, one's epilogue under the other's mainloop, instead of
  // sharing each tile (warps_m of 64 rows).
  bool pingpong = false;
  // sm90a: the tiles past the last whole wave of the persistent grid are
  // split along K among all CTAs (stream-K), their partial sums added in a
  // workspace the Gemm owns, so the last wave leaves no SM idle. The sums
  // are added in a fixed order: results stay deterministic. Opt-in (and an
  // autotune candidate): on an H200 adding the sums cost what the idle SMs
  // did (docs/PERFORMANCE.md), so the heuristic does not choose it.
  bool stream_k = false;
  // "128x128x32 s3 w2x2 c1x1", then " pingpong" and " streamk" when set
  std::string describe() const;
  friend bool operator==(const GemmConfig&, const GemmConfig&) = default;
};
// Inverse of GemmConfig::describe(): "MxNxK sS wAxB cCxD", optionally
// " pingpong" and " streamk" (in that order), every number >= 1; nullopt
// for anything else. Whether a kernel takes the configuration is the
// path's to say (check_support()).
std::optional<GemmConfig> parse_gemm_config(std::string_view text);

struct GemmOptions {
  float alpha = 1.0f;
  float beta = 0.0f;  // C is read only when beta != 0 and a C is given
  GemmKernel kernel = GemmKernel::automatic;
  std::optional<GemmConfig> config;  // overrides the heuristic's choice
  // Time the candidate configurations once for this problem and device and
  // remember the winner on disk (next to the binary cache); later compiles
  // of the same problem read it back.
  bool autotune = false;
};

class Gemm {
 public:
  // The shapes, strides, dtypes and device of these views fix the problem;
  // execute() may be given other views of the same description (other data).
  Gemm(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
       const runtime::TensorView& d, GemmOptions options = {});
  ~Gemm();
  Gemm(Gemm&&) noexcept;
  Gemm& operator=(Gemm&&) noexcept;

  // Every reason the problem cannot run, each naming the value, the rule and
  // what would be accepted; empty when it can.
  std::vector<std::string> check_support() const;
  // Chooses the kernel and configuration and builds it (JIT, cached). Throws
  // OpsError listing check_support()'s reasons.
  void compile();
  // Runs on `stream` (the null stream when absent); compiles first if needed.
  // Throws OpsError when a view differs from the construction's description.
  // Launches of one Gemm share its workspace (stream-K): run them one after
  // another (one stream, or streams ordered by events), never at once.
  void execute(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
               const runtime::TensorView& d, runtime::Stream* stream = nullptr);

  GemmKernel kernel() const;         // after compile(): the kernel chosen
  const GemmConfig& config() const;  // after compile(): the configuration chosen

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot: construct, compile and execute.
void gemm(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
          const runtime::TensorView& d, GemmOptions options = {}, runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
