"""The row ops for JAX (imported by warpforge.jax): differentiable functions
(jax.custom_vjp) whose forward and backward are XLA FFI calls of one handler
(warpforge_row_op, python/src/jax/row_ops_ffi.cpp), usable eagerly and in
jax.jit, on XLA's stream; CPU arrays run on the simulator.

    y = warpforge.jax.rms_norm(x, weight, eps=1e-6)
    y, h = warpforge.jax.layer_norm(x, weight, bias, residual=r)
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import _warpforge
from .rows import quantize_format, scale_bytes

_XLA_PLATFORMS = {"cuda": "CUDA", "cpu": "Host"}  # as warpforge.jax registers its targets
for _platform, _capsule in _warpforge.jax_row_op_targets.items():
    jax.ffi.register_ffi_target("warpforge_row_op", _capsule, platform=_XLA_PLATFORMS[_platform])


def row_op(op, roles, tensors, outputs, options):
    """Calls row op `op`: `tensors` maps its input roles to arrays (None where
    absent), `outputs` its output roles to jax.ShapeDtypeStruct (None where
    absent), in the op's role order `roles`; returns the outputs present."""
    present, args, results = 0, [], []
    for i, role in enumerate(roles):
        value = tensors.get(role, outputs.get(role))
        if value is None:
            continue
        present |= 1 << i
        (results if role in outputs else args).append(value)
    call = jax.ffi.ffi_call("warpforge_row_op", tuple(results))
    return call(*args, op=op, present=np.int64(present), options=options)


def _options(kind, eps):
    return f"{kind} {float(eps).hex()}"  # NormTraits::key's spelling


_NORM_ROLES = ("x", "residual", "weight", "bias", "y", "residual_out", "mean", "rstd")
_NORM_BACKWARD_ROLES = ("dy", "x", "weight", "mean", "rstd", "dresidual_out", "dx", "dweight", "dbias")


def _rows(x):
    return x.shape[:-1]


def _norm_forward(x, residual, weight, bias, kind, eps):
    h_dtype = x.dtype if residual is None else jnp.promote_types(x.dtype, residual.dtype)
    outputs = {"y": jax.ShapeDtypeStruct(x.shape, x.dtype),
               "residual_out": None if residual is None else jax.ShapeDtypeStruct(x.shape, h_dtype),
               "mean": jax.ShapeDtypeStruct(_rows(x), jnp.float32) if kind == "layer" else None,
               "rstd": jax.ShapeDtypeStruct(_rows(x), jnp.float32)}
    out = list(row_op("norm", _NORM_ROLES, {"x": x, "residual": residual, "weight": weight, "bias": bias}, outputs,
                      _options(kind, eps)))
    y = out.pop(0)
    h = out.pop(0) if residual is not None else None
    mean = out.pop(0) if kind == "layer" else None
    return y, h, mean, out.pop(0)


@partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _norm(x, residual, weight, bias, kind, eps):
    y, h, _, _ = _norm_forward(x, residual, weight, bias, kind, eps)
    return y, h


def _norm_fwd(x, residual, weight, bias, kind, eps):
    y, h, mean, rstd = _norm_forward(x, residual, weight, bias, kind, eps)
    dtypes = (x.dtype, None if residual is None else residual.dtype, None if bias is None else bias.dtype)
    return (y, h), (h if residual is not None else x, weight, mean, rstd, _Static(dtypes))


class _Static:
    """Dtypes carried through custom_vjp's residuals as a pytree leafless node."""

    def __init__(self, value):
        self.value = value


jax.tree_util.register_pytree_node(_Static, lambda s: ((), s.value), lambda value, _: _Static(value))


