#!/usr/bin/env python3
"""Times the peers of `bench_gemm --block-scaled mxfp8` on its shapes: the
two-pass a PyTorch user would write (one Triton kernel dequantizing A and B
to bf16, then torch.matmul, then amax) and Triton's tl.dot_scaled
(scripts/triton_dot_scaled.py's kernel, best of its tile configurations that
divide the shape), beside torch.matmul on bf16 inputs of the same shape (the
cuBLAS figure bench_gemm prints). MXFP8: e4m3 data, one e8m0 scale per 32
along K, k-major A (M, K) and B (N, K), bf16 C. Prints a table.

Needs a CUDA GPU, torch and triton. Each peer is checked against a float
reference on a small problem before timing; timing: CUDA events, median
after warm-up, inputs rotated among copies larger than the L2 together.

    python3 scripts/block_scaled_peers.py [--shapes 1x8192x8192,...] [--reps 20]
"""
import argparse
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_dot_scaled  # noqa: E402  (its tl.dot_scaled kernel and tile configurations)

DEFAULT_SHAPES = [(m, 8192, 8192) for m in (1, 16, 64, 128, 256, 1024, 4096, 8192)] + [(4096, 4096, 4096)]


@triton.jit
def dequantize_kernel(x_ptr, s_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # y = x * 2^(s - 127), one e8m0 scale per 32 consecutive elements (k-major rows of K, K % 32 == 0).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + offs // 32, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.exp2(s - 127.0)).to(tl.bfloat16), mask=mask)


def dequantize(x, s):
    y = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device)
    n = x.numel()
    dequantize_kernel[(triton.cdiv(n, 4096),)](x, s, y, n, BLOCK=4096)
    return y


def two_pass(a, b, sa, sb):
    c = torch.matmul(dequantize(a, sa), dequantize(b, sb).T)
    return c, c.abs().amax()


def make(m, n, k):
    return triton_dot_scaled.make(m, n, k)


def check_two_pass():
    a, b, sa, sb = make(256, 192, 512)
    c, amax = two_pass(a, b, sa, sb)
    ref = triton_dot_scaled.dequantize(a, sa) @ triton_dot_scaled.dequantize(b, sb).T
    torch.testing.assert_close(c.float(), ref.to(torch.bfloat16).float(), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(amax.float(), ref.abs().max(), atol=0.1, rtol=1e-2)


def time_ms(fn, sets, reps):
    for i in range(3):
        fn(*sets[i % len(sets)])
    times = []
    for r in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*sets[r % len(sets)])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copies_for(nbytes):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return max(2, (2 * l2 + nbytes - 1) // nbytes + 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=",".join(f"{m}x{n}x{k}" for m, n, k in DEFAULT_SHAPES))
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    print(f"{torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}")
    check_two_pass()
    for cfg in triton_dot_scaled.CONFIGS:
        try:
            triton_dot_scaled.check(cfg)
        except Exception:
            pass  # a configuration this GPU cannot hold is skipped when timed too
    print("| M x N x K | torch.matmul bf16 TFLOP/s | two-pass MXFP8 TFLOP/s | tl.dot_scaled MXFP8 TFLOP/s |")
    print("|---|---|---|---|")
    for m, n, k in shapes:
        flops = 2.0 * m * n * k
        sets = [make(m, n, k) for _ in range(copies_for(m * k + n * k))]
        bf16 = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                 torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(copies_for(2 * (m * k + n * k)))]
        mm = flops / time_ms(lambda x, y: torch.matmul(x, y.T), bf16, args.reps) / 1e9
        tp = flops / time_ms(two_pass, sets, args.reps) / 1e9
        best = None
        for cfg in triton_dot_scaled.CONFIGS:
            bm, bn, bk = cfg[:3]
            if m % bm or n % bn or k % bk:
                continue
            c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
            try:
                ms = time_ms(lambda a, b, sa, sb: triton_dot_scaled.run(cfg, a, b, sa, sb, c), sets, args.reps)
            except Exception:
                continue
            best = max(best or 0.0, flops / ms / 1e9)
        ds = f"{best:.1f}" if best else "no configuration divides it"
        print(f"| {m} x {n} x {k} | {mm:.1f} | {tp:.1f} | {ds} |", flush=True)


if __name__ == "__main__":
    main()
