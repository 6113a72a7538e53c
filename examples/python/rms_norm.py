"""RMSNorm of bf16 rows written with the Python DSL, one PTX instruction per
call (the pieces shared with softmax.py are in row_reduction.py): a row a
CTA, each thread's 16-byte vectors of the row and of the weight held in
registers, the sum of squares all-reduced over the CTA, then
y = x · rsqrt(mean(x²) + eps) · w rounded to bf16. The same design as the
C++ op (ops::Norm, which also takes other dtypes, residuals, rows a warp or a
cluster, and scales its sums against overflow); on a GPU this script times
both, same run.

    python examples/python/rms_norm.py            # NumPy on the simulator, against an fp64 reference
    python examples/python/rms_norm.py --torch    # on the GPU: checks, then times against warpforge.rms_norm
"""

import sys

import ml_dtypes
import numpy as np

import warpforge
from row_reduction import VECTOR, Row, allreduce, check_shapes, threads_for

SHAPES = [(5, 256), (3, 1000 // VECTOR * VECTOR), (2, 4096)]


def build_kernel(n, eps=1e-6, target="sm_90a"):
    threads = threads_for(n)
    k = warpforge.Kernel(f"rms_norm_{n}", target)
    x, w, y = k.param_ptr("x", 16), k.param_ptr("w", 16), k.param_ptr("y", 16)
    k.maxntid(threads)
    row = Row(k, n, threads)
    r = k.sreg("ctaid.x")
    xs, ws = row.load(x, r), row.load(w, None, 0x3F803F80)  # the weight's fill: 1.0
    square = k.mov("f32", warpforge.f32(0.0))
    for j in range(row.vectors):
        for e in range(VECTOR):
            v = row.value(xs, j, e)
            k.fma(square, v, v, square)

    def add(into, other):
        for a, b in zip(into, other):
            k.add(a, a, b, round=warpforge.Round.rn)

    allreduce(k, [square], add, threads)
    rstd = k.reg("f32")
    k.fma(rstd, square, warpforge.f32(1.0 / n), warpforge.f32(eps))
    k.inst("rsqrt.approx.f32", rstd, rstd)

    def output(j, e):
        out = k.reg("f32")
        k.mul(out, row.value(xs, j, e), rstd, round=warpforge.Round.rn)
        k.mul(out, out, row.value(ws, j, e), round=warpforge.Round.rn)
        return out

    row.store(y, r, output)
    return k, threads


def reference(x, w, eps=1e-6):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps) * w.astype(np.float64)


def run(rows, n, device, rng, to_framework=lambda a: a, from_framework=np.asarray):
    """(y from the kernel as f32, the fp64 reference) for one shape."""
    x = rng.standard_normal((rows, n)).astype(ml_dtypes.bfloat16)
    w = (rng.random(n) + 0.5).astype(ml_dtypes.bfloat16)
    y = np.full((rows, n), np.nan, dtype=ml_dtypes.bfloat16)  # poisoned
    k, threads = build_kernel(n)
    fx, fw, fy = to_framework(x), to_framework(w), to_framework(y)
    warpforge.Module(k, device).launch((rows,), (threads,), fx, fw, fy)
    return from_framework(fy).astype(np.float32), reference(x, w)


def close(y, ref):
    """Within bf16's rounding (2^-8 relative) and 2^-16 of the row's scale."""
    return bool(np.all(np.abs(y - ref) <= 2.0**-8 * np.abs(ref) + 2.0**-16 * np.abs(ref).max(-1, keepdims=True)))


def benchmark(torch):
    """This kernel against the C++ op (warpforge.rms_norm) on bf16 rows, CUDA events, same run."""
    device = warpforge.Device.cuda(0)
    print("| rows | hidden | Python DSL us | C++ op us | Python / C++ speed |\n|---:|---:|---:|---:|---:|")
    for rows, n in ((4096, 4096), (32768, 4096), (32768, 8192), (4096, 16384)):
        x = torch.randn(rows, n, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(n, dtype=torch.bfloat16, device="cuda") + 0.5
        y = torch.empty_like(x)
        k, threads = build_kernel(n)
        module = warpforge.Module(k, device)
        args = [warpforge._frameworks.to_tensor(t, "a") for t in (x, w, y)]  # converted once: no host cost a launch
        python = time(torch, lambda: module.launch((rows,), (threads,), *args))
        ours = time(torch, lambda: warpforge.rms_norm(x, w, eps=1e-6))
        print(f"| {rows} | {n} | {python * 1e6:.1f} | {ours * 1e6:.1f} | {ours / python:.2f} |")


def time(torch, fn, reps=50):
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e-3 / reps


def main():
    rng = np.random.default_rng(0)
    if "--torch" in sys.argv:
        import torch

        def to_torch(a):
            return torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)

        def from_torch(t):
            return t.cpu().view(torch.int16).numpy().view(ml_dtypes.bfloat16)

        device, convert, back = warpforge.Device.cuda(0), to_torch, from_torch
    else:
        device, convert, back = warpforge.Device.sim(), (lambda a: a), np.asarray
    failures = check_shapes(SHAPES, run, close, device, convert, back, rng)
    if "--torch" in sys.argv and not failures:
        import importlib

        import torch

        importlib.import_module("warpforge.torch")  # torch.ops.warpforge: warpforge.rms_norm's C++ op
        benchmark(torch)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
