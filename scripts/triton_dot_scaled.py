#!/usr/bin/env python3
"""Times Triton's tl.dot_scaled on MXFP8 (e4m3 data, one e8m0 scale per 32
elements along K) at M = N = K = 8192 (by default) and prints TFLOP/s: the
peer figure for `warpforge gemm-amax --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16
--bench` (REFERENCE.md: about 140 TFLOP/s on an H200 with Triton 3.6).

Needs a CUDA GPU, torch and triton (written for Triton 3.6 / torch 2.11).
Hopper has no MX tensor-core path: Triton upcasts to bf16 inside the kernel,
as warpforge's kernels do. The kernel is checked against a torch reference on
a small problem before timing; timing uses CUDA events around each run after
warm-up and reports the median.

    python3 scripts/triton_dot_scaled.py [--size 8192] [--reps 20]
"""
import argparse
import statistics

import torch
import triton
import triton.language as tl


@triton.jit
def mxfp8_matmul(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, K,
                 stride_am, stride_bn, stride_cm, stride_sam, stride_sbn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A (M, K) and B^T (N, K) are k-major; scales (rows, K/32) likewise.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    offs_s = tl.arange(0, BLOCK_K // 32)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] + offs_n[None, :] * stride_bn  # B as (K, N)
    sa_ptrs = sa_ptr + offs_m[:, None] * stride_sam + offs_s[None, :]
    sb_ptrs = sb_ptr + offs_n[:, None] * stride_sbn + offs_s[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot_scaled(tl.load(a_ptrs), tl.load(sa_ptrs), "e4m3",
                            tl.load(b_ptrs), tl.load(sb_ptrs), "e4m3", acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
        sa_ptrs += BLOCK_K // 32
        sb_ptrs += BLOCK_K // 32
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16))


CONFIGS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
    (128, 128, 128, 8, 3),
    (128, 256, 128, 8, 3),
    (128, 128, 64, 4, 4),
    (256, 128, 128, 8, 3),
]


def make(m, n, k):
    a = (torch.rand(m, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
    bt = (torch.rand(n, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
    # e8m0 scales 2^0 or 2^1 (codes 127, 128), as warpforge's reference test.
    sa = torch.randint(127, 129, (m, k // 32), dtype=torch.uint8, device="cuda")
    sb = torch.randint(127, 129, (n, k // 32), dtype=torch.uint8, device="cuda")
    return a, bt, sa, sb


def run(cfg, a, bt, sa, sb, c):
    bm, bn, bk, warps, stages = cfg
    m, k = a.shape
    n = bt.shape[0]
    assert m % bm == 0 and n % bn == 0 and k % bk == 0, "sizes must be multiples of the block"
    grid = (m // bm, n // bn)
    mxfp8_matmul[grid](a, bt, sa, sb, c, k, a.stride(0), bt.stride(0), c.stride(0), sa.stride(0), sb.stride(0),
                       BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)


def dequantize(x, s):
    return x.float() * torch.exp2(s.float() - 127).repeat_interleave(32, dim=1)


def check(cfg):
    a, bt, sa, sb = make(512, 512, 512)
    c = torch.empty(512, 512, dtype=torch.bfloat16, device="cuda")
    run(cfg, a, bt, sa, sb, c)
    ref = dequantize(a, sa) @ dequantize(bt, sb).T
    torch.testing.assert_close(c.float(), ref.to(torch.bfloat16).float(), atol=1e-2, rtol=1e-2)


def time_ms(cfg, a, bt, sa, sb, c, reps):
    for _ in range(5):
        run(cfg, a, bt, sa, sb, c)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run(cfg, a, bt, sa, sb, c)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=8192, help="M = N = K (a multiple of 256)")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    s = args.size
    print(f"{torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}")
    a, bt, sa, sb = make(s, s, s)
    c = torch.empty(s, s, dtype=torch.bfloat16, device="cuda")
    best = None
    for cfg in CONFIGS:
        try:
            check(cfg)
            ms = time_ms(cfg, a, bt, sa, sb, c, args.reps)
        except Exception as e:  # a configuration this GPU cannot hold (shared memory): skip it
            print(f"  config {cfg}: skipped ({type(e).__name__}: {str(e).splitlines()[0][:100]})")
            continue
        tflops = 2 * s ** 3 / (ms * 1e-3) / 1e12
        print(f"  config {cfg}: median {ms:.3f} ms, {tflops:.1f} TFLOP/s")
        best = max(best or 0.0, tflops)
    if best is None:
        raise SystemExit("no configuration ran")
    print(f"tl.dot_scaled MXFP8 e4m3/e8m0x32 {s}^3 -> bf16: best {best:.1f} TFLOP/s")


if __name__ == "__main__":
    main()
