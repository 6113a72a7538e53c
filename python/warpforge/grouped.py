"""Grouped GEMM for mixture-of-experts layers (ops::GroupedGemm): one GEMM an
expert, the experts' token counts as int32 offsets that stay on the device.

    d = warpforge.grouped_mm(a, b, offs)                   # torch._grouped_mm's arguments
    w = warpforge.prepack_weights(codes, scales, "mxfp4")  # once, at load time
    d = warpforge.grouped_mm(a, w, offs)                   # bf16 tokens x MXFP4 experts

Forms (torch._grouped_mm's): a (M, K) with b (G, K, N) gives (M, N), rows
r of group g (offs[g-1] <= r < offs[g]) multiplied by b[g], rows past the
last offset zero; a (M, K) with b (K, N) and offs gives (G, M, N), group g
summing K over its range. b may also be PackedWeights (block-scaled expert
weights packed for the stream kernel). torch tensors go through
torch.ops.warpforge.grouped_mm (autograd for bf16, torch.compile, CUDA
graphs); NumPy arrays run on the simulator; JAX arrays go to
warpforge.jax.ragged_dot.
"""

import numpy as np

from . import _warpforge
from ._frameworks import current_stream as caller_stream
from ._frameworks import dtype_name, empty_strided, framework_dtype, framework_of, from_host, to_host, to_tensor, zeros

# name -> (data dtype, scale dtype, scale block)
FORMATS = {
    "mxfp4": ("e2m1", "e8m0", 32),
    "nvfp4": ("e2m1", "e4m3", 16),
    "mxfp8": ("e4m3", "e8m0", 32),
    "mxfp8_e4m3": ("e4m3", "e8m0", 32),
    "mxfp8_e5m2": ("e5m2", "e8m0", 32),
}


def _format(name):
    if name not in FORMATS:
        raise _warpforge.OpsError(f"format '{name}': accepted {', '.join(FORMATS)}")
    return FORMATS[name]


class PackedWeights:
    """Block-scaled expert weights in the order the stream kernel reads them
    (ops::PackedWeightsLayout, grouped_gemm.hpp): `codes` and `scales` are
    1-D tensors of the framework and device the weights came from; logically
    `groups` matrices of K x N (torch's (G, K, N))."""

    def __init__(self, codes, scales, format, groups, k, n):
        self.codes, self.scales, self.format = codes, scales, format
        self.groups, self.k, self.n = groups, k, n
        self.data_dtype, self.scale_dtype, self.sf_vec_size = _format(format)

    @property
    def shape(self):
        return (self.groups, self.k, self.n)

    def __repr__(self):
        return f"PackedWeights({self.format}, groups={self.groups}, k={self.k}, n={self.n})"


def _host_bytes(x):
    host = np.ascontiguousarray(to_host(x))
    return host.reshape(-1).view(np.uint8)


def prepack_weights(codes, scales, format):
    """Packs block-scaled weights once, when they are loaded: codes (G, N, K)
    k-major (FP4 as uint8 / float4_e2m1fn_x2 (G, N, K/2), two codes a byte,
    the lower k in the low nibble; (N, K) for one group), scales in the
    128x4 layout over N rows and G batches (GemmAmax's SFB; any shape, read
    as its bytes). format: mxfp4, nvfp4, mxfp8 (= mxfp8_e4m3), mxfp8_e5m2.
    The packing runs on the host; the result lives where `codes` lives."""
    data, scale, vec = _format(format)
    shape = tuple(codes.shape)
    if len(shape) == 2:
        shape = (1,) + shape
    if len(shape) != 3:
        raise _warpforge.OpsError(f"codes of shape {tuple(codes.shape)}: expected (G, N, K) (FP4: (G, N, K/2))")
    groups, n, k = shape[0], shape[1], shape[2] * (2 if data == "e2m1" else 1)
    packed_codes, packed_scales = _warpforge.prepack_weights(_host_bytes(codes), _host_bytes(scales), data, scale,
                                                             vec, groups, k, n)
    return PackedWeights(_from_bytes(codes, packed_codes, data), _from_bytes(codes, packed_scales, scale), format,
                         groups, k, n)


