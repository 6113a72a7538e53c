"""The row ops as PyTorch operators (imported by warpforge.torch):
torch.ops.warpforge.norm and norm_backward (RMSNorm and LayerNorm with a
fused residual), with fake implementations for torch.compile(fullgraph=True)
and autograd; warpforge.nn holds the modules built on them. CUDA tensors run
on torch's current stream (an op compiled at its description's first call,
then one C++ call a run: CUDA-graph safe); CPU tensors on the simulator."""

import torch

from . import _warpforge
from ._frameworks import to_tensor

_LIBRARY = torch.library.Library("warpforge", "FRAGMENT")
_LIBRARY.define("norm(Tensor x, Tensor? residual, Tensor? weight, Tensor? bias, str kind, float eps) "
                "-> (Tensor, Tensor, Tensor, Tensor)")
_LIBRARY.define("norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor? mean, Tensor rstd, "
                "Tensor? dresidual_out, str kind, float eps, bool weight_grad, ScalarType? bias_grad) "
                "-> (Tensor, Tensor, Tensor)")

try:  # the raw handle of the current stream (less host time than a Stream object)
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def rows_ready(t):
    """t itself where the row ops read it as it is (last dimension contiguous,
    the leading ones collapsing into one row stride), else a contiguous copy."""
    if t is None or t.is_contiguous():
        return t
    shape, strides = t.shape, t.stride()
    if t.dim() >= 1 and shape[-1] > 1 and strides[-1] != 1:
        return t.contiguous()
    expected = None
    for size, stride in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        if size == 1:
            continue
        if expected is not None and stride != expected:
            return t.contiguous()
        expected = stride * size
    return t


def _describe(t):
    return None if t is None else (t.shape, t.stride(), t.dtype, t.data_ptr() % 16)


def run(cache, factory, tensors, options):
    """Runs the cached op of `factory` (a _warpforge *_op) for these tensors
    (None where absent) and options: on CUDA tensors by data addresses on
    torch's current stream, on CPU ones through DLPack (the simulator)."""
    first = next(t for t in tensors if t is not None)
    key = (first.device, options, *map(_describe, tensors))
    op = cache.get(key)
    if op is None:
        op = cache.setdefault(key, factory(_views(tensors), *options))
    if first.is_cuda:
        op.execute_addresses([0 if t is None else t.data_ptr() for t in tensors],
                             stream=_raw_stream(first.device.index))
    else:
        op.execute(_views(tensors))


def _views(tensors):
    return [None if t is None else to_tensor(t.detach(), "tensor") for t in tensors]


# ---- norm --------------------------------------------------------------------

_NORMS = {}
_NORM_BACKWARDS = {}


def _statistic(x, present):
    return torch.empty(x.shape[:-1] if present else (0,), dtype=torch.float32, device=x.device)


def _norm_outputs(x, residual, kind, make):
    h_dtype = x.dtype if residual is None else torch.promote_types(x.dtype, residual.dtype)
    y = make(x.shape, x.dtype)
    h = make(x.shape if residual is not None else (0,), h_dtype)
    mean = make(x.shape[:-1] if kind == "layer" else (0,), torch.float32)
    rstd = make(x.shape[:-1], torch.float32)
    return y, h, mean, rstd


def _norm(x, residual, weight, bias, kind, eps):
    x, residual = rows_ready(x), rows_ready(residual)
    y, h, mean, rstd = _norm_outputs(x, residual, kind,
                                     lambda shape, dtype: torch.empty(shape, dtype=dtype, device=x.device))
    run(_NORMS, _warpforge.norm_op,
        [x, residual, weight, bias, y, h if residual is not None else None, mean if kind == "layer" else None, rstd],
        (kind, eps))
    return y, h, mean, rstd


def _norm_fake(x, residual, weight, bias, kind, eps):
    return _norm_outputs(x, residual, kind, lambda shape, dtype: x.new_empty(shape, dtype=dtype))


def _norm_backward(dy, x, weight, mean, rstd, dresidual_out, kind, eps, weight_grad, bias_grad):
    dy, x, dresidual_out = rows_ready(dy), rows_ready(x), rows_ready(dresidual_out)
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight) if weight_grad else x.new_empty((0,))
    dbias = torch.empty(x.shape[-1:], dtype=bias_grad, device=x.device) if bias_grad is not None else x.new_empty((0,))
    run(_NORM_BACKWARDS, _warpforge.norm_backward_op,
        [dy, x, weight, mean if kind == "layer" else None, rstd, dresidual_out, dx, dweight if weight_grad else None,
         dbias if bias_grad is not None else None],
        (kind, eps))
    return dx, dweight, dbias


def _norm_backward_fake(dy, x, weight, mean, rstd, dresidual_out, kind, eps, weight_grad, bias_grad):
    return (x.new_empty(x.shape), weight.new_empty(weight.shape) if weight_grad else x.new_empty((0,)),
            x.new_empty(x.shape[-1:], dtype=bias_grad) if bias_grad is not None else x.new_empty((0,)))


def _norm_setup_context(ctx, inputs, output):
    x, residual, weight, bias, kind, eps = inputs
    _, h, mean, rstd = output
    ctx.save_for_backward(h if residual is not None else x, weight, mean, rstd)
    ctx.kind, ctx.eps = kind, eps
    ctx.dtypes = (x.dtype, None if residual is None else residual.dtype, None if bias is None else bias.dtype)


def _norm_autograd(ctx, dy, dh, dmean, drstd):
    h, weight, mean, rstd = ctx.saved_tensors
    x_dtype, residual_dtype, bias_dtype = ctx.dtypes
    weight_grad = weight is not None and ctx.needs_input_grad[2]
    bias_grad = bias_dtype if ctx.needs_input_grad[3] else None
    dresidual = dh if residual_dtype is not None and dh is not None and dh.numel() else None
    dx, dweight, dbias = torch.ops.warpforge.norm_backward(
        dy, h, weight, mean if ctx.kind == "layer" else None, rstd, dresidual, ctx.kind, ctx.eps, weight_grad, bias_grad)
    return (dx.to(x_dtype), None if residual_dtype is None else dx.to(residual_dtype),
            dweight if weight_grad else None, dbias if bias_grad is not None else None, None, None)


for _key in ("CUDA", "CPU"):
    _LIBRARY.impl("norm", _norm, _key)
    _LIBRARY.impl("norm_backward", _norm_backward, _key)
torch.library.register_fake("warpforge::norm", _norm_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::norm_backward", _norm_backward_fake, lib=_LIBRARY)
torch.library.register_autograd("warpforge::norm", _norm_autograd, setup_context=_norm_setup_context, lib=_LIBRARY)

norm = torch.ops.warpforge.norm
norm_backward = torch.ops.warpforge.norm_backward


def rms_norm(x, weight=None, eps=1e-6, residual=None):
    """RMSNorm over the last dimension (differentiable): y, or (y, x +
    residual) with a residual (the sum in the promoted dtype, for the next
    layer)."""
    y, h, _, _ = norm(x, residual, weight, None, "rms", float(eps))
    return y if residual is None else (y, h)


def layer_norm(x, weight=None, bias=None, eps=1e-5, residual=None):
    """LayerNorm over the last dimension (differentiable), as rms_norm."""
    y, h, _, _ = norm(x, residual, weight, bias, "layer", float(eps))
    return y if residual is None else (y, h)
