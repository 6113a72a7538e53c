# The host cost of warpforge.attention_decode from torch on a GPU (issue 46's
# target: <= 15 us a call): host microseconds a call (200 calls back to back,
# before the synchronize), and the median of CUDA events around one call, for
# the public function (the direct path of plain eager tensors: C++ where
# warpforge._warpforge_torch was built), the Python direct path (_decode),
# the torch operator (through the dispatcher, O and lse) and the C++ op's
# execute_addresses alone;
# then each step of the Python direct path at batch 1, KV 8k.
#   PYTHONPATH=build/python:python python3 scripts/decode_host_cost.py
import time

import torch

import warpforge
from warpforge import torch_attention as ta


def host_and_event_us(f, n=200):
    f()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        f()
    host = (time.perf_counter() - start) / n * 1e6
    torch.cuda.synchronize()
    times = []
    for _ in range(21):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return host, sorted(times)[10]


def inputs(batch, length, hq=32, hkv=8, d=128, page=256):
    pages = batch * length // page
    k_cache = torch.randn(pages, page, hkv, d, device="cuda", dtype=torch.bfloat16)
    v_cache = torch.randn_like(k_cache)
    table = torch.arange(pages, device="cuda", dtype=torch.int32).reshape(batch, -1)
    lens = torch.full((batch,), length, device="cuda", dtype=torch.int32)
    q = torch.randn(batch, hq, 1, d, device="cuda", dtype=torch.bfloat16)
    return q, k_cache, v_cache, table, lens


for batch, length in ((1, 1024), (1, 8192), (8, 8192)):
    x = inputs(batch, length)
    out = warpforge.attention_decode(*x)  # the direct path: no lse wanted, none written
    ta._decode(*x, None, True, -1, 0, False)  # the Python direct path's entry
    entry = ta._DECODE[ta._decode_key(*x, (None, True, -1, 0, False))[0]]
    addresses = [t.data_ptr() for t in x + (out,)]
    stream = torch.cuda.current_stream().cuda_stream
    workspace = entry.workspace(x[0], stream).data_ptr()
    paths = (("warpforge.attention_decode", lambda: warpforge.attention_decode(*x)),
             ("Python _decode", lambda: ta._decode(*x, None, True, -1, 0, False)),
             ("torch.ops (dispatcher)", lambda: torch.ops.warpforge.attention_decode(*x)),
             ("execute_addresses alone", lambda: entry.op.execute_addresses(addresses, workspace, stream)))
    line = []
    for name, f in paths:
        host, event = host_and_event_us(f)
        line.append(f"{name}: host {host:.1f} us/call, event-timed {event:.1f} us")
    assert torch.equal(warpforge.attention_decode(*x), torch.ops.warpforge.attention_decode(*x)[0])
    print(f"batch {batch} kv {length}: " + "; ".join(line), flush=True)

# Each step of the direct path alone (batch 1, KV 8k), host us a call.
x = inputs(1, 8192)
q = x[0]
steps = (("_plain_eager(q)", lambda: ta._plain_eager(q)),
         ("cache key and addresses", lambda: ta._decode_key(*x, (None, True, -1, 0, False))),
         ("allocation of O", lambda: torch.empty_like(q)),
         ("raw current stream", lambda: torch._C._cuda_getCurrentRawStream(q.get_device())),
         ("capture check", lambda: torch._C._cuda_isCurrentStreamCapturing()),
         ("key look-up", lambda: ta._DECODE.get(ta._decode_key(*x, (None, True, -1, 0, False))[0])))
for name, f in steps:
    f()
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        f()
    print(f"step {name}: host {(time.perf_counter() - start) / n * 1e6:.2f} us/call", flush=True)
