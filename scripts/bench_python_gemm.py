"""Times the warp-specialized GEMM written in Python on the template
(examples/python/warp_specialized_gemm.py) against ops::Gemm's C++ sm90a
kernel of the same configuration (each of the example's CONFIGS, the C++
op forced to it), and torch.matmul (cuBLAS) as a named peer, in one run on
one GPU: bf16 A (M, K) row-major, B (K, N) column-major, bf16 D. Every
kernel is first checked against torch's fp32 product of the same inputs;
then the kernels are timed in turns (ROUNDS rounds, each kernel REPS
back-to-back launches between CUDA events, after warm-up), medians per
launch. A second ops::Gemm of the same configuration, timed in the same
turns, is the control: C++/C++ is the ratio of one kernel to itself, the
run's noise. Prints a line per shape and configuration (the per-round
C++/Python ratios' range too), then the worst median ratio C++ time /
Python time (>= 0.95 is issue 42's bar) and the ops::Gemm heuristic's own
configuration per shape.

    PYTHONPATH=build/python:python python scripts/bench_python_gemm.py [--reps R] [--rounds N]
"""

import argparse
import os
import statistics
import sys

import torch

import warpforge

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "python"))
import warp_specialized_gemm as example  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]


def time_in_turns(runs, reps, rounds, warmup=3):
    """ms per launch of each run in each round, the runs taking turns round by round."""
    for run in runs:
        for _ in range(warmup):
            run()
    times = [[] for _ in runs]
    for _ in range(rounds):
        for run, t in zip(runs, times):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                run()
            end.record()
            end.synchronize()
            t.append(start.elapsed_time(end) / reps)
    return times


def check(name, d, reference):
    err = ((d.float() - reference).abs() / reference.abs().clamp(min=1.0)).max().item()
    if not torch.isfinite(d.float()).all() or err > 2e-2:
        print(f"{name}: wrong, max error {err:.3g}")
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}; medians of {args.rounds} rounds of {args.reps} launches")
    print(f"{'M x N x K':>16}  {'configuration':<24} {'C++ ms':>8} {'Python ms':>9} {'cuBLAS ms':>9} "
          f"{'TFLOP/s py':>10} {'C++/Python':>10} {'per round':>11} {'C++/C++':>8}")
    modules = {}
    for config, parameters in example.CONFIGS.items():
        design = example.Gemm(**parameters)
        modules[config] = (design, warpforge.Module(design.build()))
    worst, chosen = None, []
    torch.manual_seed(0)
    for m, n, k in SHAPES:
        a = (0.1 * torch.randn(1, m, k, device="cuda")).to(torch.bfloat16)
        bt = (0.1 * torch.randn(1, n, k, device="cuda")).to(torch.bfloat16)
        b = bt[0].t()  # (K, N), column-major
        reference = torch.matmul(a[0].float(), b.float())
        d_torch = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

        def run_torch():
            torch.matmul(a[0], b, out=d_torch)

        run_torch()
        check(f"cuBLAS {m}x{n}x{k}", d_torch, reference)
        auto = warpforge.Gemm(a[0], b, d_torch)
        auto.compile()
        chosen.append(f"{m}x{n}x{k}: {auto.config}")
        for config, (design, module) in modules.items():
            d_cpp = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            d_py = torch.full((1, m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            op = warpforge.Gemm(a[0], b, d_cpp, kernel="sm90a", config=config)
            control = warpforge.Gemm(a[0], b, d_cpp, kernel="sm90a", config=config)
            op.compile()
            control.compile()
            run_py = example.launcher(design, module, a, bt, d_py)
            stream = torch.cuda.current_stream()

            def run_cpp():
                op.execute(a[0], b, d_cpp)

            def run_python():
                run_py(stream)

            def run_control():
                control.execute(a[0], b, d_cpp)

            run_cpp()
            run_python()
            torch.cuda.synchronize()
            check(f"C++ {config} {m}x{n}x{k}", d_cpp, reference)
            check(f"Python {config} {m}x{n}x{k}", d_py[0], reference)
            rounds = time_in_turns([run_cpp, run_python, run_torch, run_control], args.reps, args.rounds)
            t_cpp, t_py, t_torch, t_control = (statistics.median(t) for t in rounds)
            ratio = t_cpp / t_py
            per_round = [c / p for c, p in zip(rounds[0], rounds[1])]
            worst = ratio if worst is None else min(worst, ratio)
            print(f"{f'{m}x{n}x{k}':>16}  {config:<24} {t_cpp:8.3f} {t_py:9.3f} {t_torch:9.3f} "
                  f"{2 * m * n * k / t_py / 1e9:10.1f} {ratio:10.3f} {min(per_round):5.3f}-{max(per_round):5.3f} "
                  f"{t_cpp / t_control:8.3f}")
    print("ops::Gemm's own configuration: " + "; ".join(chosen))
    print(f"python-gemm: worst C++/Python time ratio {worst:.3f} ({'PASS' if worst >= 0.95 else 'FAIL'}: >= 0.95)")
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
