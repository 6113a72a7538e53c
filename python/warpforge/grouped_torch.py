"""The grouped GEMM as PyTorch operators (warpforge.torch imports this):

    torch.ops.warpforge.grouped_mm(a, b, offs=None, out_dtype=None)
        torch._grouped_mm's 2-D x 3-D and 2-D x 2-D forms; differentiable in
        the 2-D x 3-D form (dA = dD·Bᵀ grouped, dB = Aᵀ·dD grouped over the
        same offsets, both by the same op).
    torch.ops.warpforge.grouped_mm_packed(a, codes, scales, offs, n, format, out_dtype=None)
        bf16 tokens against PackedWeights' tensors, given as their bytes (uint8) (not differentiable: the
        weights are frozen and A's gradient through them is not provided).

Each has a fake implementation, so it traces into torch.compile graphs
without a break; CUDA tensors run on torch's current stream (no allocation
but the output, no synchronization: capturable in a CUDA graph once the
first call has compiled the kernel), CPU tensors on the simulator.
"""

import torch

from . import grouped
from ._frameworks import framework_dtype

_LIBRARY = torch.library.Library("warpforge", "FRAGMENT")
_LIBRARY.define("grouped_mm(Tensor a, Tensor b, Tensor? offs=None, ScalarType? out_dtype=None) -> Tensor")
_LIBRARY.define("grouped_mm_packed(Tensor a, Tensor codes, Tensor scales, Tensor? offs, int n, str format, "
                "ScalarType? out_dtype=None) -> Tensor")


def _shape(a, b, offs):
    if a.dim() == 2 and b.dim() == 3:
        return (a.shape[0], b.shape[2])
    if a.dim() == 2 and b.dim() == 2:
        return (a.shape[0], b.shape[1]) if offs is None else (offs.shape[0], a.shape[0], b.shape[1])
    return (1, 1)  # the op refuses it, saying why


def _grouped_mm(a, b, offs=None, out_dtype=None):
    d = torch.empty(_shape(a, b, offs), dtype=out_dtype or a.dtype, device=a.device)
    return grouped.run(a, b, offs, d)


def _grouped_mm_fake(a, b, offs=None, out_dtype=None):
    return a.new_empty(_shape(a, b, offs), dtype=out_dtype or a.dtype)


def _as(t, name):
    return t if name in ("e2m1", "u8") else t.view(framework_dtype("torch", name))


def _grouped_mm_packed(a, codes, scales, offs, n, format, out_dtype=None):
    # codes and scales arrive as their bytes (uint8): the format names their dtypes.
    data, scale, _ = grouped._format(format)
    weights = grouped.PackedWeights(_as(codes, data), _as(scales, scale), format, 0, a.shape[-1], n)
    d = torch.empty((a.shape[0], n), dtype=out_dtype or a.dtype, device=a.device)
    return grouped.run(a, weights, offs, d)


def _grouped_mm_packed_fake(a, codes, scales, offs, n, format, out_dtype=None):
    grouped._format(format)
    return a.new_empty((a.shape[0], n), dtype=out_dtype or a.dtype)


def _setup_context(ctx, inputs, output):
    a, b, offs, _ = inputs
    ctx.save_for_backward(a, b, offs)


def _backward(ctx, grad):
    a, b, offs = ctx.saved_tensors
    if b.dim() != 3:
        raise NotImplementedError("torch.ops.warpforge.grouped_mm is differentiable in the 2-D x 3-D form only")
    grad = grad.contiguous().to(a.dtype)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = torch.ops.warpforge.grouped_mm(grad, b.transpose(-2, -1), offs, a.dtype)
    if ctx.needs_input_grad[1]:
        if b.stride(-2) == 1 and b.shape[-2] > 1:
            # B with K contiguous (torch._grouped_mm's weights): dBᵀ = dDᵀ·A per
            # group, so that dB has B's strides. Computed as (G, K, N) row-major,
            # autograd would copy it into B's layout (a transposing copy of all
            # of dB) before it reaches .grad, and again for each accumulation.
            grad_b = torch.ops.warpforge.grouped_mm(grad.t(), a, offs, b.dtype).transpose(-2, -1)
        else:
            grad_b = torch.ops.warpforge.grouped_mm(a.t(), grad, offs, b.dtype)
        if offs is None:
            grad_b = grad_b.unsqueeze(0)
    return grad_a, grad_b, None, None


# grouped_mm's C++ kernels and autograd (warpforge._warpforge_torch, which
# warpforge.torch imported first) where that module was built: a call then
# never enters Python. The Python ones below otherwise, the same semantics.
CPP_KERNEL = torch._C._dispatch_has_kernel_for_dispatch_key("warpforge::grouped_mm", "CUDA")
for _key in ("CUDA", "CPU"):
    if not CPP_KERNEL:
        _LIBRARY.impl("grouped_mm", _grouped_mm, _key)
    _LIBRARY.impl("grouped_mm_packed", _grouped_mm_packed, _key)
torch.library.register_fake("warpforge::grouped_mm", _grouped_mm_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::grouped_mm_packed", _grouped_mm_packed_fake, lib=_LIBRARY)
if not CPP_KERNEL:
    torch.library.register_autograd("warpforge::grouped_mm", _backward, setup_context=_setup_context, lib=_LIBRARY)

grouped_mm = torch.ops.warpforge.grouped_mm
grouped_mm_packed = torch.ops.warpforge.grouped_mm_packed
