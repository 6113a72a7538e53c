"""The mma.sync m16n8k8 demo (f16 in, f32 out, one warp), written from
Python one PTX instruction per call: A is 16x8 of ones but column 0 =
0, 1, ..., 15; B is 8x8 of ones but row 1 = 3; D = A·B has every element of
row r equal to r + 9.

    python examples/python/mma_m16n8k8.py            # NumPy on the simulator
    python examples/python/mma_m16n8k8.py --torch    # torch CUDA tensors on the GPU
"""

import sys

import numpy as np

import warpforge


def build_kernel(target="sm_80"):
    k = warpforge.Kernel("mma_m16n8k8_demo", target)
    a_ptr, bt_ptr, d_ptr = k.param_ptr("A", 4), k.param_ptr("BT", 4), k.param_ptr("D", 8)
    k.reqntid(32)
    # Fragment coordinates (PTX ISA 9.7.14.5.7, m16n8k8 f16): group g = lane / 4
    # owns rows g and g + 8; t = lane % 4 owns columns (or k) 2t and 2t + 1.
    lane = k.sreg("laneid")
    g, t = lane >> 2, lane & 3
    col = t << 1

    def element_address(base, row, row_len, elem_bytes):
        offset = k.reg("u64")
        k.mul_wide(offset, row * row_len + col, elem_bytes)
        return base + offset

    a = k.regs("b32", 2, "a")
    g8 = g + 8
    k.ld("global", "b32", a[0], element_address(a_ptr, g, 8, 2))
    k.ld("global", "b32", a[1], element_address(a_ptr, g8, 8, 2))
    b = k.regs("b32", 1, "b")  # column n = g of B: row g of Bᵀ
    k.ld("global", "b32", b[0], element_address(bt_ptr, g, 8, 2))
    acc = k.regs("f32", 4, "acc")
    for r in acc:
        k.mov(r, warpforge.f32(0.0))
    k.mma_sync(warpforge.MmaShape.m16n8k8, "f16", "f16", "f32", acc, a, b, acc)
    k.st("global", "f32", element_address(d_ptr, g, 8, 4), [acc[0], acc[1]])
    k.st("global", "f32", element_address(d_ptr, g8, 8, 4), [acc[2], acc[3]])
    return k


def inputs():
    a = np.ones((16, 8), dtype=np.float16)
    a[:, 0] = np.arange(16)
    bt = np.ones((8, 8), dtype=np.float16)  # Bᵀ: row n of Bᵀ is column n of B
    bt[:, 1] = 3
    expected = np.repeat(np.arange(9, 25, dtype=np.float32)[:, None], 8, axis=1)
    return a, bt, expected


def run(to_framework=lambda x: x, device=None):
    """D from the kernel, as a NumPy array, and the expected D."""
    a, bt, expected = inputs()
    d = np.full((16, 8), np.nan, dtype=np.float32)  # poisoned
    a, bt, d = to_framework(a), to_framework(bt), to_framework(d)
    warpforge.Module(build_kernel(), device).launch((1,), (32,), a, bt, d)
    return np.asarray(d.cpu() if hasattr(d, "cpu") else d), expected


def main():
    if "--torch" in sys.argv:
        import torch

        d, expected = run(lambda x: torch.from_numpy(x).cuda(), warpforge.Device.cuda(0))
    else:
        d, expected = run(device=warpforge.Device.sim())
    ok = np.array_equal(d, expected)
    print("row r of D is r + 9 for every r:", "ok" if ok else f"FAILED\n{d}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
