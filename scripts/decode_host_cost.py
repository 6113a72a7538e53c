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
