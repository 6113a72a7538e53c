// Block-scaled GEMM + amax, with the semantics of the cuDNN frontend's GemmAmax:
//
//   C[m,n,l] = Σ_k (A[m,k,l]·SFA[m,k/v,l]) · (B[n,k,l]·SFB[n,k/v,l])   (f32 accumulation)
//   amax     = max over m, n, l of |C| on the f32 accumulator, before C's conversion
//
//   auto [c, amax] = ops::gemm_amax(a, b, sfa, sfb, {.c_dtype = DType::bf16});
//   ops::GemmAmax op(a, b, sfa, sfb, c, amax, options);
//   for (auto& why : op.check_support()) std::cout << why << "\n";
//   op.compile();  op.execute(a, b, sfa, sfb, c, amax, &stream);
//
// Tensors (runtime::TensorView, strides in elements):
//  - A (M, K, L) and B (N, K, L): e4m3 or e5m2 (MXFP8), or FP4 e2m1. A is m- or
//    k-major, B n- or k-major (the dimension of stride 1). FP4 must be k-major;
//    it is given as dtype u8 (packed bytes) with shape (M, K/2, L), two
//    elements per byte, the lower k in the low nibble. (Dtype e2m1 with the
//    logical shape (M, K, L) is read the same way, but runtime::TensorView
//    only builds e2m1 views whose last dimension, here L, has stride 1.)
//  - SFA, SFB: one scale per v = sf_vec_size elements along K, in the 128×4
//    tiled layout (scale_factor_layout.hpp), dtype e8m0 or e4m3 (i8 means
//    e8m0); either 1-D of the layout's padded byte count, or 6-D with shape
//    (32, 4, RM, 4, RK, L) and strides (16, 4, RK·512, 1, 512, RM·RK·512).
//  - C (M, N, L): f32, f16, bf16, e4m3, e5m2 or e2m1 (packed as A's FP4; u8
//    with shape (M, N/2, L) also means FP4), m- or n-major. FP8/FP4 C is
//    converted with round-to-nearest-even and saturation (low_precision.hpp).
//  - amax: f32 with one element. The kernel folds the CTAs' maxima into it
//    with an atomic max, so execute() needs it initialised by the caller
//    (+0.0, or a running maximum to extend); gemm_amax() initialises it to +0.0.
//    NaN rule: a NaN anywhere in the accumulator makes amax NaN.
//
// Rules (check_support() lists every one broken, each naming the value, the
// rule and what would be accepted): A and B of one data dtype; SFA and SFB of
// one scale dtype; e4m3 scales need v = 16; FP8 data needs v = 32; FP8 A/B
// cannot produce FP8 C; FP4 C needs FP4 A/B; FP4 data k-major; FP4 C n-major;
// every non-unit stride (and base address) of A, B, C 16-byte aligned; shapes
// consistent (A's K = B's K, C = (M, N), one L, scale tensors of the layout's
// shape); acc_dtype f32; tile and cluster shapes the chosen kernel supports;
// every tensor on one device.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// Which dimension of C has stride 1: m (column-major) or n (row-major).
enum class CMajor { m, n };

struct GemmAmaxTile {
  int m = 0, n = 0;
  friend bool operator==(const GemmAmaxTile&, const GemmAmaxTile&) = default;
};

// How GemmAmax may compute. exact (the default): every product exact and
// accumulated in f32 at every step, the cuDNN frontend's semantics (the
// kernels dequantize to bf16, exact for these formats, and run bf16 or f16
// tensor-core instructions). fast: MXFP8 may also run Hopper's FP8 wgmma on
// the codes (the sm90a kernel's fp8_mma scheme: one wgmma m64nNk32 per
// 32-code scale block, its partial sum scaled and added in f32). Hopper's
// FP8 tensor cores add the products of one k32 step aligned to the largest
// exponent and keep about 14 bits (DeepSeek-V3 report, arXiv 2412.19437,
// 3.3.2), so each block's partial sum has a relative error up to about
// 2^-13 of its largest product magnitude: |error| <= K/32 x 2^-13 x
// max over the block of sum|a_k b_k| (measured on an H100: 35 of 2,080,000
// elements of an M=1000, N=1040, K=2048 e4m3 problem off by more than
// atol = rtol = 0.01 after cancellation). fast is never chosen unless asked.
enum class GemmAmaxPrecision { exact, fast };

// Which kernel of the family runs: automatic (the first that accepts the
// problem: skinny, prepass where M x L is large, swapped, sm90a, sm80), or the one
// named (its refusals are then check_support()'s). sm100a (tcgen05,
// accumulator in tensor memory) is experimental: it has run on the
// simulator, which follows the PTX ISA's text, and never on a Blackwell GPU,
// so automatic picks it first only on a simulator standing for sm_100a
// (sim::SimOptions::target); on a GPU it runs only when named.
enum class GemmAmaxKernel { automatic, skinny, prepass, swapped, sm90a, sm80, sm100a, stream };
// "auto", "skinny", "prepass", "swapped", "sm90a", "sm80", "sm100a", "stream"
std::string_view name(GemmAmaxKernel kernel);
std::string_view name(GemmAmaxPrecision precision);  // "exact", "fast"
// Inverses of name(); nullopt for anything else.
std::optional<GemmAmaxKernel> parse_gemm_amax_kernel(std::string_view text);
std::optional<GemmAmaxPrecision> parse_gemm_amax_precision(std::string_view text);

