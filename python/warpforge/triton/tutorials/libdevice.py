"""Tutorial 07, extern functions: libdevice's asin called from a kernel
(Triton links NVIDIA's libdevice bitcode into the kernel)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from .case import Case, Tensor


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(y_ptr + offsets, libdevice.asin(tl.load(x_ptr + offsets, mask=inside)), mask=inside)


def _launch(t):
    n = t["x"].numel()
    asin_kernel[(triton.cdiv(n, 512), )](t["x"], t["y"], n, BLOCK=512)


def _reference(t):
    return {"y": torch.asin(t["x"].double())}


def cases():
    return [Case("libdevice_asin", {"x": Tensor((1500, ), "float32", low=-1.0, high=1.0),
                                    "y": Tensor((1500, ), "float32", "poison")},
                 {"y": (1e-8, 1e-5)}, _launch, _reference)]
