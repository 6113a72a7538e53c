"""The operations with the cuDNN frontend's Python shape: gemm_amax (as
gemm_amax_wrapper_sm100) and the GemmAmax class, gemm and the Gemm class,
and quantize. Tensors of any framework; outputs in the caller's framework;
work on the caller's current stream unless `stream` says otherwise."""

import numpy as np

from . import _warpforge
from ._frameworks import current_stream as caller_stream
from ._frameworks import dtype_name, empty_strided, framework_dtype, framework_of, from_host, to_host, to_tensor, zeros


def _name_or(dtype, default):
    return default if dtype is None else dtype_name(dtype)


def _pair(p):
    return None if p is None else (int(p[0]), int(p[1]))


def gemm_amax(a, b, sfa, sfb, c_major="n", c_dtype=None, acc_dtype=None, mma_tiler_mn=None,
              cluster_shape_mn=None, sf_vec_size=32, stream=None, precision="exact", kernel="auto"):
    """Block-scaled GEMM + amax, as the cuDNN frontend's gemm_amax_wrapper_sm100:
    C[m,n,l] = sum_k (A·SFA)[m,k,l] (B·SFB)[n,k,l] and amax = max |C| (on the
    f32 accumulator). a (M, K, L) and b (N, K, L): e4m3/e5m2, or FP4 packed
    two per byte (uint8 / torch.float4_e2m1fn_x2, shape (rows, K/2, L));
    sfa, sfb: e8m0 (int8 means e8m0) or e4m3 scales in the 128x4 layout.
    c_dtype defaults to float32; mma_tiler_mn and cluster_shape_mn to the
    kernel's choice. precision "fast" lets MXFP8 run Hopper's FP8 tensor
    cores (inexact; "exact", the default, keeps every product exact and the
    accumulation f32); kernel forces "stream", "skinny", "prepass", "swapped", "sm90a", "sm80" or
    the experimental "sm100a" (tcgen05; run only on the simulator so far). Returns
    (c, amax): c (M, N, L) with c_major's dimension contiguous, amax of shape
    (1, 1, 1), both of a's framework and device."""
    if framework_of(a) == "jax":
        from . import jax as wjax

        return wjax.gemm_amax(a, b, sfa, sfb, c_major=c_major, c_dtype=c_dtype, acc_dtype=acc_dtype,
                              mma_tiler_mn=mma_tiler_mn, cluster_shape_mn=cluster_shape_mn,
                              sf_vec_size=sf_vec_size, precision=precision, kernel=kernel)
    c_name = _name_or(c_dtype, "f32")
    shape, strides = _warpforge.gemm_amax_c_layout(a.shape[0], b.shape[0], a.shape[2], c_major, c_name)
    c = empty_strided(a, shape, strides, "e2m1" if c_name in ("u8", "e2m1") else c_name)
    amax = zeros(a, (1, 1, 1), "f32")
    views = [to_tensor(x, role) for x, role in
             ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))]
    op = _warpforge.gemm_amax_op(*views, c_major=c_major, c_dtype=c_name, acc_dtype=_name_or(acc_dtype, "f32"),
                                 mma_tiler_mn=_pair(mma_tiler_mn), cluster_shape_mn=_pair(cluster_shape_mn),
                                 sf_vec_size=sf_vec_size, precision=precision, kernel=kernel)
    op.execute(*views, stream=caller_stream(a, stream))
    return c, amax


class Support:
    """check_support()'s answer: true when the problem can run; `reasons`
    lists every rule it breaks (each naming the value and what would be
    accepted), and str() prints them."""

    def __init__(self, reasons):
        self.reasons = list(reasons)

    def __bool__(self):
        return not self.reasons

    def __str__(self):
        return "supported" if not self.reasons else "not supported:\n  " + "\n  ".join(self.reasons)

    __repr__ = __str__


