"""warpforge's operations for JAX, through the XLA FFI: gemm_amax and gemm
call typed FFI handlers compiled into the extension (registered here with
jax.ffi.register_ffi_target), so they work eagerly and inside jax.jit, on
XLA's stream. Arrays on a GPU run there; CPU arrays run on the simulator.

    c, amax = jax.jit(warpforge.jax.gemm_amax)(a, b, sfa, sfb)
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _warpforge
from ._frameworks import dtype_name, framework_dtype
from .kernel import _dim3
from .ops import gemm_out_shape

if not hasattr(_warpforge, "jax_ffi_targets"):
    raise ImportError("this warpforge was built without JAX's FFI headers (JAX was not installed for the Python "
                      "that built it): reinstall warpforge where JAX is installed")

# XLA's own platform names: JAX 0.11 files a target registered for "cuda"
# under that key, which no backend reads, while "CUDA" and "Host" reach the
# GPU plugin and the CPU client in every JAX version we have run.
_XLA_PLATFORMS = {"cuda": "CUDA", "cpu": "Host"}
for _name, _capsule in _warpforge.jax_ffi_targets.items():
    _op, _platform = _name.rsplit("_", 1)
    jax.ffi.register_ffi_target(f"warpforge_{_op}", _capsule, platform=_XLA_PLATFORMS[_platform])

# Scales in the 6-D form (32, 4, RM, 4, RK, L) are stored L, RM, RK outermost:
# this order of axes lists them as they lie in memory.
_SCALE_MEMORY_ORDER = (5, 2, 4, 0, 1, 3)


def _scale_bytes(s):
    return jnp.ravel(jnp.transpose(s, _SCALE_MEMORY_ORDER) if s.ndim == 6 else s)


def _pair(p):
    return (0, 0) if p is None else (int(p[0]), int(p[1]))


def gemm_amax(a, b, sfa, sfb, c_major="n", c_dtype=None, acc_dtype=None, mma_tiler_mn=None, cluster_shape_mn=None,
              sf_vec_size=32, precision="exact", kernel="auto"):
    """warpforge.gemm_amax for jax.Arrays (see there): a (M, K, L), b (N, K, L)
    logical shapes, FP4 as uint8 (rows, K/2, L); scales 6-D or 1-D. Returns
    (c (M, N, L), amax (1, 1, 1)). Options are static under jax.jit."""
    if dtype_name(acc_dtype or jnp.float32) != "f32":
        raise _warpforge.OpsError(f"acc_dtype {acc_dtype}: accumulation is f32 only")
    c_name = "f32" if c_dtype is None else dtype_name(c_dtype)
    m, _, l = a.shape
    shape, _ = _warpforge.gemm_amax_c_layout(m, b.shape[0], l, c_major, c_name)
    cols = shape[1]
    physical = (l, m, cols) if c_major == "n" else (l, cols, m)
    out_dtype = framework_dtype("numpy", "e2m1" if c_name == "u8" else c_name)
    (mma_m, mma_n), (cluster_m, cluster_n) = _pair(mma_tiler_mn), _pair(cluster_shape_mn)
    call = jax.ffi.ffi_call(
        "warpforge_gemm_amax",
        (jax.ShapeDtypeStruct(physical, out_dtype), jax.ShapeDtypeStruct((1, 1, 1), jnp.float32)))
    c, amax = call(jnp.transpose(a, (2, 0, 1)), jnp.transpose(b, (2, 0, 1)), _scale_bytes(sfa), _scale_bytes(sfb),
                   c_major=c_major, sf_vec_size=np.int32(sf_vec_size), mma_m=np.int32(mma_m), mma_n=np.int32(mma_n),
                   cluster_m=np.int32(cluster_m), cluster_n=np.int32(cluster_n), precision=precision, kernel=kernel)
    return jnp.transpose(c, (1, 2, 0) if c_major == "n" else (2, 1, 0)), amax


def gemm(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None):
    """warpforge.gemm for jax.Arrays: D = alpha·A·B + beta·C, row-major a
    (M, K) or (L, M, K), b (K, N) or (L, K, N)."""
    shape = gemm_out_shape(a.shape, b.shape)
    dtype = a.dtype if out_dtype is None else out_dtype
    call = jax.ffi.ffi_call("warpforge_gemm", jax.ShapeDtypeStruct(shape, dtype))
    return call(a, b, a if c is None else c, alpha=np.float32(alpha), beta=np.float32(beta), has_c=c is not None)


def _grouped_call(a, b, offsets, shape, dtype, form):
    call = jax.ffi.ffi_call("warpforge_grouped_gemm", jax.ShapeDtypeStruct(shape, dtype))
    return call(a, b, offsets, form=form)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _ragged_dot(lhs, rhs, group_sizes, out_dtype):
    offsets = jnp.cumsum(group_sizes).astype(jnp.int32)
    return _grouped_call(lhs, rhs, offsets, (lhs.shape[0], rhs.shape[2]), out_dtype, "m")


def _ragged_dot_fwd(lhs, rhs, group_sizes, out_dtype):
    return _ragged_dot(lhs, rhs, group_sizes, out_dtype), (lhs, rhs, group_sizes)


def _ragged_dot_bwd(out_dtype, residuals, grad):
    lhs, rhs, group_sizes = residuals
    offsets = jnp.cumsum(group_sizes).astype(jnp.int32)
    grad = grad.astype(lhs.dtype)
    # d lhs = grad · rhs[g]ᵀ per group; d rhs[g] = lhs[rows of g]ᵀ · grad[rows of g] (the "k" form reads lhs as lhsᵀ).
    d_lhs = _grouped_call(grad, jnp.swapaxes(rhs, 1, 2), offsets, lhs.shape, lhs.dtype, "m")
    d_rhs = _grouped_call(lhs, grad, offsets, rhs.shape, rhs.dtype, "k")
    return d_lhs, d_rhs, np.zeros(group_sizes.shape, dtype=jax.dtypes.float0)


_ragged_dot.defvjp(_ragged_dot_fwd, _ragged_dot_bwd)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None):
    """jax.lax.ragged_dot on warpforge's grouped GEMM: lhs (m, k) bf16 rows
    sorted by group, rhs (g, k, n), group_sizes (g,) integers; returns (m, n)
    of preferred_element_type (default lhs's), rows past sum(group_sizes)
    zero. Exact products, f32 accumulation (precision is accepted and
    ignored). Differentiable (custom_vjp: the gradients by the same op) and
    usable in jax.jit."""
    if group_offset is not None:
        raise NotImplementedError("warpforge.jax.ragged_dot: group_offset is not supported")
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return _ragged_dot(lhs, rhs, group_sizes, jnp.dtype(out_dtype))


def grouped_mm(a, b, offs=None, out_dtype=None):
    """warpforge.grouped_mm for jax.Arrays: a (M, K) with b (G, K, N) and
    int32 cumulative ends `offs` (ragged_dot with offsets instead of sizes)."""
    if offs is None:
        offs = jnp.array([a.shape[0]], dtype=jnp.int32)
    sizes = jnp.diff(jnp.concatenate([jnp.zeros((1,), offs.dtype), offs]))
    return ragged_dot(a, b, sizes, preferred_element_type=out_dtype)


def kernel(k, grid, block, out_shapes, shared_bytes=0):
    """A kernel written with warpforge.Kernel as a JAX function, usable in
    jax.jit: every parameter of the kernel is a pointer, the function's
    arguments first, then its results, which are allocated from out_shapes
    (jax.ShapeDtypeStruct, or a sequence of them) and returned.

        double = warpforge.jax.kernel(k, (1,), (256,), jax.ShapeDtypeStruct((256,), jnp.float32))
        y = jax.jit(double)(x)
    """
    kernel_id = _warpforge.jax_register_kernel(k)
    (gx, gy, gz), (bx, by, bz) = _dim3(grid), _dim3(block)
    call = jax.ffi.ffi_call("warpforge_kernel", out_shapes)
    outputs = len(out_shapes) if isinstance(out_shapes, (list, tuple)) else 1

    def run(*inputs):
        # Refused while tracing, before XLA runs (and on a GPU, reports) anything.
        if len(inputs) + outputs != k.param_count:
            raise _warpforge.DslError(f"kernel '{k.name}' takes {k.param_count} arguments (its inputs, then its "
                                      f"outputs), got {len(inputs)} inputs and {outputs} outputs")
        return call(*inputs, kernel=np.int64(kernel_id), grid_x=np.int32(gx), grid_y=np.int32(gy),
                    grid_z=np.int32(gz), block_x=np.int32(bx), block_y=np.int32(by), block_z=np.int32(bz),
                    shared_bytes=np.int32(shared_bytes))

    return run


def attention(q, k, v, **kwargs):
    """warpforge.attention for jax.Arrays (jax.custom_vjp over the XLA FFI;
    see warpforge.attention for the arguments)."""
    from .attention import attention as _attention

    return _attention(q, k, v, **kwargs)
# The row ops (normalizations, softmax, SwiGLU, cross-entropy, norm + quantize)
# with custom_vjp: warpforge/jax_rows.py.
from .jax_rows import cross_entropy, layer_norm, rms_norm, rms_norm_quantize, softmax, swiglu  # noqa: E402,F401
