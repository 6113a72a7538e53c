# Where the attention backward's time goes from Python (issue 46), per shape
# of bench_attention's quick grid at head_dim 64 and 128 (16 query heads, 16k
# tokens a batch), in microseconds a call:
#   backward  out.backward(dO) between two CUDA events on an idle GPU, as
#             python -m warpforge.bench_attention times it (autograd, the
#             torch op, q/k/v.grad accumulated);
#   grad      torch.autograd.grad(out, (q, k, v), dO): no accumulation;
#   op        torch.ops.warpforge.attention_backward alone (no autograd);
#   execute   the C++ op's execute_addresses alone on allocated outputs
#             (the C++ bench's call: the kernels and the C++ host path);
#   stream    execute 10 times back to back between two events, per call:
#             the kernels' GPU time alone;
#   host      host microseconds of one op call and of one grad call
#             (10 calls, before the synchronize).
# First the GPU activities of one backward call (torch.profiler), ours and
# SDPA's flash and cuDNN backends, at d128 and d64, sequence 1k.
#   PYTHONPATH=build/python:python python3 scripts/attn_bwd_causes.py [--quick]
# --quick: the activities at d128 only and the table's d128 rows (not causal).
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import warpforge
from warpforge import torch_attention as ta
from attn_fwd_causes import stream_and_host_us  # (GPU us a call, host us a call) of calls back to back
from warpforge.bench_attention import _median_seconds


def single_us(f, reps=5):
    return _median_seconds(torch, f, reps) * 1e6


class Shape:
    def __init__(self, seq, d, hkv, causal):
        self.seq, self.d, self.hkv, self.causal = seq, d, hkv, causal
        batch, heads = 16384 // seq, 16
        make = lambda h: torch.randn(batch, h, seq, d, device="cuda", dtype=torch.bfloat16,  # noqa: E731
                                     requires_grad=True)
        self.q, self.k, self.v = make(heads), make(hkv), make(hkv)
        self.d_o = torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16)
        self.gqa = hkv != heads
        self.flops = 2.5 * 4.0 * batch * heads * seq * seq * d * (0.5 if causal else 1.0)

    def ours(self):
        return warpforge.attention(self.q, self.k, self.v, is_causal=self.causal, enable_gqa=self.gqa)

    def sdpa(self):
        return F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=self.causal, enable_gqa=self.gqa)


def causes(s):
    out, lse = warpforge.attention(s.q, s.k, s.v, is_causal=s.causal, enable_gqa=s.gqa, return_lse=True)
    q, k, v, o = (t.detach() for t in (s.q, s.k, s.v, out))
    right = 0 if s.causal else -1
    backward = lambda: out.backward(s.d_o, retain_graph=True)  # noqa: E731
    grad = lambda: torch.autograd.grad(out, (s.q, s.k, s.v), s.d_o, retain_graph=True)  # noqa: E731
    op = lambda: ta.attention_backward(s.d_o, q, k, v, o, lse, None, None, 0, 0, None, -1, right, True)  # noqa: E731
    tensors = (q, k, v, o, lse, s.d_o, torch.empty_like(q), torch.empty_like(k), torch.empty_like(v))
    options = (None, -1, right, True, 0, 0, False, "auto")
    try:  # the op as torch_attention keeps it (its helpers' names are internal)
        compiled, workspace_bytes = ta._op(ta._op_key(tensors + (None, None), True, *options), tensors, None, None,
                                           True, *options)
    except (AttributeError, TypeError) as e:
        print(f"(execute alone not measured: {e})")
        compiled, workspace_bytes = None, 16
    workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device="cuda")
    addresses, stream = [t.data_ptr() for t in tensors], torch.cuda.current_stream().cuda_stream
    execute = lambda: compiled.execute_addresses(addresses, 0, 0, workspace.data_ptr(), stream)  # noqa: E731
    timed = (backward, grad, op, execute) if compiled else (backward, grad, op, op)
    times = [single_us(f) for f in timed]
    gpu, _ = stream_and_host_us(timed[-1], 10)
    _, op_host = stream_and_host_us(op, 10)
    _, grad_host = stream_and_host_us(grad, 10)
    tf = lambda us: f"{s.flops / us / 1e6:.1f}"  # noqa: E731
    cells = [str(s.seq), str(s.d), str(s.hkv), "yes" if s.causal else "no"] + \
        [f"{t:.0f} ({tf(t)})" for t in times + [gpu]] + [f"{op_host:.0f}", f"{grad_host:.0f}"]
    print("| " + " | ".join(cells) + " |", flush=True)
    s.q.grad = s.k.grad = s.v.grad = None


def activities(s):
    """The GPU activities of one backward call (autograd.grad), ours and SDPA's."""
    runs = [("ours", s.ours, None), ("flash", s.sdpa, SDPBackend.FLASH_ATTENTION),
            ("cuDNN", s.sdpa, SDPBackend.CUDNN_ATTENTION)]
    for name, forward, backend in runs:
        try:
            with sdpa_kernel(backend or SDPBackend.FLASH_ATTENTION):
                out = forward()
                torch.autograd.grad(out, (s.q, s.k, s.v), s.d_o, retain_graph=True)
                torch.cuda.synchronize()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    torch.autograd.grad(out, (s.q, s.k, s.v), s.d_o, retain_graph=True)
                    torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"{name}: refused ({str(e)[:80]})")
            continue
        try:
            kernels = [(e.name, e.device_time) for e in prof.events()
                       if e.device_type == torch.autograd.DeviceType.CUDA]
        except AttributeError:  # another torch's event fields
            print(prof.key_averages().table(row_limit=10), flush=True)
            continue
        print(f"d{s.d} {s.seq} {name}: {len(kernels)} GPU activities, {sum(t for _, t in kernels):.0f} us: "
              + "; ".join(f"{n[:56]} {t:.0f}" for n, t in kernels), flush=True)


def main():
    quick = "--quick" in sys.argv[1:]
    print(f"attn_bwd_causes on {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for seq, d in ((1024, 128),) if quick else ((1024, 128), (1024, 64)):
        activities(Shape(seq, d, 16, False))
    print("\nus a call (TFLOP/s, FlashAttention's count: 2.5x the forward's, half for causal)")
    print("| seq | d | hkv | causal | backward | grad | op | execute | stream | op host | grad host |")
    print("|---" * 11 + "|")
    shapes = ((128, 16, False),) if quick else \
        ((64, 16, False), (128, 16, False), (128, 16, True), (128, 2, False), (64, 16, True))
    for d, hkv, causal in shapes:
        for seq in (1024, 8192):
            causes(Shape(seq, d, hkv, causal))


if __name__ == "__main__":
    main()