class GemmAmax:
    """The cuDNN frontend's GemmAmax object: built from sample tensors (which
    fix shapes, strides, dtypes and device), then check_support(), compile()
    and execute() on any tensors of the same description. C's dtype and major
    dimension are the sample C's; precision and kernel as in gemm_amax. execute() accumulates into amax: initialise
    it (zero) before the first run."""

    def __init__(self, sample_a, sample_b, sample_sfa, sample_sfb, sample_c, sample_amax, acc_dtype=None,
                 mma_tiler_mn=None, cluster_shape_mn=None, sf_vec_size=32, precision="exact", kernel="auto"):
        views = [to_tensor(x, role) for x, role in
                 ((sample_a, "sample_a"), (sample_b, "sample_b"), (sample_sfa, "sample_sfa"),
                  (sample_sfb, "sample_sfb"), (sample_c, "sample_c"), (sample_amax, "sample_amax"))]
        self._op = _warpforge.GemmAmax(*views, acc_dtype=_name_or(acc_dtype, "f32"),
                                       mma_tiler_mn=_pair(mma_tiler_mn), cluster_shape_mn=_pair(cluster_shape_mn),
                                       sf_vec_size=sf_vec_size, precision=precision, kernel=kernel)

    def check_support(self):
        return Support(self._op.check_support())

    @property
    def kernel_name(self):
        """'stream', 'skinny', 'prepass', 'swapped', 'sm90a', 'sm80' or 'sm100a': the kernel that runs the problem."""
        return self._op.kernel_name

    @property
    def workspace_bytes(self):
        """Global memory the kernel keeps beside the tensors (split-K's partial sums), allocated by compile()."""
        return self._op.workspace_bytes

    def describe(self):
        """The kernel chosen, its configuration and workspace, and why each kernel before it was passed over."""
        return self._op.describe()

    def compile(self):
        self._op.compile()

    def execute(self, a, b, sfa, sfb, c, amax, current_stream=None):
        views = [to_tensor(x, role) for x, role in
                 ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))]
        self._op.execute(*views, stream=caller_stream(a, current_stream))


def gemm_out_shape(a_shape, b_shape):
    """D's shape for A (.., M, K) and B (.., K, N): the batch of the operand
    that has one; (1, 1) where A or B is not of rank 2 or 3, which the op then
    refuses, naming it."""
    if len(a_shape) not in (2, 3) or len(b_shape) not in (2, 3):
        return (1, 1)
    if len(a_shape) >= len(b_shape):
        return (*a_shape[:-1], b_shape[-1])
    return (*b_shape[:-2], a_shape[-2], b_shape[-1])


def _row_major_strides(shape):
    strides = [1] * len(shape)
    for i in range(len(shape) - 1, 0, -1):
        strides[i - 1] = strides[i] * shape[i]
    return tuple(strides)


# torch.ops.warpforge.gemm and torch.Tensor where the operator's C++ kernel is
# registered, else None: looked up at the first call on torch tensors
# (warpforge.torch imports this module, so not at import time).
_UNRESOLVED = object()
_torch_operator = _UNRESOLVED


def _torch_gemm():
    global _torch_operator
    if _torch_operator is _UNRESOLVED:
        from . import torch as wtorch

        _torch_operator = (wtorch.torch.Tensor, wtorch.gemm_call) if wtorch.CPP_KERNELS else None
    return _torch_operator


