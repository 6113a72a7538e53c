// What the torch extension (warpforge._warpforge_torch, src/torch/) calls in
// warpforge._warpforge: the compiled-op cache, the devices, the simulator and
// the error translation live in one module, and the torch extension, which
// links torch but not the library, reaches them through this table, handed
// over in the capsule `_warpforge._torch_bridge`. Only plain data crosses
// (tensors as address, dtype, shape and strides), never a Python object or a
// DLPack capsule.
#pragma once

#include <cstdint>
#include <string_view>

namespace warpforge::python::torch_bridge {

// Raised whenever a field or function below changes meaning: the torch
// extension refuses a _warpforge of another version.
inline constexpr int kVersion = 6;
inline constexpr char kCapsuleName[] = "warpforge._warpforge._torch_bridge";

// A tensor as torch holds it: on CUDA device `device`, or (device -1) in
// host memory, which the simulator maps for the call; dtype is a
// runtime::DType value.
struct Tensor {
  static constexpr int kMaxRank = 8;  // runtime::TensorView::max_rank
  std::uint64_t address = 0;
  std::int32_t device = -1;
  std::int32_t dtype = 0;
  std::int32_t rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
};

// gemm_amax's arguments but C and amax, as the torch schema names them
// (python/warpforge/torch.py); dtypes are runtime::DType values, -1 where
// the caller gave none.
struct GemmAmaxArgs {
  Tensor a, b, sfa, sfb;
  std::string_view c_major;
  std::int32_t c_dtype = -1, acc_dtype = -1;
  bool has_mma_tiler = false, has_cluster = false;
  std::int64_t mma_tiler_mn[2] = {}, cluster_shape_mn[2] = {};
  std::int64_t sf_vec_size = 32;
  std::string_view precision, kernel;
};

// gemm's operands as the torch schema names them (D allocated by the
// caller); c is read only where has_c.
struct GemmArgs {
  Tensor a, b, c, d;
  bool has_c = false;
  double alpha = 1.0, beta = 0.0;
};

// grouped_mm's operands (torch.ops.warpforge.grouped_mm: D allocated by the
// caller); offs is read only where has_offs.
struct GroupedMmArgs {
  Tensor a, b, offs, d;
  bool has_offs = false;
};

// attention_forward's operands and options (torch.ops.warpforge.attention_forward,
// python/warpforge/torch_attention.py; O and lse allocated by the caller):
// each cu_seqlens is read only where has_ says so, the scale only where
// has_scale; a window side of -1 is unbounded.
struct AttentionForwardArgs {
  Tensor q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k;
  bool has_cu_seqlens_q = false, has_cu_seqlens_k = false, has_scale = false, top_left = true;
  double scale = 0.0;
  std::int64_t window_left = -1, window_right = -1, max_seqlen_q = 0, max_seqlen_k = 0;
  std::string_view kernel;
};

// attention_backward's operands and options (torch.ops.warpforge.attention_backward;
// dQ, dK, dV and the workspace allocated by the caller): the forward's (its
// O and lse are inputs here), dO, the gradients and the mode.
struct AttentionBackwardArgs {
  AttentionForwardArgs forward;
  Tensor d_o, dq, dk, dv;
  bool deterministic = false;
};

// attention_decode's operands and options (warpforge.attention_decode's
// direct call, python/warpforge/torch_attention.py; O, lse and the
// workspace allocated by the caller): lse is written only where has_lse, the
// scale read only where has_scale; window_left -1 is unbounded, splits 0 the
// op's choice.
struct AttentionDecodeArgs {
  Tensor q, k_cache, v_cache, block_table, kv_lens, o, lse;
  bool has_lse = false, has_scale = false, causal = true;
  double scale = 0.0;
  std::int64_t window_left = -1, splits = 0;
};

// The row ops (row_ops.hpp's Traits), by the number the torch extension
// passes: each takes its tensors in its Traits' roles' order.
enum class RowOpKind : std::int32_t {
  norm,
  norm_backward,
  softmax,
  softmax_backward,
  swiglu,
  swiglu_backward,
  cross_entropy,
  cross_entropy_scale,
};

// C's shape and strides in elements, as the cuDNN frontend allocates it.
struct CLayout {
  std::int64_t shape[3] = {}, strides[3] = {};
};

// Each function returns 0, or -1 with the Python error set (the warpforge
// exception and message the nanobind path raises); each takes the GIL only
// to set that error.
struct Api {
  int version;
  // C's layout for these arguments, refusing bad options.
  int (*gemm_amax_c_layout)(const GemmAmaxArgs& args, CLayout& out);
  // The compiled op for these arguments and the C and amax allocated for
  // them (made once per description and kept: the pointer stays valid).
  int (*gemm_amax_op)(const GemmAmaxArgs& args, const Tensor& c, const Tensor& amax, void** op);
  // The op on other data of its description: six addresses (A, B, SFA, SFB,
  // C, amax); amax set to +0.0 first; on `stream` (a CUstream) on a GPU.
  int (*gemm_amax_run)(void* op, const std::uint64_t (&addresses)[6], std::uintptr_t stream);
  // The compiled Gemm for these operands, alpha and beta (made once per
  // description and kept: the pointer stays valid).
  int (*gemm_op)(const GemmArgs& args, void** op);
  // That op on other data of its description: four addresses (A, B, C (0
  // without one), D); on `stream` (a CUstream) on a GPU.
  int (*gemm_run)(void* op, const std::uint64_t (&addresses)[4], std::uintptr_t stream);
  // The compiled GroupedGemm for these operands (made once per description
  // and kept: the pointer stays valid).
  int (*grouped_mm_op)(const GroupedMmArgs& args, void** op);
  // That op on other data of its description: four addresses (A, B,
  // offsets (0 without them), D); on `stream` (a CUstream) on a GPU.
  int (*grouped_mm_run)(void* op, const std::uint64_t (&addresses)[4], std::uintptr_t stream);
  // The compiled row op `kind` for `count` tensors in its roles' order (null
  // where absent) and its options' text (row_ops.hpp: Traits::parse), made
  // once per description and kept (the pointer stays valid).
  int (*row_op)(RowOpKind kind, const Tensor* const* tensors, std::int32_t count, std::string_view options,
                void** op);
  // That op on other data of its description: an address a role (read only
  // where the description had the tensor); on `stream` (a CUstream) on a GPU.
  int (*row_run)(RowOpKind kind, void* op, const std::uint64_t* addresses, std::int32_t count, std::uintptr_t stream);
  // Raises warpforge.<error_class>(message) ("RuntimeError", "OpsError"):
  // refusals the torch extension makes itself. Returns -1.
  int (*refuse)(const char* error_class, const char* message);
  // The compiled attention forward for these arguments (made once per
  // description and kept: the pointer stays valid).
  int (*attention_forward_op)(const AttentionForwardArgs& args, void** op);
  // That op on other data of its description: seven addresses (Q, K, V, O,
  // lse, cu_seqlens_q, cu_seqlens_k: 0 without them); on `stream` (a
  // CUstream) on a GPU.
  int (*attention_forward_run)(void* op, const std::uint64_t (&addresses)[7], std::uintptr_t stream);
  // The compiled attention backward for these arguments and the workspace
  // bytes a run takes (made once per description and kept).
  int (*attention_backward_op)(const AttentionBackwardArgs& args, void** op, std::uint64_t* workspace_bytes);
  // That op on other data of its description: eleven addresses (Q, K, V, O,
  // lse, dO, dQ, dK, dV, cu_seqlens_q, cu_seqlens_k: 0 without them) and the
  // workspace's; on `stream` (a CUstream) on a GPU.
  int (*attention_backward_run)(void* op, const std::uint64_t (&addresses)[11], std::uint64_t workspace,
                                std::uintptr_t stream);
  // The compiled paged decode for these arguments and the workspace bytes a
  // run takes (made once per description and kept).
  int (*attention_decode_op)(const AttentionDecodeArgs& args, void** op, std::uint64_t* workspace_bytes);
  // That op on other data of its description: seven addresses (Q, k_cache,
  // v_cache, block_table, kv_lens, O, lse: 0 without it) and the
  // workspace's (zero-filled before its first run; each run leaves it so);
  // on `stream` (a CUstream) on a GPU.
  int (*attention_decode_run)(void* op, const std::uint64_t (&addresses)[7], std::uint64_t workspace,
                              std::uintptr_t stream);
};

}  // namespace warpforge::python::torch_bridge