def _norm_bwd(kind, eps, saved, cotangents):
    h, weight, mean, rstd, static = saved
    x_dtype, residual_dtype, bias_dtype = static.value
    dy, dh = cotangents
    outputs = {"dx": jax.ShapeDtypeStruct(h.shape, h.dtype),
               "dweight": None if weight is None else jax.ShapeDtypeStruct(weight.shape, weight.dtype),
               "dbias": None if bias_dtype is None else jax.ShapeDtypeStruct(h.shape[-1:], bias_dtype)}
    out = list(row_op("norm_backward", _NORM_BACKWARD_ROLES,
                      {"dy": dy, "x": h, "weight": weight, "mean": mean, "rstd": rstd,
                       "dresidual_out": dh if residual_dtype is not None else None},
                      outputs, _options(kind, eps)))
    dx = out.pop(0)
    dweight = out.pop(0) if weight is not None else None
    dbias = out.pop(0) if bias_dtype is not None else None
    return (dx.astype(x_dtype), None if residual_dtype is None else dx.astype(residual_dtype), dweight, dbias)


_norm.defvjp(_norm_fwd, _norm_bwd)


def rms_norm(x, weight=None, eps=1e-6, residual=None):
    """RMSNorm over the last dimension: y, or (y, x + residual) with a residual."""
    y, h = _norm(x, residual, weight, None, "rms", float(eps))
    return y if residual is None else (y, h)


def layer_norm(x, weight=None, bias=None, eps=1e-5, residual=None):
    """LayerNorm over the last dimension: y, or (y, x + residual) with a residual."""
    y, h = _norm(x, residual, weight, bias, "layer", float(eps))
    return y if residual is None else (y, h)


# ---- softmax ------------------------------------------------------------------

def _softmax_call(x):
    return row_op("softmax", ("x", "y"), {"x": x}, {"y": jax.ShapeDtypeStruct(x.shape, x.dtype)}, "")[0]


@jax.custom_vjp
def softmax(x):
    """Softmax over the last dimension."""
    return _softmax_call(x)


def _softmax_fwd(x):
    y = _softmax_call(x)
    return y, y


def _softmax_bwd(y, dy):
    dx = row_op("softmax_backward", ("y", "dy", "dx"), {"y": y, "dy": dy},
                {"dx": jax.ShapeDtypeStruct(y.shape, dy.dtype)}, "")[0]
    return (dx,)


softmax.defvjp(_softmax_fwd, _softmax_bwd)


# ---- swiglu -------------------------------------------------------------------

_SWIGLU_ROLES = ("gate", "up", "x", "out")
_SWIGLU_BACKWARD_ROLES = ("dout", "gate", "up", "x", "dgate", "dup", "dx")


def _swiglu_call(gate, up, x):
    like = gate if gate is not None else x
    shape = like.shape if gate is not None else (*x.shape[:-1], x.shape[-1] // 2)
    return row_op("swiglu", _SWIGLU_ROLES, {"gate": gate, "up": up, "x": x},
                  {"out": jax.ShapeDtypeStruct(shape, like.dtype)}, "")[0]


@jax.custom_vjp
def _swiglu(gate, up, x):
    return _swiglu_call(gate, up, x)


def _swiglu_fwd(gate, up, x):
    return _swiglu_call(gate, up, x), (gate, up, x)


def _swiglu_bwd(saved, dout):
    gate, up, x = saved
    if x is not None:
        dx = row_op("swiglu_backward", _SWIGLU_BACKWARD_ROLES, {"dout": dout, "x": x},
                    {"dx": jax.ShapeDtypeStruct(x.shape, x.dtype)}, "")[0]
        return None, None, dx
    dgate, dup = row_op("swiglu_backward", _SWIGLU_BACKWARD_ROLES, {"dout": dout, "gate": gate, "up": up},
                        {"dgate": jax.ShapeDtypeStruct(gate.shape, gate.dtype),
                         "dup": jax.ShapeDtypeStruct(up.shape, up.dtype)}, "")
    return dgate, dup, None


_swiglu.defvjp(_swiglu_fwd, _swiglu_bwd)


def swiglu(gate=None, up=None, x=None):
    """silu(gate) · up: gate and up, or x (..., 2n) with them interleaved."""
    return _swiglu(gate, up, x)


# ---- cross_entropy --------------------------------------------------------------

_CROSS_ENTROPY_ROLES = ("logits", "labels", "loss", "lse", "dlogits")


def _cross_entropy_call(logits, labels, reduction, ignore_index, label_smoothing, gradient):
    options = f"{reduction} {int(ignore_index)} {float(label_smoothing).hex()}"  # CrossEntropyTraits::key
    loss_shape = logits.shape[:-1] if reduction == "none" else (1,)
    outputs = {"loss": jax.ShapeDtypeStruct(loss_shape, jnp.float32),
               "dlogits": jax.ShapeDtypeStruct(logits.shape, logits.dtype) if gradient else None}
    out = row_op("cross_entropy", _CROSS_ENTROPY_ROLES, {"logits": logits, "labels": labels}, outputs, options)
    loss = out[0] if reduction == "none" else out[0].reshape(())
    return loss, (out[1] if gradient else None)


@partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4))
def _cross_entropy(logits, labels, reduction, ignore_index, label_smoothing):
    return _cross_entropy_call(logits, labels, reduction, ignore_index, label_smoothing, False)[0]


