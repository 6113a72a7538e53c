"""The single-warp Ampere bf16 GEMM (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32)
written from Python one PTX instruction per call: A (M, K) bf16 row-major,
Bᵀ (N, K) bf16 row-major, D (M, N) f32; grid (N/8, M/16), block 32, one CTA
per 16x8 tile with direct global loads. The five documented shapes, inputs
0.1·N(0, 1) rounded to bf16, checked against an fp32 NumPy reference with
atol = rtol = 1e-2.

    python examples/python/bf16_gemm.py             # NumPy on the simulator
    python examples/python/bf16_gemm.py --torch     # torch CUDA tensors on the GPU
"""

import sys

import ml_dtypes
import numpy as np

import warpforge

SHAPES = [(16, 8, 16), (16, 8, 64), (32, 16, 32), (64, 32, 64), (128, 64, 128)]


def build_kernel(target="sm_80"):
    k = warpforge.Kernel("bf16_gemm_m16n8k16", target)
    a_ptr, bt_ptr, d_ptr = k.param_ptr("A", 4), k.param_ptr("BT", 4), k.param_ptr("D", 8)
    k.param("u32", "M")  # the grid covers M; the kernel never reads it
    n_dim, k_dim = k.param("u32", "N"), k.param("u32", "K")
    k.reqntid(32)
    # Fragment coordinates (PTX ISA 9.7.14.5.8, m16n8k16 bf16): g = lane / 4, t = lane % 4.
    # A reg r: row g + 8·(r % 2), k = 2t + 8·(r / 2) (+1); B reg r: column g, k = 2t + 8·r (+1);
    # D reg r: row g + 8·(r / 2), column 2t + r % 2.
    lane = k.sreg("laneid")
    g, t2 = lane >> 2, (lane & 3) << 1
    row0 = (k.sreg("ctaid.y") << 4) + g
    row1 = row0 + 8
    col = (k.sreg("ctaid.x") << 3) + g

    def address(base, index, elem_bytes):
        offset = k.reg("u64")
        k.mul_wide(offset, index, elem_bytes)
        return base + offset

    a0_index, a1_index, b_index = row0 * k_dim + t2, row1 * k_dim + t2, col * k_dim + t2
    acc = k.regs("f32", 4, "acc")
    for r in acc:
        k.mov(r, warpforge.f32(0.0))
    a, b = k.regs("b32", 4, "a"), k.regs("b32", 2, "b")

    def k_step(kb):
        pa0, pa1 = address(a_ptr, a0_index + kb, 2), address(a_ptr, a1_index + kb, 2)
        pb = address(bt_ptr, b_index + kb, 2)
        k.ld("global", "b32", a[0], pa0)
        k.ld("global", "b32", a[1], pa1)
        k.ld("global", "b32", a[2], warpforge.at(pa0, 16))  # k + 8: 8 bf16 further
        k.ld("global", "b32", a[3], warpforge.at(pa1, 16))
        k.ld("global", "b32", b[0], pb)
        k.ld("global", "b32", b[1], warpforge.at(pb, 16))
        k.mma_sync(warpforge.MmaShape.m16n8k16, "bf16", "bf16", "f32", acc, a, b, acc)

    k.for_range(0, k_dim, 16, k_step)
    out_col = (k.sreg("ctaid.x") << 3) + t2
    k.st("global", "f32", address(d_ptr, row0 * n_dim + out_col, 4), [acc[0], acc[1]])
    k.st("global", "f32", address(d_ptr, row1 * n_dim + out_col, 4), [acc[2], acc[3]])
    return k


def run(m, n, kk, module, rng, to_framework=lambda x: x):
    """(D from the kernel, the fp32 reference) for one shape."""
    a = (0.1 * rng.standard_normal((m, kk))).astype(ml_dtypes.bfloat16)
    bt = (0.1 * rng.standard_normal((n, kk))).astype(ml_dtypes.bfloat16)
    reference = a.astype(np.float32) @ bt.astype(np.float32).T
    d = np.full((m, n), np.nan, dtype=np.float32)  # poisoned
    fa, fbt, fd = to_framework(a), to_framework(bt), to_framework(d)
    module.launch((n // 8, m // 16), (32,), fa, fbt, fd, m, n, kk)
    return np.asarray(fd.cpu() if hasattr(fd, "cpu") else fd), reference


def main():
    rng = np.random.default_rng(0)
    if "--torch" in sys.argv:
        import torch

        def to_torch(x):
            t = torch.from_numpy(x.view(np.int16) if x.dtype == ml_dtypes.bfloat16 else x).cuda()
            return t.view(torch.bfloat16) if x.dtype == ml_dtypes.bfloat16 else t

        module, convert = warpforge.Module(build_kernel(), warpforge.Device.cuda(0)), to_torch
    else:
        module, convert = warpforge.Module(build_kernel(), warpforge.Device.sim()), (lambda x: x)
    failures = 0
    for m, n, kk in SHAPES:
        d, reference = run(m, n, kk, module, rng, convert)
        ok = np.allclose(d, reference, atol=1e-2, rtol=1e-2)
        failures += not ok
        print(f"M={m:4} N={n:3} K={kk:4}: max |D - ref| = {np.abs(d - reference).max():.2e}", "ok" if ok else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
