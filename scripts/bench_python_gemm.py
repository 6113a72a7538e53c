"""Times the warp-specialized GEMM written in Python on the template
(examples/python/warp_specialized_gemm.py) against ops::Gemm's C++ sm90a
kernel forced to the same configuration (128x256x64 tiles, 4 stages, two
consumer warpgroups, a 2x1 cluster), in one run on one GPU: bf16 A (M, K)
row-major, B (K, N) column-major, bf16 D. Each side is checked against
torch's bf16 matmul first, then timed with CUDA events over REPS launches
after WARMUP (medians of 5 rounds). Prints one line per shape and the ratio
C++ time / Python time (>= 0.95 is the bar: the Python kernel at least 95%
of the C++ kernel's speed).

    PYTHONPATH=build/python:python python scripts/bench_python_gemm.py [--reps R]
"""

import argparse
import os
import statistics
import sys

import torch

import warpforge
from warpforge import _warpforge
from warpforge._frameworks import to_tensor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "python"))
import warp_specialized_gemm as example  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 4096), (4096, 8192, 8192)]
CONFIG = "128x256x64 s4 w2x1 c2x1"


def time_ms(run, reps, warmup=3, rounds=5):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    design = example.Gemm(tile_n=256, stages=4, epilogue_cols=128, cluster_m=2)
    module = warpforge.Module(design.build())
    print(f"{'M x N x K':>20} {'C++ ms':>9} {'Python ms':>10} {'TFLOP/s py':>11} {'C++/Python':>11}  C++ kernel")
    worst = None
    for m, n, k in SHAPES:
        a = (0.1 * torch.randn(1, m, k, device="cuda")).to(torch.bfloat16)
        bt = (0.1 * torch.randn(1, n, k, device="cuda")).to(torch.bfloat16)
        ref = torch.matmul(a[0].float(), bt[0].float().t())
        d_py = torch.full((1, m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        d_cpp = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        b = bt[0].t()  # (K, N), column-major
        views = [to_tensor(x, role) for x, role in ((a[0], "a"), (b, "b"), (d_cpp, "d"))]
        op = _warpforge.Gemm(views[0], views[1], None, views[2], kernel="sm90a", config=CONFIG)
        op.compile()
        stream = torch.cuda.current_stream().cuda_stream

        def run_cpp():
            op.execute(views[0], views[1], None, views[2], stream)

        def run_py():
            example.launch(design, module, a, bt, d_py)

        run_cpp()
        run_py()
        torch.cuda.synchronize()
        for name, d in (("C++", d_cpp), ("Python", d_py[0])):
            err = ((d.float() - ref).abs() / ref.abs().clamp(min=1.0)).max().item()
            if not torch.isfinite(d.float()).all() or err > 2e-2:
                print(f"{name} kernel wrong at {m}x{n}x{k}: max error {err:.3g}")
                sys.exit(1)
        t_cpp, t_py = time_ms(run_cpp, args.reps), time_ms(run_py, args.reps)
        ratio = t_cpp / t_py
        worst = ratio if worst is None else min(worst, ratio)
        print(f"{f'{m} x {n} x {k}':>20} {t_cpp:9.3f} {t_py:10.3f} {2 * m * n * k / t_py / 1e9:11.1f} "
              f"{ratio:11.3f}  {op.kernel_name}")
    print(f"python-gemm: worst C++/Python time ratio {worst:.3f} ({'PASS' if worst >= 0.95 else 'FAIL'}: >= 0.95)")
    sys.exit(0 if worst >= 0.95 else 1)


if __name__ == "__main__":
    main()