struct GemmAmaxOptions {
  runtime::DType c_dtype = runtime::DType::f32;
  CMajor c_major = CMajor::n;
  runtime::DType acc_dtype = runtime::DType::f32;  // f32 only
  int sf_vec_size = 32;                            // 16 or 32
  // The CTA's output tile; absent: the kernel's default. The sm80 kernel takes
  // m, n in {32, 64, 128} (default 64×64) and a 1×1 cluster; the sm90a kernel
  // 128×256, 128×128 or 128×64 (default the widest that keeps the SMs busy;
  // another tile sends the problem to sm80).
  std::optional<GemmAmaxTile> mma_tile;
  // CTAs per cluster along M and N: 1×1, or for the sm90a kernel's 128×256
  // tiles 2×1 (the pair shares the conversion of B). Absent: the kernel's
  // choice (the sm90a kernel pairs 128×256 tiles of FP8 data where M has two
  // tiles or more, which measured faster; 1×1 elsewhere).
  std::optional<GemmAmaxTile> cluster;
  GemmAmaxPrecision precision = GemmAmaxPrecision::exact;
  GemmAmaxKernel kernel = GemmAmaxKernel::automatic;
  // false: compile() allocates the kernel's workspace (workspace_bytes(),
  // split-K's partial sums and counters, or prepass's bf16 copies). true: it allocates none, and every
  // execute() of a kernel that needs one brings it.
  bool caller_workspace = false;
};

class GemmAmax {
 public:
  // The views fix the problem (shapes, strides, dtypes, device); execute() may
  // be given other views of the same description.
  GemmAmax(const runtime::TensorView& a, const runtime::TensorView& b,
           const runtime::TensorView& sfa, const runtime::TensorView& sfb,
           const runtime::TensorView& c, const runtime::TensorView& amax,
           GemmAmaxOptions options = {});
  ~GemmAmax();
  GemmAmax(GemmAmax&&) noexcept;
  GemmAmax& operator=(GemmAmax&&) noexcept;

  // Every reason the problem cannot run; empty when it can.
  std::vector<std::string> check_support() const;
  // The kernel that runs it: "stream" (decode, M up to 64: B's codes and
  // scales streamed once into mma.sync fragments, A to bf16 by a pre-pass;
  // the grouped GEMM's decode kernel with one group), "skinny" (small M of E2M1 data: B streamed
  // through registers, mma.sync, split K; sm_90a and the simulator),
  // "prepass" (large M: A and B converted to bf16 into the workspace by a
  // pre-pass, then the bf16 sm90a GEMM with an amax epilogue), "swapped"
  // (between, and FP8 data from M = 1: A to bf16 by a pre-pass, B's codes
  // converted into wgmma's register fragments, Cᵀ = B·Aᵀ; K a multiple of
  // 64), "sm90a" (TMA + wgmma,
  // on sm_90a and the simulator, for what it accepts), "sm80" (everything
  // else), or "sm100a" (named, or on a simulator standing for sm_100a).
  std::string_view kernel_name() const;
  // The kernel chosen, its configuration and workspace, and why each kernel
  // ahead of it in the family was not taken.
  std::string describe() const;
  // Global memory the chosen kernel needs beside the tensors (split-K
  // partial sums and counters, where the splits do not add their sums in a
  // cluster's shared memory; swapped: A's bf16 copy; prepass: the bf16
  // copies of A and B, 2 x (M + N) x K x L bytes); the op allocates it in
  // compile() unless options.caller_workspace.
  std::size_t workspace_bytes() const;
  // Builds the kernel (JIT, cached). Throws OpsError listing check_support()'s reasons.
  void compile();
  // Runs on `stream` (the null stream when absent); compiles first if needed.
  // amax must hold its initial value (see above). Throws OpsError when a view
  // differs from the construction's description. Once compiled, it allocates
  // nothing and never waits for the GPU, so it can be captured in a CUDA
  // graph. workspace: a contiguous buffer of at least workspace_bytes() on
  // the op's device, zero-filled before its first use (every run leaves its
  // counters at zero again, so ops built on the same description may share
  // it; another description reads its counters elsewhere: zero-fill it
  // again first); absent, the op's own. Runs that share a workspace (the op's own
  // included) must not overlap: run them on one stream.
  void execute(const runtime::TensorView& a, const runtime::TensorView& b,
               const runtime::TensorView& sfa, const runtime::TensorView& sfb,
               const runtime::TensorView& c, const runtime::TensorView& amax,
               runtime::Stream* stream = nullptr, const runtime::TensorView* workspace = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct GemmAmaxResult {
  runtime::Tensor c;  // (M, N, L) of options.c_dtype, options.c_major (FP4: u8 bytes (M, N/2, L))
  runtime::Tensor amax;  // f32 [1]
};

// One-shot: allocates C and amax on A's device, sets amax to +0.0, runs, and
// waits for the stream.
GemmAmaxResult gemm_amax(const runtime::TensorView& a, const runtime::TensorView& b,
                         const runtime::TensorView& sfa, const runtime::TensorView& sfb,
                         GemmAmaxOptions options = {}, runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
