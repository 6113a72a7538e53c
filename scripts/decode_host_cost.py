# Host cost of warpforge.attention_decode from torch on a GPU: the path before the
# Python-side op cache (DLPack views and the C++ cache key every call) against
# the current one, host microseconds a call and event-timed, at the benchmark shapes;
# no_dispatcher: the op's Python body called without torch.library's dispatch.
#   PYTHONPATH=build/python:python python3 scripts/decode_host_cost.py
import time, torch, warpforge
from warpforge import torch_attention as ta, _warpforge
from warpforge._frameworks import to_tensor
def old(q,kc,vc,tab,lens):
    out=torch.empty_like(q); lse=torch.empty(tuple(q.shape[:3]),dtype=torch.float32,device=q.device)
    views=ta._views(q,kc,vc,tab,lens,out,lse)
    op=_warpforge.attention_decode_op(views,None,True,-1,0,True)
    ws=torch.empty(max(op.workspace_bytes,16),dtype=torch.uint8,device=q.device)
    op.execute(views,to_tensor(ws,"workspace"),ta._stream(q)); return out
for batch,L in ((1,1024),(1,8192),(8,1024),(8,8192),(8,131072)):
    hq,hkv,d,page=32,8,128,256; pages=batch*L//page
    kc=torch.randn(pages,page,hkv,d,device="cuda",dtype=torch.bfloat16); vc=torch.randn_like(kc)
    tab=torch.arange(pages,device="cuda",dtype=torch.int32).reshape(batch,-1); lens=torch.full((batch,),L,device="cuda",dtype=torch.int32)
    q=torch.randn(batch,hq,1,d,device="cuda",dtype=torch.bfloat16)
    res={}
    for name,f in (("old",lambda: old(q,kc,vc,tab,lens)),("new",lambda: warpforge.attention_decode(q,kc,vc,tab,lens)),
                   ("op_direct",lambda: torch.ops.warpforge.attention_decode(q,kc,vc,tab,lens)),
                   ("no_dispatcher",lambda: ta._decode(q,kc,vc,tab,lens))):
        f(); torch.cuda.synchronize()
        n=200; s=time.perf_counter()
        for _ in range(n): f()
        host=(time.perf_counter()-s)/n*1e6; torch.cuda.synchronize(); tot=(time.perf_counter()-s)/n*1e6
        ts=[]
        for _ in range(20):
            a,b=torch.cuda.Event(enable_timing=True),torch.cuda.Event(enable_timing=True)
            a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b)*1e3)
        ts.sort(); res[name]=(host,tot,ts[10])
    kvb=2*batch*L*hkv*d*2
    print(f"batch {batch} kv {L}: "+"; ".join(f"{k}: host {h:.1f} us/call, back-to-back {t:.1f} us, event-timed {e:.1f} us ({kvb/e/1e3:.0f} GB/s)" for k,(h,t,e) in res.items()),flush=True)
    assert torch.equal(old(q,kc,vc,tab,lens), warpforge.attention_decode(q,kc,vc,tab,lens))

# Where the host time of one call goes (batch 1, kv 8192): each step of ta._decode alone, host us a call.
batch, L = 1, 8192
hq, hkv, d, page = 32, 8, 128, 256
pages = batch * L // page
kc = torch.randn(pages, page, hkv, d, device="cuda", dtype=torch.bfloat16); vc = torch.randn_like(kc)
tab = torch.arange(pages, device="cuda", dtype=torch.int32).reshape(batch, -1)
lens = torch.full((batch,), L, device="cuda", dtype=torch.int32)
q = torch.randn(batch, hq, 1, d, device="cuda", dtype=torch.bfloat16)
out, lse = ta._decode(q, kc, vc, tab, lens)
tensors = (q, kc, vc, tab, lens, out, lse)
key = tuple((t.shape, t.stride(), t.dtype, t.data_ptr() % 16) for t in tensors) + (q.device, None, True, -1, 0)
op, wsb = ta._DECODE.get(key) or ta._decode_entry(key, *tensors, None, True, -1, 0)
ws = torch.empty(wsb, dtype=torch.uint8, device="cuda")
addresses = [t.data_ptr() for t in tensors]
stream = ta._stream(q)
steps = (("_ready(q)", lambda: ta._ready(q)),
         ("three torch.empty", lambda: (ta._output_like(q), torch.empty(tuple(q.shape[:3]), dtype=torch.float32, device=q.device),
                                        torch.empty(wsb, dtype=torch.uint8, device=q.device))),
         ("cache key", lambda: tuple((t.shape, t.stride(), t.dtype, t.data_ptr() % 16) for t in tensors) + (q.device, None, True, -1, 0)),
         ("data_ptr list", lambda: [t.data_ptr() for t in tensors]),
         ("_stream(q)", lambda: ta._stream(q)),
         ("execute_addresses (2 launches)", lambda: op.execute_addresses(addresses, ws.data_ptr(), stream)))
for name, f in steps:
    f(); torch.cuda.synchronize()
    n = 500; s = time.perf_counter()
    for _ in range(n): f()
    host = (time.perf_counter() - s) / n * 1e6
    torch.cuda.synchronize()
    print(f"step {name}: host {host:.1f} us/call", flush=True)

# The forward's call from torch (seq 1024, batch 16, 16 heads, d128, causal): host us a call and event-timed us.
q, k, v = (torch.randn(16, 16, 1024, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for name, f in (("warpforge.attention", lambda: warpforge.attention(q, k, v, is_causal=True)),
                ("attention_forward op", lambda: ta.attention_forward(q, k, v, None, None, 0, 0, None, -1, 0, True)),
                ("_forward body", lambda: ta._forward(q, k, v, None, None, 0, 0, None, -1, 0, True))):
    f(); torch.cuda.synchronize()
    n = 50; s = time.perf_counter()
    for _ in range(n): f()
    host = (time.perf_counter() - s) / n * 1e6
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort()
    print(f"step forward {name}: host {host:.1f} us/call, event-timed {ts[10]:.1f} us", flush=True)
