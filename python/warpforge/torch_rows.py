"""The row ops as PyTorch operators (imported by warpforge.torch), with fake
implementations for torch.compile(fullgraph=True) and autograd:
torch.ops.warpforge.norm / norm_backward (RMSNorm and LayerNorm with a fused
residual), softmax / softmax_backward, swiglu / swiglu_backward,
cross_entropy (the loss and, when asked, its gradient in the same pass) /
cross_entropy_scale (the backward: the gradient times dloss, in place), and
rms_norm_quantize (no gradient). warpforge.nn holds the modules built on
them. CUDA tensors run on torch's current stream (an op compiled at its
description's first call, then one C++ call a run: CUDA-graph safe); CPU
tensors on the simulator.

Where warpforge._warpforge_torch was built (CPP_KERNELS), all but
rms_norm_quantize have C++ kernels and autograd (python/src/torch/
row_kernels.inc): a call enters no Python past the operator's own. The
Python kernels and autograd below are the same semantics for builds
without it."""

import importlib

import torch

from . import _warpforge
from ._frameworks import to_tensor, untraced_torch_tensor
from .rows import quantize_format, scale_bytes

_LIBRARY = torch.library.Library("warpforge", "FRAGMENT")
_LIBRARY.define("norm(Tensor x, Tensor? residual, Tensor? weight, Tensor? bias, str kind, float eps) "
                "-> (Tensor, Tensor, Tensor, Tensor)")
_LIBRARY.define("norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor? mean, Tensor rstd, "
                "Tensor? dresidual_out, str kind, float eps, bool weight_grad, ScalarType? bias_grad) "
                "-> (Tensor, Tensor, Tensor)")
_LIBRARY.define("softmax(Tensor x) -> Tensor")
_LIBRARY.define("softmax_backward(Tensor y, Tensor dy) -> Tensor")
_LIBRARY.define("swiglu(Tensor? gate, Tensor? up, Tensor? x) -> Tensor")
_LIBRARY.define("swiglu_backward(Tensor dout, Tensor? gate, Tensor? up, Tensor? x) -> (Tensor, Tensor, Tensor)")
_LIBRARY.define("cross_entropy(Tensor logits, Tensor labels, str reduction, int ignore_index, float label_smoothing, "
                "bool gradient) -> (Tensor, Tensor)")
_LIBRARY.define("cross_entropy_scale(Tensor(a!) dlogits, Tensor dloss) -> ()")
_LIBRARY.define("rms_norm_quantize(Tensor x, Tensor? residual, Tensor? weight, str format, float eps, bool normalize) "
                "-> (Tensor, Tensor, Tensor, Tensor)")

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


def run(cache, factory, tensors, options=""):
    """Runs the cached op of `factory` (a _warpforge *_op) for these tensors
    (None where absent) and options' text: on CUDA tensors by data addresses
    on torch's current stream, on CPU ones through DLPack (the simulator)."""
    first = next(t for t in tensors if t is not None)
    key = (first.device, options, *map(_describe, tensors))
    op = cache.get(key)
    if op is None:
        op = cache.setdefault(key, factory(_views(tensors), options))
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


def norm_options(kind, eps):
    """The norm ops' options as text (python/src/row_ops.hpp: NormTraits::key)."""
    return f"{kind} {float(eps).hex()}"


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
        norm_options(kind, eps))
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
        norm_options(kind, eps))
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
    dx, dweight, dbias = _backward(torch.ops.warpforge.norm_backward, _norm_backward)(
        dy, h, weight, mean if ctx.kind == "layer" else None, rstd, dresidual, ctx.kind, ctx.eps, weight_grad, bias_grad)
    return (dx.to(x_dtype), None if residual_dtype is None else dx.to(residual_dtype),
            dweight if weight_grad else None, dbias if bias_grad is not None else None, None, None)


# The C++ kernels and autograd (warpforge._warpforge_torch, imported by
# warpforge.torch before this module) where that module was built.
CPP_KERNELS = torch._C._dispatch_has_kernel_for_dispatch_key("warpforge::norm", "CUDA")
if not CPP_KERNELS:
    for _key in ("CUDA", "CPU"):
        _LIBRARY.impl("norm", _norm, _key)
        _LIBRARY.impl("norm_backward", _norm_backward, _key)
    torch.library.register_autograd("warpforge::norm", _norm_autograd, setup_context=_norm_setup_context,
                                    lib=_LIBRARY)
