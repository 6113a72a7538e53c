"""torch.nn modules on warpforge's row kernels, with PyTorch's arguments
(RMSNorm, LayerNorm, Softmax, CrossEntropyLoss; SwiGLU, which PyTorch has
no module for, takes gate and up, or both interleaved in one tensor):

    norm = warpforge.nn.RMSNorm(4096, eps=1e-6, device="cuda", dtype=torch.bfloat16)
    y = norm(x)                      # as torch.nn.RMSNorm
    y, h = norm(x, residual=r)       # h = x + r, normalized, returned for the next layer

Each forward is one torch.ops.warpforge operator (differentiable, traceable
by torch.compile(fullgraph=True), capturable in a CUDA graph)."""

import numbers

import torch

from . import torch_rows


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


def _flatten(x, shape):
    """x with its normalized dimensions (the last len(shape)) as one."""
    if tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise ValueError(f"normalized_shape {shape} does not match the last dimensions of the input {tuple(x.shape)}")
    return x if len(shape) == 1 else x.reshape(*x.shape[:x.dim() - len(shape)], -1)


def _flat(parameter):
    return None if parameter is None else parameter.reshape(-1)


def _normalized(norm, x, residual, shape):
    """norm(x, residual) over the normalized dimensions flattened into one,
    its y (and h) in x's shape again."""
    out = norm(_flatten(x, shape), None if residual is None else _flatten(residual, shape))
    if residual is None:
        return out.reshape(x.shape)
    return out[0].reshape(x.shape), out[1].reshape(x.shape)


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm's arguments (eps None: torch.finfo(input dtype).eps)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x, residual=None):
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        return _normalized(lambda x, r: torch_rows.rms_norm(x, _flat(self.weight), eps, r), x, residual,
                           self.normalized_shape)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm's arguments."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = torch.nn.Parameter(torch.zeros(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x, residual=None):
        return _normalized(lambda x, r: torch_rows.layer_norm(x, _flat(self.weight), _flat(self.bias), self.eps, r),
                           x, residual, self.normalized_shape)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Softmax(torch.nn.Module):
    """torch.nn.Softmax over the last dimension (dim must name it)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if self.dim not in (-1, x.dim() - 1):
            raise ValueError(f"warpforge.nn.Softmax takes the last dimension; dim {self.dim} of a {x.dim()}-D input")
        return torch_rows.softmax(x)

    def extra_repr(self):
        return f"dim={self.dim}"


class SwiGLU(torch.nn.Module):
    """silu(gate) · up. forward(gate, up), or forward(x) with x (..., 2n):
    interleaved=False takes gate and up as x's halves (x.chunk(2, -1)),
    interleaved=True as its even and odd elements."""

    def __init__(self, interleaved=False):
        super().__init__()
        self.interleaved = interleaved

    def forward(self, gate, up=None):
        if up is not None:
            return torch_rows.swiglu(gate, up)
        if self.interleaved:
            return torch_rows.swiglu(x=gate)
        first, second = gate.chunk(2, dim=-1)
        return torch_rows.swiglu(first, second)

    def extra_repr(self):
        return f"interleaved={self.interleaved}"


class CrossEntropyLoss(torch.nn.Module):
    """torch.nn.CrossEntropyLoss for logits (..., C) and class indices (...):
    ignore_index, reduction ('mean', 'sum', 'none') and label_smoothing as
    PyTorch's; per-class weights and probabilities as targets are not taken.
    The gradient is computed with the loss, in its one pass over the logits."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        if weight is not None:
            raise ValueError("warpforge.nn.CrossEntropyLoss takes no class weights (weight must be None)")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction '{reduction}': accepted mean, sum, none")
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, logits, target):
        if target.is_floating_point():
            raise ValueError("warpforge.nn.CrossEntropyLoss takes class indices as targets, not probabilities")
        return torch_rows.cross_entropy(logits, target, self.reduction, self.ignore_index, self.label_smoothing)

    def extra_repr(self):
        return f"ignore_index={self.ignore_index}, reduction={self.reduction}, label_smoothing={self.label_smoothing}"
