# Where the attention forward's time goes from Python (issue 46), per shape of
# bench_attention's quick grid, ours beside SDPA's cuDNN backend:
#   single  one call between two CUDA events on an idle GPU (what
#           python -m warpforge.bench_attention reports): GPU time plus the
#           host time before the launch;
#   stream  20 calls back to back between two events, per call: the GPU's
#           time alone wherever the host keeps ahead (host < stream);
#   host    host microseconds a call over those 20 calls (before the sync).
# Ours is warpforge.attention (the torch operator's C++ kernel where
# _warpforge_torch was built); beside it the Python kernel it replaced alone
# (torch_attention._forward: no dispatcher, no autograd wrapper) and the C++
# op's execute_addresses alone.
# Then: d128 8k on the C++ benchmark's data (a 1M-value N(0,1) pattern
# repeated) against fresh randn (does the data set the clock?), and the
# kernels one call launches (torch.profiler), ours and cuDNN's, at d128 1k.
# --cudnn-once: one call of cuDNN's SDPA at d128 1k and at d64 1k (16 heads,
# not causal) and nothing else, for ncu to profile cuDNN's kernels (its
# tiles, launch and stalls beside ours).
#   PYTHONPATH=build/python:python python3 scripts/attn_fwd_causes.py [--quick | --cudnn-once]
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import warpforge
from warpforge import torch_attention as ta
from warpforge.bench_attention import _median_seconds


def single_us(f, reps=7):
    """The benchmark's figure: the median of one call between two events."""
    return _median_seconds(torch, f, reps) * 1e6


def stream_and_host_us(f, n=20):
    f()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    start = time.perf_counter()
    for _ in range(n):
        f()
    host = (time.perf_counter() - start) / n * 1e6
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3 / n, host


def inputs(batch, heads, heads_kv, seq, d, pattern=False):
    def make(h):
        if not pattern:
            return torch.randn(batch, h, seq, d, device="cuda", dtype=torch.bfloat16)
        values = torch.randn(1 << 20, device="cuda", dtype=torch.bfloat16)
        n = batch * h * seq * d
        return values.repeat((n + values.numel() - 1) // values.numel())[:n].reshape(batch, h, seq, d)
    return make(heads), make(heads_kv), make(heads_kv)


def cudnn_once():
    for d in (128, 64):
        q, k, v = inputs(16, 16, 16, 1024, d)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        print(f"cuDNN's SDPA: one call at d{d} 1k, batch 16, 16 heads, not causal", flush=True)


def main():
    if "--cudnn-once" in sys.argv:
        return cudnn_once()
    quick = "--quick" in sys.argv
    print(f"attn_fwd_causes on {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print("TFLOP/s (FlashAttention's count, half for causal); host in us a call")
    print(f"C++ torch kernel: {ta.CPP_FORWARD}")
    print("| seq | d | hkv | causal | ours single | ours stream | ours host | Python body host | execute host "
          "| cuDNN single | cuDNN stream | cuDNN host | single ratio | stream ratio |")
    print("|---" * 14 + "|")
    single_ratios, stream_ratios = [], []
    grid = [(64, 16), (128, 16), (256, 16), (128, 2)]
    for d, hkv in grid:
        for seq in ((1024,) if quick else (1024, 8192)):
            for causal in (False, True):
                batch, heads = 16384 // seq, 16
                q, k, v = inputs(batch, heads, hkv, seq, d)
                gqa = hkv != heads
                flops = 4.0 * batch * heads * seq * seq * d * (0.5 if causal else 1.0)
                ours = lambda: warpforge.attention(q, k, v, is_causal=causal, enable_gqa=gqa)  # noqa: E731
                body = lambda: ta._forward(q, k, v, None, None, 0, 0, None, -1, 0 if causal else -1, True)  # noqa: E731
                out, lse = body()
                options = (None, -1, 0 if causal else -1, True, 0, 0, False, "auto")
                op, _ = ta._op(ta._op_key((q, k, v, out, lse, None, None), False, *options), (q, k, v, out, lse),
                               None, None, False, *options)
                addresses = [t.data_ptr() for t in (q, k, v, out, lse)]
                stream = torch.cuda.current_stream().cuda_stream
                execute = lambda: op.execute_addresses(addresses, 0, 0, 0, stream)  # noqa: E731
                cudnn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)  # noqa: E731
                o_single = single_us(ours)
                o_stream, o_host = stream_and_host_us(ours)
                _, b_host = stream_and_host_us(body)
                _, e_host = stream_and_host_us(execute)
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    c_single = single_us(cudnn)
                    c_stream, c_host = stream_and_host_us(cudnn)
                tf = lambda us: f"{flops / us / 1e6:.1f}"  # noqa: E731
                single_ratios.append(c_single / o_single)
                stream_ratios.append(c_stream / o_stream)
                print(f"| {seq} | {d} | {hkv} | {'yes' if causal else 'no'} | {tf(o_single)} | {tf(o_stream)} | "
                      f"{o_host:.1f} | {b_host:.1f} | {e_host:.1f} | {tf(c_single)} | {tf(c_stream)} | {c_host:.1f} | "
                      f"{c_single / o_single:.2f} | {c_stream / o_stream:.2f} |", flush=True)
                del q, k, v, out, lse
    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    print(f"\ngeomean against cuDNN: single {geo(single_ratios):.3f}, stream {geo(stream_ratios):.3f} "
          f"over {len(single_ratios)} shapes", flush=True)

    # The data: the C++ bench's repeated pattern against fresh randn, d128 8k not causal.
    flops = 4.0 * 2 * 16 * 8192 * 8192 * 128
    for pattern in (False, True):
        q, k, v = inputs(2, 16, 16, 8192, 128, pattern)
        us, _ = stream_and_host_us(lambda: warpforge.attention(q, k, v), n=10)
        print(f"d128 8k not causal, {'pattern (C++ bench)' if pattern else 'randn'} data: "
              f"ours stream {flops / us / 1e6:.1f} TFLOP/s", flush=True)
    del q, k, v

    # The kernels of one call, ours and cuDNN's (d128 1k not causal).
    q, k, v = inputs(16, 16, 16, 1024, 128)
    for name, f in (("ours", lambda: warpforge.attention(q, k, v)),
                    ("cuDNN", lambda: F.scaled_dot_product_attention(q, k, v))):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            f()
            torch.cuda.synchronize()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                f()
                torch.cuda.synchronize()
        try:
            kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            print(f"{name}: {len(kernels)} GPU activities a call: " +
                  "; ".join(f"{e.name[:60]} {e.device_time:.1f} us" for e in kernels), flush=True)
        except AttributeError:  # another torch's event fields
            print(prof.key_averages().table(row_limit=8), flush=True)


if __name__ == "__main__":
    main()