torch.library.register_fake("warpforge::norm", _norm_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::norm_backward", _norm_backward_fake, lib=_LIBRARY)

norm = torch.ops.warpforge.norm
norm_backward = torch.ops.warpforge.norm_backward


def _eager(impl, setup_context, autograd, materialize_grads=True):
    """An operator's autograd without torch.library's wrapper (its argument
    normalization and redispatch cost more host time a call than the kernel
    at 4096 x 4096): the operator's own forward, context and backward as an
    autograd.Function, for eager calls; traced code (torch.compile) keeps
    the operator (see _call). materialize_grads=False: outputs nobody used
    get None for a gradient, not zeros of their size (cross-entropy's
    logits-sized gradient output)."""

    class Eager(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.set_materialize_grads(materialize_grads)
            outputs = impl(*inputs)
            setup_context(ctx, inputs, outputs)
            return outputs

        @staticmethod
        def backward(ctx, *grads):
            return autograd(ctx, *grads)

    return Eager


# The C++ module's direct calls (warpforge._warpforge_torch.norm, ...: the
# operator's autograd kernel called without torch.ops' Python packet, schema
# parsing and boxed dispatch), where it was built; each returns NotImplemented
# for a call that must go through the operator (a tensor subclass, a torch
# function or dispatch mode, a functorch transform, the profiler).
_DIRECT = importlib.import_module("._warpforge_torch", __package__) if CPP_KERNELS else None


def _call(op, direct, eager, *args):
    if torch.compiler.is_compiling():
        return op(*args)
    if CPP_KERNELS:
        out = direct(*args)
        return op(*args) if out is NotImplemented else out
    return eager.apply(*args)


def _backward(op, impl):
    """What a backward calls: its implementation itself on plain tensors (the
    operator's dispatch costs host time a call that the kernel at 4096 rows
    does not: see _eager), else the operator (torch.compile traces the
    backward with fake tensors, outside Dynamo: untraced_torch_tensor)."""
    return lambda first, *rest: (impl if untraced_torch_tensor(first) else op)(first, *rest)


_EAGER_NORM = _eager(_norm, _norm_setup_context, _norm_autograd)


def rms_norm(x, weight=None, eps=1e-6, residual=None):
    """RMSNorm over the last dimension (differentiable): y, or (y, x +
    residual) with a residual (the sum in the promoted dtype, for the next
    layer)."""
    y, h, _, _ = _call(norm, _DIRECT and _DIRECT.norm, _EAGER_NORM, x, residual, weight, None, "rms", float(eps))
    return y if residual is None else (y, h)


def layer_norm(x, weight=None, bias=None, eps=1e-5, residual=None):
    """LayerNorm over the last dimension (differentiable), as rms_norm."""
    y, h, _, _ = _call(norm, _DIRECT and _DIRECT.norm, _EAGER_NORM, x, residual, weight, bias, "layer", float(eps))
    return y if residual is None else (y, h)


# ---- softmax ------------------------------------------------------------------

_SOFTMAXES = {}
_SOFTMAX_BACKWARDS = {}


def _softmax(x):
    x = rows_ready(x)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    run(_SOFTMAXES, _warpforge.softmax_op, [x, y])
    return y


def _softmax_backward(y, dy):
    y, dy = rows_ready(y), rows_ready(dy)
    dx = torch.empty(y.shape, dtype=dy.dtype, device=y.device)
    run(_SOFTMAX_BACKWARDS, _warpforge.softmax_backward_op, [y, dy, dx])
    return dx


def _softmax_setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_autograd(ctx, dy):
    (y,) = ctx.saved_tensors
    return _backward(torch.ops.warpforge.softmax_backward, _softmax_backward)(y, dy)


# ---- swiglu -------------------------------------------------------------------

_SWIGLUS = {}
_SWIGLU_BACKWARDS = {}


def _swiglu_out(gate, x, make):
    like = gate if gate is not None else x
    shape = like.shape if gate is not None else (*x.shape[:-1], x.shape[-1] // 2)
    return make(shape, like.dtype, like)


def _swiglu(gate, up, x):
    gate, up, x = rows_ready(gate), rows_ready(up), rows_ready(x)
    out = _swiglu_out(gate, x, lambda shape, dtype, like: torch.empty(shape, dtype=dtype, device=like.device))
    run(_SWIGLUS, _warpforge.swiglu_op, [gate, up, x, out])
    return out


def _swiglu_fake(gate, up, x):
    return _swiglu_out(gate, x, lambda shape, dtype, like: like.new_empty(shape, dtype=dtype))


def _swiglu_backward(dout, gate, up, x):
    dout, gate, up, x = rows_ready(dout), rows_ready(gate), rows_ready(up), rows_ready(x)
    empty = dout.new_empty((0,))
    if x is not None:
        dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        run(_SWIGLU_BACKWARDS, _warpforge.swiglu_backward_op, [dout, None, None, x, None, None, dx])
        return empty, empty, dx
    dgate, dup = torch.empty_like(gate, memory_format=torch.contiguous_format), torch.empty_like(
        up, memory_format=torch.contiguous_format)
    run(_SWIGLU_BACKWARDS, _warpforge.swiglu_backward_op, [dout, gate, up, None, dgate, dup, None])
    return dgate, dup, empty


def _swiglu_backward_fake(dout, gate, up, x):
    empty = dout.new_empty((0,))
    if x is not None:
        return empty, empty, x.new_empty(x.shape)
    return gate.new_empty(gate.shape), up.new_empty(up.shape), empty


def _swiglu_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _swiglu_autograd(ctx, dout):
    gate, up, x = ctx.saved_tensors
    dgate, dup, dx = _backward(torch.ops.warpforge.swiglu_backward, _swiglu_backward)(dout, gate, up, x)
    if x is not None:
        return None, None, dx
    return dgate, dup, None


# ---- cross_entropy ------------------------------------------------------------

_CROSS_ENTROPIES = {}
_CROSS_ENTROPY_SCALES = {}


def cross_entropy_options(reduction, ignore_index, label_smoothing):
    """The cross-entropy op's options as text (CrossEntropyTraits::key)."""
    return f"{reduction} {int(ignore_index)} {float(label_smoothing).hex()}"


def _cross_entropy_outputs(logits, reduction, gradient, make):
    rows = logits.shape[:-1]
    loss = make(rows if reduction == "none" else (), torch.float32)
    grad = make(logits.shape if gradient else (0,), logits.dtype)
    return loss, grad


def _cross_entropy(logits, labels, reduction, ignore_index, label_smoothing, gradient):
    logits, labels = rows_ready(logits), labels.contiguous()
    loss, grad = _cross_entropy_outputs(logits, reduction, gradient,
                                        lambda shape, dtype: torch.empty(shape, dtype=dtype, device=logits.device))
    run(_CROSS_ENTROPIES, _warpforge.cross_entropy_op,
        [logits, labels, loss, None, grad if gradient else None],
        cross_entropy_options(reduction, ignore_index, label_smoothing))
    return loss, grad


def _cross_entropy_fake(logits, labels, reduction, ignore_index, label_smoothing, gradient):
    return _cross_entropy_outputs(logits, reduction, gradient, lambda shape, dtype: logits.new_empty(shape, dtype=dtype))


def _cross_entropy_scale(dlogits, dloss):
    run(_CROSS_ENTROPY_SCALES, _warpforge.cross_entropy_scale_op, [dlogits, dloss.float().contiguous()])


def _cross_entropy_setup_context(ctx, inputs, output):
    _, grad = output
    ctx.gradient = inputs[5]
    ctx.save_for_backward(grad)


def _cross_entropy_autograd(ctx, dloss, _dgrad):
    if not ctx.gradient:
        raise _warpforge.OpsError("warpforge.cross_entropy was called without its gradient (gradient=False) but "
                                  "is being differentiated: call it with gradient=True")
    (grad,) = ctx.saved_tensors
    if dloss is None:  # the loss unused
        return None, None, None, None, None, None
    # The forward's gradient (for dloss = 1), times dloss in place: rows whose
    # dloss is 1 are not touched (loss.backward() moves no bytes here).
    _backward(torch.ops.warpforge.cross_entropy_scale, _cross_entropy_scale)(grad, dloss)
    return grad, None, None, None, None, None


# ---- rms_norm_quantize ----------------------------------------------------------

_NORM_QUANTIZES = {}


def _norm_quantize_outputs(x, residual, fmt, make):
    data, scale, vec = quantize_format(fmt)
    rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    k = x.shape[-1]
    codes = make((rows, k // 2) if data == "e2m1" else (rows, k), torch.uint8 if data == "e2m1" else _torch_dtype(data))
    scales = make((scale_bytes(rows, k, vec),), _torch_dtype(scale))
    h_dtype = x.dtype if residual is None else torch.promote_types(x.dtype, residual.dtype)
    h = make(x.shape if residual is not None else (0,), h_dtype)
    rstd = make(x.shape[:-1], torch.float32)
    return codes, scales, h, rstd


def _torch_dtype(name):
    return {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
            "e8m0": getattr(torch, "float8_e8m0fnu", torch.uint8)}[name]


def _rms_norm_quantize(x, residual, weight, format, eps, normalize):
    x, residual = rows_ready(x), rows_ready(residual)
    codes, scales, h, rstd = _norm_quantize_outputs(
        x, residual, format, lambda shape, dtype: torch.empty(shape, dtype=dtype, device=x.device))
    run(_NORM_QUANTIZES, _warpforge.rms_norm_quantize_op,
        [x, residual, weight, codes, scales, h if residual is not None else None, rstd if normalize else None, None],
        f"{format} {float(eps).hex()} {1 if normalize else 0}")
    return codes, scales, h, rstd


def _rms_norm_quantize_fake(x, residual, weight, format, eps, normalize):
    return _norm_quantize_outputs(x, residual, format, lambda shape, dtype: x.new_empty(shape, dtype=dtype))


for _key in ("CUDA", "CPU"):
    for _name, _impl in (("softmax", _softmax), ("softmax_backward", _softmax_backward), ("swiglu", _swiglu),
                         ("swiglu_backward", _swiglu_backward), ("cross_entropy", _cross_entropy),
                         ("cross_entropy_scale", _cross_entropy_scale)):
        if not CPP_KERNELS:
            _LIBRARY.impl(_name, _impl, _key)
    _LIBRARY.impl("rms_norm_quantize", _rms_norm_quantize, _key)
torch.library.register_fake("warpforge::softmax", lambda x: x.new_empty(x.shape), lib=_LIBRARY)
torch.library.register_fake("warpforge::softmax_backward", lambda y, dy: dy.new_empty(y.shape), lib=_LIBRARY)
torch.library.register_fake("warpforge::swiglu", _swiglu_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::swiglu_backward", _swiglu_backward_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::cross_entropy", _cross_entropy_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::cross_entropy_scale", lambda dlogits, dloss: None, lib=_LIBRARY)
torch.library.register_fake("warpforge::rms_norm_quantize", _rms_norm_quantize_fake, lib=_LIBRARY)
if not CPP_KERNELS:
    torch.library.register_autograd("warpforge::softmax", _softmax_autograd, setup_context=_softmax_setup_context,
                                    lib=_LIBRARY)
    torch.library.register_autograd("warpforge::swiglu", _swiglu_autograd, setup_context=_swiglu_setup_context,
                                    lib=_LIBRARY)
    torch.library.register_autograd("warpforge::cross_entropy", _cross_entropy_autograd,
                                    setup_context=_cross_entropy_setup_context, lib=_LIBRARY)

_EAGER_SOFTMAX = _eager(_softmax, _softmax_setup_context, _softmax_autograd)
_EAGER_SWIGLU = _eager(_swiglu, _swiglu_setup_context, _swiglu_autograd)
_EAGER_CROSS_ENTROPY = _eager(_cross_entropy, _cross_entropy_setup_context, _cross_entropy_autograd,
                              materialize_grads=False)


def softmax(x):
    """Softmax over the last dimension (differentiable)."""
    return _call(torch.ops.warpforge.softmax, _DIRECT and _DIRECT.softmax, _EAGER_SOFTMAX, x)


def swiglu(gate=None, up=None, x=None):
    """silu(gate) · up (differentiable): gate and up, or x (..., 2n) with them interleaved."""
    return _call(torch.ops.warpforge.swiglu, _DIRECT and _DIRECT.swiglu, _EAGER_SWIGLU, gate, up, x)


def cross_entropy(logits, labels, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """Cross-entropy of logits (..., V) against integer labels (differentiable:
    the gradient is computed with the loss, in the same pass, when logits
    require it)."""
    loss, _ = _call(torch.ops.warpforge.cross_entropy, _DIRECT and _DIRECT.cross_entropy, _EAGER_CROSS_ENTROPY, logits,
                    labels, reduction,
                    int(ignore_index), float(label_smoothing), logits.requires_grad)
    return loss


def rms_norm_quantize(x, weight=None, eps=1e-6, format="mxfp8", residual=None, normalize=True):  # noqa: A002
    """RMSNorm fused with block-scaled quantization (ops::RmsNormQuantize):
    (data, scales) as warpforge.quantize gives them for x (rows, K): data
    (rows, K) fp8 or (rows, K/2) uint8 of packed FP4, scales 1-D in the
    128x4 layout; with a residual also h = x + residual."""
    codes, scales, h, _ = torch.ops.warpforge.rms_norm_quantize(x, residual, weight, format, float(eps), normalize)
    return (codes, scales) if residual is None else (codes, scales, h)
