"""Tutorial 04, low-memory dropout: the keep mask is not stored but drawn
again from a seed and each element's offset (tl.rand, Philox4x32-10), so a
seed reproduces it."""

import numpy as np
import torch
import triton
import triton.language as tl

from .case import Case, Tensor


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=inside)


P, SEED = 0.5, 123


def _launch(t):
    n = t["x"].numel()
    seeded_dropout_kernel[(triton.cdiv(n, 256), )](t["x"], t["out"], n, P, SEED, BLOCK=256)


def philox_uniform(seed, offsets):
    """tl.rand(seed, offsets) on the host: Philox4x32 with 10 rounds (Salmon
    et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) on the
    counter (offset, 0, 0, 0) and the key (seed's low and high words); the
    first word, read as int32 and folded to non-negative, times 2^-31
    rounded to f32 (triton/language/random.py)."""
    mask = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & mask
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint64(seed & 0xFFFFFFFF)
    k1 = np.uint64((seed >> 32) & 0xFFFFFFFF)
    a, b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(10):
        p0, p2 = a * c0, b * c2  # 64-bit products of 32-bit words
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0, p2 & mask, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & mask)
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    signed = c0.astype(np.uint32).view(np.int32)
    folded = np.where(signed < 0, ~signed, signed)  # -x - 1 without overflow
    return folded.astype(np.float32) * np.float32(4.6566127342e-10)


def _reference(t):
    x = t["x"].double()
    r = torch.from_numpy(philox_uniform(SEED, np.arange(x.numel(), dtype=np.int64)))
    return {"out": torch.where(r > P, x / (1 - P), torch.zeros_like(x))}


def cases():
    n = 1000
    return [Case("dropout", {"x": Tensor((n, ), "float32"), "out": Tensor((n, ), "float32", "poison")},
                 {"out": (0.0, 0.0)}, _launch, _reference)]
