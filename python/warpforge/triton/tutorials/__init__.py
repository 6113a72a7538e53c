"""Triton's tutorial kernels (those that run on an H100), written for
warpforge: the same algorithms at small sizes, each a Case (case.py) with
seeded inputs, a float64 reference and the tutorial's tolerance. The tests
run them on the simulator, PART=tutorials scripts/gpu-triton.sh records them on a GPU, and
`python -m warpforge.bench triton` times them against TRITON_INTERPRET=1."""

import importlib

MODULES = ("vector_add", "softmax", "matmul", "dropout", "layer_norm", "attention", "libdevice", "grouped_gemm",
           "persistent_matmul")


def cases():
    """Every tutorial case, in the tutorials' order."""
    out = []
    for name in MODULES:
        out.extend(importlib.import_module(f"{__name__}.{name}").cases())
    return out