def gemm(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None, stream=None):
    """D = alpha·A·B + beta·C on the tensor cores: a (M, K) or (L, M, K), b
    (K, N) or (L, K, N), bf16 or f16, row- or column-major as their strides
    say; c (M, N) or (L, M, N) is read when beta != 0. Returns a new
    row-major D of out_dtype (default: a's dtype; f32, bf16 or f16). Torch
    tensors on torch's current stream go through torch.ops.warpforge.gemm
    where its C++ kernel is built (the least host time per call)."""
    fw = framework_of(a)
    if fw == "jax":
        from . import jax as wjax

        return wjax.gemm(a, b, c, alpha=alpha, beta=beta, out_dtype=out_dtype)
    if fw == "torch" and stream is None:
        operator = _torch_gemm()
        if (operator is not None and isinstance(b, operator[0]) and (c is None or isinstance(c, operator[0]))
                and (out_dtype is None or isinstance(out_dtype, type(a.dtype)))):
            return operator[1](a, b, c, alpha, beta, out_dtype)
    shape = gemm_out_shape(a.shape, b.shape)
    d = empty_strided(a, shape, _row_major_strides(shape), _name_or(out_dtype, dtype_name(a.dtype)))
    va, vb, vd = to_tensor(a, "a"), to_tensor(b, "b"), to_tensor(d, "d")
    vc = None if c is None else to_tensor(c, "c")
    op = _warpforge.gemm_op(va, vb, vc, vd, alpha=alpha, beta=beta)
    op.execute(va, vb, vc, vd, stream=caller_stream(a, stream))
    return d


class Gemm:
    """ops::Gemm from sample tensors: check_support(), compile(), execute().
    kernel ('auto', 'sm80', 'sm90a') and config ('128x128x32 s3 w2x2 c1x1')
    force a choice."""

    def __init__(self, sample_a, sample_b, sample_d, sample_c=None, alpha=1.0, beta=0.0, kernel="auto",
                 config=None):
        self._op = _warpforge.Gemm(to_tensor(sample_a, "sample_a"), to_tensor(sample_b, "sample_b"),
                                   None if sample_c is None else to_tensor(sample_c, "sample_c"),
                                   to_tensor(sample_d, "sample_d"), alpha=alpha, beta=beta, kernel=kernel,
                                   config=config)

    def check_support(self):
        return Support(self._op.check_support())

    def compile(self):
        self._op.compile()

    @property
    def kernel_name(self):
        return self._op.kernel_name

    @property
    def config(self):
        return self._op.config

    def execute(self, a, b, d, c=None, current_stream=None):
        self._op.execute(to_tensor(a, "a"), to_tensor(b, "b"), None if c is None else to_tensor(c, "c"),
                         to_tensor(d, "d"), stream=caller_stream(a, current_stream))


def quantize(x, format):
    """Quantizes x (M, K) or (M, K, L) floats to a block-scaled format:
    'mxfp8' (e4m3 data, e8m0 scale per 32), 'mxfp8_e5m2', 'mxfp4' (FP4, e8m0
    per 32) or 'nvfp4' (FP4, e4m3 per 16). Returns (data, scales) as
    gemm_amax takes them, of x's framework and device: data (M, K, L) k-major
    (FP4: packed bytes (M, K/2, L)), scales in the 128x4 layout as the 6-D
    (32, 4, ceil(M/128), 4, ceil(K/vec/4), L)."""
    host = np.asarray(to_host(x), dtype=np.float32)
    if host.ndim == 2:
        host = host[:, :, None]
    if host.ndim != 3:
        raise _warpforge.OpsError(f"quantize takes x of shape (M, K) or (M, K, L), got {host.shape}")
    rows, k, batches = host.shape
    if min(rows, k, batches) < 1:
        raise _warpforge.OpsError(f"quantize takes x with M, K and L >= 1, got shape {host.shape}: nothing to quantize")
    data, scales, data_dtype, scale_dtype, _, scale_shape, scale_strides = _warpforge.quantize(
        np.ascontiguousarray(np.moveaxis(host, 2, 0)), rows, k, batches, format)
    codes = np.frombuffer(data, dtype=np.uint8).copy().reshape(batches, rows, -1)
    codes = np.moveaxis(codes, 0, 2)  # (rows, K bytes, L), k-major
    scale_bytes = np.lib.stride_tricks.as_strided(
        np.frombuffer(scales, dtype=np.uint8).copy(), scale_shape, scale_strides)
    return (from_host(x, _as(codes, data_dtype), data_dtype),
            from_host(x, _as(scale_bytes, scale_dtype), scale_dtype))


def _as(raw, name):
    return raw if name == "e2m1" else raw.view(framework_dtype("numpy", name))
