# The host time of one warpforge call from torch, a call of each op family
# beside torch's own op for it, in one run: host microseconds a call (200
# calls back to back after a warm-up, before the synchronize), small shapes
# so that the device never holds the host back. What runtime::Module::launch
# costs shows here as ours minus the peer (docs/PERFORMANCE.md "Python host
# overhead").
#   PYTHONPATH=build/python:python python3 scripts/python_host_cost.py
import timeit

import torch
import torch.nn.functional as F

import warpforge


def host_us(f, n=200):
    timeit.timeit(f, number=3)
    torch.cuda.synchronize()
    us = timeit.timeit(f, number=n) / n * 1e6
    torch.cuda.synchronize()
    return us


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def cases():
    a, b = bf16(16, 4096), bf16(4096, 4096)
    yield "gemm 16x4096x4096", lambda: warpforge.gemm(a, b), "torch.mm", lambda: torch.mm(a, b)
    yield ("gemm 16x4096x4096 through torch.ops", lambda: torch.ops.warpforge.gemm(a, b),
           "torch.ops.aten.mm", lambda: torch.ops.aten.mm(a, b))
    tokens, experts = bf16(64, 2048), bf16(8, 2048, 768)
    offs = torch.arange(8, 65, 8, device="cuda", dtype=torch.int32)
    grouped_peer = getattr(torch, "_grouped_mm", None)
    yield ("grouped_mm 64 tokens, 8 experts", lambda: warpforge.grouped_mm(tokens, experts, offs),
           "torch._grouped_mm", grouped_peer and (lambda: grouped_peer(tokens, experts, offs=offs)))
    x, w = bf16(64, 4096), bf16(4096)
    yield ("rms_norm 64x4096", lambda: warpforge.rms_norm(x, w), "F.rms_norm",
           lambda: F.rms_norm(x, (4096,), w, 1e-6))
    q, k, v = bf16(1, 16, 128, 128), bf16(1, 16, 128, 128), bf16(1, 16, 128, 128)
    yield ("attention 1x16x128x128", lambda: warpforge.attention(q, k, v),
           "F.scaled_dot_product_attention", lambda: F.scaled_dot_product_attention(q, k, v))
    pages, page = 4, 256
    k_cache, v_cache = bf16(pages, page, 8, 128), bf16(pages, page, 8, 128)
    table = torch.arange(pages, device="cuda", dtype=torch.int32).reshape(1, -1)
    lens = torch.full((1,), pages * page, device="cuda", dtype=torch.int32)
    qd = bf16(1, 32, 1, 128)
    yield ("attention_decode b1 kv1024", lambda: warpforge.attention_decode(qd, k_cache, v_cache, table, lens),
           None, None)


print(f"{'op':34} | {'ours us':>8} | {'peer':32} | {'peer us':>8} | ratio", flush=True)
for name, ours, peer_name, peer in cases():
    try:
        mine = host_us(ours)
    except Exception as e:  # an op this GPU or build lacks: say so, measure the rest
        print(f"{name:34} | failed: {type(e).__name__}: {str(e)[:120]}", flush=True)
        continue
    if peer is None:
        print(f"{name:34} | {mine:8.2f} | {'(none)':32} | {'':>8} |", flush=True)
        continue
    theirs = host_us(peer)
    print(f"{name:34} | {mine:8.2f} | {peer_name:32} | {theirs:8.2f} | {mine / theirs:5.2f}", flush=True)
