"""Softmax of bf16 rows written with the Python DSL, one PTX instruction per
call (the pieces shared with rms_norm.py are in row_reduction.py): a row a
CTA held in registers, its maximum all-reduced over the CTA, then
Σ exp(x - max) (ex2.approx of (x - max)·log2 e), then y = exp(x - max) / Σ
rounded to bf16. The C++ op (ops::Softmax) gets both statistics from one
reduction (the online softmax), takes other dtypes, rows a warp or a cluster
and rows longer than registers hold; on a GPU this script times both.

    python examples/python/softmax.py            # NumPy on the simulator, against an fp64 reference
    python examples/python/softmax.py --torch    # on the GPU: checks, then times against warpforge.softmax
"""

import importlib
import math
import sys

import ml_dtypes
import numpy as np

import warpforge
from row_reduction import VECTOR, Row, allreduce, check_shapes, threads_for

SHAPES = [(5, 256), (3, 1000 // VECTOR * VECTOR), (2, 4096)]
MINUS_INFINITY_BF16X2 = 0xFF80FF80


def build_kernel(n, target="sm_90a"):
    threads = threads_for(n, vectors_per_thread=4)
    k = warpforge.Kernel(f"softmax_{n}", target)
    x, y = k.param_ptr("x", 16), k.param_ptr("y", 16)
    k.maxntid(threads)
    row = Row(k, n, threads)
    r = k.sreg("ctaid.x")
    xs = row.load(x, r, MINUS_INFINITY_BF16X2)  # past the row: -inf, which neither maximum nor sum sees
    elements = [(j, e) for j in range(row.vectors) for e in range(VECTOR)]

    largest = k.mov("f32", warpforge.f32(-math.inf))
    for j, e in elements:
        k.max(largest, largest, row.value(xs, j, e))
    allreduce(k, [largest], lambda into, other: [k.max(a, a, b) for a, b in zip(into, other)], threads, "maximum")

    def exp(j, e):  # exp(x - max) = 2^((x - max) · log2 e)
        t = k.reg("f32")
        k.sub(t, row.value(xs, j, e), largest, round=warpforge.Round.rn)
        k.mul(t, t, warpforge.f32(math.log2(math.e)), round=warpforge.Round.rn)
        k.ex2_approx(t, t)
        return t

    total = k.mov("f32", warpforge.f32(0.0))
    for j, e in elements:
        k.add(total, total, exp(j, e), round=warpforge.Round.rn)
    allreduce(k, [total], lambda into, other: [k.add(a, a, b, round=warpforge.Round.rn) for a, b in zip(into, other)],
              threads, "sum")
    inverse = k.reg("f32")
    k.rcp(inverse, total, round=warpforge.Round.rn)

    def output(j, e):
        out = exp(j, e)
        k.mul(out, out, inverse, round=warpforge.Round.rn)
        return out

    row.store(y, r, output)
    return k, threads


def reference(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run(rows, n, device, rng, to_framework=lambda a: a, from_framework=np.asarray):
    x = (3 * rng.standard_normal((rows, n))).astype(ml_dtypes.bfloat16)
    y = np.full((rows, n), np.nan, dtype=ml_dtypes.bfloat16)  # poisoned
    k, threads = build_kernel(n)
    fx, fy = to_framework(x), to_framework(y)
    warpforge.Module(k, device).launch((rows,), (threads,), fx, fy)
    return from_framework(fy).astype(np.float32), reference(x)


def close(y, ref):
    """Within bf16's rounding (2^-8 relative) and 2^-16 for the exponentials."""
    return bool(np.all(np.abs(y - ref) <= (2.0**-8 + 2.0**-16) * np.abs(ref) + 1e-30))


def benchmark(torch, time):
    """This kernel against the C++ op (warpforge.softmax) on bf16 rows, CUDA events, same run."""
    device = warpforge.Device.cuda(0)
    print("| rows | n | Python DSL us | C++ op us | Python / C++ speed |\n|---:|---:|---:|---:|---:|")
    for rows, n in ((4096, 4096), (32768, 4096), (32768, 8192), (4096, 16384)):
        x = torch.randn(rows, n, dtype=torch.bfloat16, device="cuda")
        y = torch.empty_like(x)
        k, threads = build_kernel(n)
        module = warpforge.Module(k, device)
        args = [warpforge._frameworks.to_tensor(t, "a") for t in (x, y)]  # converted once: no host cost a launch
        python = time(torch, lambda: module.launch((rows,), (threads,), *args))
        ours = time(torch, lambda: warpforge.softmax(x))
        print(f"| {rows} | {n} | {python * 1e6:.1f} | {ours * 1e6:.1f} | {ours / python:.2f} |")


def main():
    rms_norm = importlib.import_module("rms_norm")  # its conversions and timer
    rng = np.random.default_rng(0)
    torch_run = "--torch" in sys.argv
    if torch_run:
        import torch

        device = warpforge.Device.cuda(0)
        convert, back = (lambda a: torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16),
                         lambda t: t.cpu().view(torch.int16).numpy().view(ml_dtypes.bfloat16))
    else:
        device, convert, back = warpforge.Device.sim(), (lambda a: a), np.asarray
    failures = check_shapes(SHAPES, run, close, device, convert, back, rng)
    if torch_run and not failures:
        importlib.import_module("warpforge.torch")
        benchmark(torch, rms_norm.time)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
