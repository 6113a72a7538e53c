"""Tutorial 01, vector addition: each program adds one block of elements,
masking the tail of the last block."""

import triton
import triton.language as tl

from .case import Case, Tensor


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    total = tl.load(x_ptr + offsets, mask=inside) + tl.load(y_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets, total, mask=inside)


def _launch(t):
    n = t["x"].numel()
    add_kernel[(triton.cdiv(n, 256), )](t["x"], t["y"], t["out"], n, BLOCK=256)


def _reference(t):
    return {"out": t["x"].double() + t["y"].double()}


def cases():
    n = 1000  # not a multiple of the block: the last program masks
    return [Case("vector_add", {"x": Tensor((n, ), "float32"), "y": Tensor((n, ), "float32"),
                                "out": Tensor((n, ), "float32", "poison")},
                 {"out": (0.0, 2**-24)}, _launch, _reference)]
