# The host time of a cached warpforge.attention / warpforge.attention_decode
# call from torch (issue 46: <= 5 us a call), each layer of the call path
# alone, beside torch's own calls: host microseconds a call (the median of
# --batches batches of --calls calls back to back, one synchronize after
# each batch; the host's time to queue them, which the GPU hides when its
# kernel is longer).
#
#   PYTHONPATH=build/python:python python3 scripts/attention_host_cost.py [--calls 200] [--batches 7]
# Then each C++ step alone (_warpforge_torch.attention_host_steps). The
# GPU machine's host is noisy (torch.neg 6.8-10.6 us between two runs of
# session 10's window): compare rows of one run, each against its floors.
import argparse
import importlib
import statistics
import time

import torch
import torch.nn.functional as F

import warpforge
from warpforge import torch_attention as ta


def host_us(f, calls, batches):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    samples = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def forward_rows(shape):
    q, k, v = bf16(*shape), bf16(*shape), bf16(*shape)
    cpp = ta._CPP_FORWARD
    args = (None, None, 0, 0, None, -1, -1, True, False, "auto")
    yield "warpforge.attention (public)", lambda: warpforge.attention(q, k, v)
    # Two layers' tensors in turn (each call's maps were last made for the other's).
    sets = [(q, k, v), (bf16(*shape), bf16(*shape), bf16(*shape))]
    turn = iter(range(1 << 62))
    yield "the same, two layers' q, k, v in turn", lambda: warpforge.attention(*sets[next(turn) % 2])
    yield "torch_attention.attention (no front)", lambda: ta.attention(q, k, v, None, -1, -1, True, None, None, 0, 0,
                                                                        False, "auto")
    if cpp:
        yield "_warpforge_torch.attention_forward (C++)", lambda: cpp(q, k, v, *args)
    yield "torch.ops.warpforge.attention_forward", lambda: torch.ops.warpforge.attention_forward(q, k, v, *args)
    lse_shape = tuple(q.shape[:3])
    yield "floor: O and lse allocated (torch.empty)", lambda: (torch.empty_like(q),
                                                               torch.empty(lse_shape, device="cuda",
                                                                           dtype=torch.float32))
    yield "F.scaled_dot_product_attention", lambda: F.scaled_dot_product_attention(q, k, v)
    small = bf16(16)
    yield "floor: torch.neg of 16 elements", lambda: torch.neg(small)


def decode_rows(length):
    hq, hkv, d, page = 32, 8, 128, 256
    pages = length // page
    k_cache, v_cache = bf16(pages, page, hkv, d), bf16(pages, page, hkv, d)
    table = torch.arange(pages, device="cuda", dtype=torch.int32).reshape(1, -1)
    lens = torch.full((1,), length, device="cuda", dtype=torch.int32)
    q = bf16(1, hq, 1, d)
    x = (q, k_cache, v_cache, table, lens)
    yield "warpforge.attention_decode (public)", lambda: warpforge.attention_decode(*x)
    if ta._CPP_DECODE:
        yield "_warpforge_torch.attention_decode (C++)", lambda: ta._CPP_DECODE(*x, None, True, -1, 0, False)
    yield "torch.ops.warpforge.attention_decode", lambda: torch.ops.warpforge.attention_decode(*x)
    k = k_cache.reshape(1, length, hkv, d).transpose(1, 2)
    v = v_cache.reshape(1, length, hkv, d).transpose(1, 2)
    yield "F.scaled_dot_product_attention (GQA)", lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def cpp_steps(calls):
    """The C++ steps of a cached forward (d128, 1x16x128x128) and decode (b1 8k) call, each alone."""
    cpp = importlib.import_module("warpforge._warpforge_torch")
    q = bf16(1, 16, 128, 128)
    hq, hkv, d, page, length = 32, 8, 128, 256, 8192
    caches = bf16(length // page, page, hkv, d), bf16(length // page, page, hkv, d)
    table = torch.arange(length // page, device="cuda", dtype=torch.int32).reshape(1, -1)
    lens = torch.full((1,), length, device="cuda", dtype=torch.int32)
    return cpp.attention_host_steps(q, q.clone(), q.clone(), bf16(1, hq, 1, d), *caches, table, lens, calls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--batches", type=int, default=7)
    args = parser.parse_args()
    print(f"host us a cached call ({args.calls} calls a batch, median of {args.batches})", flush=True)
    sections = (("forward 1x16x128x128 d128", forward_rows((1, 16, 128, 128))),
                ("forward 16x16x1024x64 d64 1k", forward_rows((16, 16, 1024, 64))),
                ("decode b1 kv 8k", decode_rows(8192)))
    for title, rows in sections:
        print(f"== {title} ==", flush=True)
        for name, f in rows:
            try:
                print(f"  {name:44} {host_us(f, args.calls, args.batches):7.2f}", flush=True)
            except Exception as e:  # noqa: BLE001  (a path this build lacks: say so, measure the rest)
                print(f"  {name:44} failed: {type(e).__name__}: {str(e)[:100]}", flush=True)
    if ta._CPP_FORWARD:
        print("== C++ steps alone (forward 1x16x128x128 d128, decode b1 8k) ==", flush=True)
        for step, ns in cpp_steps(args.calls).items():
            print(f"  {step:62} {ns / 1e3:7.2f}", flush=True)


if __name__ == "__main__":
    main()