def _cross_entropy_fwd(logits, labels, reduction, ignore_index, label_smoothing):
    loss, grad = _cross_entropy_call(logits, labels, reduction, ignore_index, label_smoothing, True)
    return loss, (grad, labels)


def _cross_entropy_bwd(reduction, ignore_index, label_smoothing, saved, dloss):
    grad, labels = saved
    dloss = jnp.reshape(dloss.astype(jnp.float32), (-1,))
    # The forward's gradient times dloss, in place (rows whose dloss is 1 untouched).
    scaled = jax.ffi.ffi_call("warpforge_row_op", jax.ShapeDtypeStruct(grad.shape, grad.dtype),
                              input_output_aliases={0: 0})(grad, dloss, op="cross_entropy_scale",
                                                           present=np.int64(0b11), options="")
    return scaled, None


_cross_entropy.defvjp(_cross_entropy_fwd, _cross_entropy_bwd)


def cross_entropy(logits, labels, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """Cross-entropy of logits (..., V) against integer labels; the gradient
    comes from the forward's one pass over the logits."""
    return _cross_entropy(logits, labels, reduction, int(ignore_index), float(label_smoothing))


# ---- rms_norm_quantize ------------------------------------------------------------

_NORM_QUANTIZE_ROLES = ("x", "residual", "weight", "data", "scales", "residual_out", "rstd", "y")
_JAX_CODES = {"e4m3": jnp.float8_e4m3fn, "e5m2": jnp.float8_e5m2, "e2m1": jnp.uint8,
              "e8m0": getattr(jnp, "float8_e8m0fnu", jnp.uint8)}


def rms_norm_quantize(x, weight=None, eps=1e-6, format="mxfp8", residual=None, normalize=True):
    """RMSNorm fused with block-scaled quantization: (data, scales) in
    GemmAmax's layouts (data (rows, K), FP4 packed (rows, K/2) uint8; scales
    1-D in the 128x4 layout), and h = x + residual with a residual. No gradient."""
    data, scale, vec = quantize_format(format)
    k = x.shape[-1]
    rows = x.size // k if k else 0
    outputs = {"data": jax.ShapeDtypeStruct((rows, k // 2 if data == "e2m1" else k), _JAX_CODES[data]),
               "scales": jax.ShapeDtypeStruct((scale_bytes(rows, k, vec),), _JAX_CODES[scale]),
               "residual_out": None if residual is None else jax.ShapeDtypeStruct(
                   x.shape, jnp.promote_types(x.dtype, residual.dtype))}
    out = row_op("rms_norm_quantize", _NORM_QUANTIZE_ROLES, {"x": x, "residual": residual, "weight": weight}, outputs,
                 f"{format} {float(eps).hex()} {1 if normalize else 0}")
    return tuple(out) if residual is not None else (out[0], out[1])