_E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def _decode(codes, name):
    """Codes (uint8; FP4 one code a byte) to float64 values."""
    if name == "e2m1":
        return _E2M1[codes]
    if name == "e8m0":
        return np.where(codes == 255, np.nan, np.ldexp(1.0, codes.astype(np.int64) - 127))
    return codes.view(framework_dtype("numpy", name)).astype(np.float64)


def quantize_weights(w, format):
    """Quantizes expert weights w (G, K, N) floats (any framework) to
    `format` and packs them: returns (PackedWeights, values), values the
    float64 (G, K, N) NumPy array the packed weights stand for exactly (each
    code times its scale), for references and checks."""
    from .ops import quantize

    host = np.asarray(to_host(w), dtype=np.float32)
    if host.ndim != 3:
        raise _warpforge.OpsError(f"quantize_weights takes w of shape (G, K, N), got {host.shape}")
    groups, k, n = host.shape
    codes, scales = quantize(np.ascontiguousarray(np.transpose(host, (2, 1, 0))), format)  # (N, K, G) on the host
    data, scale, vec = _format(format)
    raw = np.moveaxis(to_host(codes).view(np.uint8), 2, 0)  # (G, N, K bytes), k-major
    if data == "e2m1":
        unpacked = np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(groups, n, k)
    else:
        unpacked = raw
    layout = to_host(scales).view(np.uint8)  # (32, 4, RM, 4, RK, L)
    r = np.arange(n)[:, None]
    kb = (np.arange(k) // vec)[None, :]
    per_element = layout[r % 32, (r // 32) % 4, r // 128, kb % 4, kb // 4, :]  # (N, K, G)
    values = _decode(unpacked, data) * np.moveaxis(_decode(per_element, scale), 2, 0)
    memory_order = np.ascontiguousarray(layout.transpose(np.argsort(layout.strides)[::-1])).reshape(-1)
    packed = prepack_weights(from_host(w, np.ascontiguousarray(raw), "u8"), from_host(w, memory_order, "u8"), format)
    return packed, np.ascontiguousarray(np.transpose(values, (0, 2, 1)))


def _from_bytes(like, raw, name):
    # Packed FP4 travels as uint8 (torch's float4_e2m1fn_x2 cannot be copied on every device).
    name = "u8" if name == "e2m1" else name
    array = np.frombuffer(raw, dtype=np.uint8).copy()
    if framework_of(like) in ("numpy", "cupy") and name in ("e4m3", "e5m2", "e8m0"):
        array = array.view(framework_dtype("numpy", name))
    return from_host(like, array, name)


def d_shape(a, b, offs):
    """The shape grouped_mm returns for these operands."""
    if isinstance(b, PackedWeights):
        return (a.shape[0], b.n)
    if len(a.shape) == 2 and len(b.shape) == 3:
        return (a.shape[0], b.shape[2])
    if len(a.shape) == 2 and len(b.shape) == 2:
        return (a.shape[0], b.shape[1]) if offs is None else (offs.shape[0], a.shape[0], b.shape[1])
    raise _warpforge.OpsError(f"grouped_mm takes a (M, K) with b (G, K, N), (K, N) or PackedWeights; got a of shape "
                              f"{tuple(a.shape)}, b of shape {tuple(b.shape)}")


def _output(mat_a, mat_b, offs, out_dtype):
    """grouped_mm's D, row-major, where mat_a lives."""
    name = dtype_name(out_dtype) if out_dtype is not None else dtype_name(mat_a.dtype)
    shape = d_shape(mat_a, mat_b, offs)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return empty_strided(mat_a, shape, strides, name)


def _op(a, b, offs, d, kernel="auto", a_scales=None, amax=None):
    """The cached op for these tensors and their views."""
    packed = isinstance(b, PackedWeights)
    views = [to_tensor(a, "a"), to_tensor(b.codes if packed else b, "b"),
             None if offs is None else to_tensor(offs, "offs"), to_tensor(d, "out"),
             None if a_scales is None else to_tensor(a_scales, "a_scales"),
             to_tensor(b.scales, "b_scales") if packed else None, None if amax is None else to_tensor(amax, "amax")]
    op = _warpforge.grouped_gemm_op(*views, out_dtype=dtype_name(d.dtype),
                                    sf_vec_size=b.sf_vec_size if packed else 32, kernel=kernel)
    return op, views


def run(a, b, offs, d, kernel="auto", stream=None, a_scales=None, amax=None):
    """Runs the cached op for these tensors into d (allocated by the caller)."""
    op, views = _op(a, b, offs, d, kernel, a_scales, amax)
    op.execute(*views, stream=caller_stream(a, stream))
    return d


def describe(mat_a, mat_b, offs=None, out_dtype=None, kernel="auto"):
    """ops::GroupedGemm::describe() for grouped_mm's arguments: the kernel it
    runs, its configuration, and why the others were not taken."""
    return _op(mat_a, mat_b, offs, _output(mat_a, mat_b, offs, out_dtype), kernel)[0].describe()


def grouped_mm(mat_a, mat_b, offs=None, bias=None, out_dtype=None, *, kernel="auto", stream=None):
    """torch._grouped_mm's arguments: mat_a (M, K) bf16; mat_b (G, K, N), (K, N)
    (with offs: the (G, M, N) form) or PackedWeights; offs int32 cumulative
    ends (None for one group); out_dtype bf16 (default: mat_a's), float32 or
    float16. Exact products, f32 accumulation. kernel: auto, stream, sm90a, sm80."""
    if bias is not None:
        raise _warpforge.OpsError("grouped_mm: bias is not supported (add it to the result)")
    fw = framework_of(mat_a)
    if fw == "jax":
        from . import jax as wjax

        return wjax.grouped_mm(mat_a, mat_b, offs, out_dtype=out_dtype)
    if fw == "torch":
        import torch

        from . import torch as _registered  # noqa: F401  (registers the operators)

        if isinstance(mat_b, PackedWeights):
            return torch.ops.warpforge.grouped_mm_packed(mat_a, mat_b.codes.view(torch.uint8),
                                                          mat_b.scales.view(torch.uint8), offs, mat_b.n, mat_b.format,
                                                          out_dtype)
        return torch.ops.warpforge.grouped_mm(mat_a, mat_b, offs, out_dtype)
    d = _output(mat_a, mat_b, offs, out_dtype)
    return run(mat_a, mat_b, offs, d, kernel=kernel, stream=stream)


def grouped_mm_amax(a_codes, a_scales, weights, offs=None, out_dtype="bf16", stream=None):
    """Both operands block-scaled (GemmAmax's semantics per group): a_codes
    (M, K) k-major in weights' format (FP4 (M, K/2) bytes), a_scales in the
    128x4 layout over M rows; weights PackedWeights. Returns (d (M, N),
    amax (1,)), amax = max |D| on the f32 accumulator over every group."""
    name = dtype_name(out_dtype)
    d = empty_strided(a_codes, (a_codes.shape[0], weights.n), (weights.n, 1), name)
    amax = zeros(a_codes, (1,), "f32")
    run(a_codes, weights, offs, d, stream=stream, a_scales=a_scales, amax=amax)
    return d, amax


def reference(a, b, offs):
    """grouped_mm in float64 with NumPy (host copies): the checks' reference.
    Offsets read as the kernels read them (running maximum, clamped)."""
    a64 = np.asarray(to_host(a), dtype=np.float64)
    b64 = np.asarray(to_host(b), dtype=np.float64)
    ends = np.asarray(to_host(offs), dtype=np.int64) if offs is not None else np.array([a64.shape[0]])
    extent = a64.shape[0] if b64.ndim == 3 or offs is None else a64.shape[1]
    ends = np.minimum(np.maximum.accumulate(np.maximum(ends, 0)), extent)
    if b64.ndim == 2 and offs is None:
        return a64 @ b64
    begins = np.concatenate([[0], ends[:-1]])
    if b64.ndim == 3:
        d = np.zeros((a64.shape[0], b64.shape[2]))
        for g, (lo, hi) in enumerate(zip(begins, ends)):
            d[lo:hi] = a64[lo:hi] @ b64[g]
        return d
    return np.stack([a64[:, lo:hi] @ b64[lo:hi] for lo, hi in zip(begins, ends)])
