"""torch.nn modules on warpforge's row kernels, with PyTorch's arguments:

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
        weight = None if self.weight is None else self.weight.reshape(-1)
        flat_residual = None if residual is None else _flatten(residual, self.normalized_shape)
        out = torch_rows.rms_norm(_flatten(x, self.normalized_shape), weight, eps, flat_residual)
        if residual is None:
            return out.reshape(x.shape)
        return out[0].reshape(x.shape), out[1].reshape(x.shape)

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
        weight = None if self.weight is None else self.weight.reshape(-1)
        bias = None if self.bias is None else self.bias.reshape(-1)
        flat_residual = None if residual is None else _flatten(residual, self.normalized_shape)
        out = torch_rows.layer_norm(_flatten(x, self.normalized_shape), weight, bias, self.eps, flat_residual)
        if residual is None:
            return out.reshape(x.shape)
        return out[0].reshape(x.shape), out[1].reshape(x.shape)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
