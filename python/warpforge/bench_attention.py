"""warpforge.attention beside PyTorch's scaled_dot_product_attention, each
of its backends this GPU has (cuDNN, flash, memory-efficient) timed in the
same run, on the shapes of issue 46 (bench/attention.cpp runs the same ones
without the peers):

- prefill: 16k tokens a batch (sequence 512 to 16k, batch 16k / sequence),
  head_dim 64, 128, 256, 16 query heads, causal and not, and grouped-query
  8:1 at head_dim 128; forward (--backward: and backward) TFLOP/s, FLOPs as
  FlashAttention counts them (4·batch·heads·seq²·head_dim forward, 2.5x
  backward, half for causal);
- decode: one query token at KV lengths 1k to 128k for batch 1, 8, 64 (32
  query and 8 KV heads, head_dim 128): ours over pages of 256, the peers on
  the same keys as dense (batch, heads, seq, d) tensors, in GB/s of K and V,
  and each as a fraction of the copy rate (bytes read and written a second
  by a 1 GiB device-to-device copy of the same run): where the best peer
  reads at fraction f of it, ours / best cannot pass 1 / f (printed as the
  bound) unless ours reads faster than a copy moves.

For each shape the best backend is named and ours is given as a ratio to it;
the prefill table ends with the geometric mean and the worst shape of
sequence >= 1k. Each backend alike: after a first call and 20 ms of the
same call back to back (the GPU's clocks come up from the idle of a compile
or of the previous backend's set-up before its first timed call), CUDA
events around --calls calls back to back, a call's time the median of
--reps. The default for the forward and decode, 10 calls, times what a
model sees: the host queues a call while the GPU runs the one before, so a
call's host time shows only where it exceeds its kernel's. --calls 1 times
one call on an idle GPU with the host's work inside the events (the method
until session 10: a call's latency, host and kernel added; the default with
--backward, whose milliseconds of kernels hide the host either way).

    python -m warpforge.bench_attention [--reps 10] [--calls 10] [--prefill] [--decode] [--backward] [--quick]

Needs torch with a CUDA GPU."""

import argparse
import math
import statistics
import sys
import time

_WARM_SECONDS = 0.02


_CALLS = 10  # calls between a sample's events (main's --calls)


def _median_seconds(torch, call, reps):
    call()  # its one-time costs (a compile, a plan) outside the 20 ms
    torch.cuda.synchronize()
    start = time.perf_counter()
    while time.perf_counter() - start < _WARM_SECONDS:
        call()
        torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(_CALLS):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / _CALLS)
    return statistics.median(times)


def _backends(torch):
    from torch.nn.attention import SDPBackend

    return [("cuDNN", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def _peer_seconds(torch, backend, run, reps):
    """The backend's median time, or None where it refuses the shape."""
    from torch.nn.attention import sdpa_kernel

    try:
        with sdpa_kernel(backend):
            return _median_seconds(torch, run, reps)
    except RuntimeError:
        return None


def _row(cells):
    return "| " + " | ".join(cells) + " |"


# The prefill's shape groups: (head_dim, KV heads) at 16 query heads.
_GROUPS = {"d64": (64, 16), "d128": (128, 16), "d256": (256, 16), "gqa": (128, 2)}


def prefill(torch, args):
    import warpforge
    import torch.nn.functional as F

    names = [name for name, _ in _backends(torch)]
    print("\nPrefill (bf16, 16 query heads, 16k tokens a batch), TFLOP/s" + (" forward / backward" if args.backward
                                                                            else ""))
    print(_row(["seq", "batch", "head_dim", "heads_kv", "causal", "ours"] + names + ["best", "ours / best"]))
    print(_row(["---"] * (9 + len(names) - 3)))
    ratios, worst = [], None
    seqs = [1024, 8192] if args.quick else [512, 1024, 2048, 4096, 8192, 16384]
    warm = True  # the first row: the GPU comes from the process's start-up idle
    for head_dim, heads_kv in (_GROUPS[g] for g in args.groups.split(",")):
        for seq in seqs:
            for causal in (False, True):
                batch, heads = 16384 // seq, 16
                make = lambda h: torch.randn(batch, h, seq, head_dim, device="cuda", dtype=torch.bfloat16,  # noqa: E731
                                             requires_grad=args.backward)
                q, k, v = make(heads), make(heads_kv), make(heads_kv)
                flops = 4.0 * batch * heads * seq * seq * head_dim * (0.5 if causal else 1.0)
                if args.backward:
                    flops *= 2.5
                d_o = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16)

                def timed(forward):
                    if not args.backward:
                        return lambda: forward()
                    out = forward()
                    return lambda: out.backward(d_o, retain_graph=True)

                if warm:
                    # Ours is timed first, the peers after it: a quarter second of
                    # products after our first call (its compile) puts the clocks
                    # where every later row finds them (H200, s9 window 1: d64 1k,
                    # the first row, ran at 0.81 of the C++ bench's rate from
                    # Python; d128 and d256 1k at 0.97).
                    warpforge.attention(q, k, v, is_causal=causal, enable_gqa=heads_kv != heads)
                    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
                    start = time.perf_counter()
                    while time.perf_counter() - start < 0.25:
                        a @ a
                        torch.cuda.synchronize()
                    warm = False
                try:
                    ours = _median_seconds(torch, timed(lambda: warpforge.attention(
                        q, k, v, is_causal=causal, enable_gqa=heads_kv != heads)), args.reps)
                except Exception as e:  # noqa: BLE001  (a refusal is a result here)
                    print(_row([str(seq), str(batch), str(head_dim), str(heads_kv), str(causal), f"refused: {e}"]))
                    continue
                peers = []
                for name, backend in _backends(torch):
                    peer = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal,  # noqa: E731
                                                                  enable_gqa=heads_kv != heads)
                    try:
                        run = timed(peer) if args.backward else peer
                        seconds = _peer_seconds(torch, backend, run, args.reps)
                    except RuntimeError:
                        seconds = None
                    peers.append((name, seconds))
                tf = lambda s: f"{flops / s / 1e12:.1f}" if s else "n/a"  # noqa: E731
                measured = [(n, s) for n, s in peers if s]
                best = min(measured, key=lambda p: p[1]) if measured else None
                ratio = best[1] / ours if best else float("nan")
                if best:
                    ratios.append(ratio)
                    if seq >= 1024 and (worst is None or ratio < worst[0]):
                        worst = (ratio, f"seq {seq} d{head_dim} hkv{heads_kv} {'causal' if causal else ''}")
                print(_row([str(seq), str(batch), str(head_dim), str(heads_kv), "yes" if causal else "no", tf(ours)]
                           + [tf(s) for _, s in peers] + [best[0] if best else "-", f"{ratio:.2f}"]), flush=True)
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\ngeometric mean ours / best: {mean:.3f} over {len(ratios)} shapes"
              + (f"; worst at seq >= 1k: {worst[0]:.2f} ({worst[1]})" if worst else ""))


def decode(torch, args):
    import warpforge
    import torch.nn.functional as F

    names = [name for name, _ in _backends(torch)]
    src = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    copy_rate = 2 * src.numel() / _median_seconds(torch, lambda: dst.copy_(src), args.reps)
    del src, dst
    print(f"\nDecode (bf16, one query token, 32 query / 8 KV heads, head_dim 128), GB/s of K and V; "
          f"the copy rate {copy_rate / 1e9:.0f} GB/s (1 GiB read and written)")
    print(_row(["batch", "kv_len", "K+V MB", "ours"] + names
               + ["best", "ours / best", "ours / copy", "best / copy", "bound (copy / best)"]))
    print(_row(["---"] * (9 + len(names))))
    hq, hkv, d, page = 32, 8, 128, 256
    batches = args.batches or ((1, 8) if args.quick else (1, 8, 64))
    lengths = args.lengths or (1024, 8192, 32768, 131072)
    for batch in batches:
        for length in lengths:
            kv_bytes = 2 * batch * length * hkv * d * 2
            if 2 * kv_bytes > torch.cuda.get_device_properties(0).total_memory // 2:
                print(_row([str(batch), str(length), f"{kv_bytes / 1e6:.0f}", "skipped: too large for this GPU"]))
                continue
            pages = batch * length // page
            k_cache = torch.randn(pages, page, hkv, d, device="cuda", dtype=torch.bfloat16)
            v_cache = torch.randn(pages, page, hkv, d, device="cuda", dtype=torch.bfloat16)
            table = torch.arange(pages, device="cuda", dtype=torch.int32).reshape(batch, -1)
            lens = torch.full((batch,), length, device="cuda", dtype=torch.int32)
            q = torch.randn(batch, hq, 1, d, device="cuda", dtype=torch.bfloat16)
            ours = _median_seconds(torch, lambda: warpforge.attention_decode(q, k_cache, v_cache, table, lens),
                                   args.reps)
            k = k_cache.reshape(batch, length, hkv, d).transpose(1, 2)
            v = v_cache.reshape(batch, length, hkv, d).transpose(1, 2)
            peers = [(name, _peer_seconds(torch, backend,
                                          lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                                          args.reps)) for name, backend in _backends(torch)]
            gbps = lambda s: f"{kv_bytes / s / 1e9:.0f}" if s else "n/a"  # noqa: E731
            measured = [(n, s) for n, s in peers if s]
            best = min(measured, key=lambda p: p[1]) if measured else None
            of_copy = lambda s: kv_bytes / s / copy_rate  # noqa: E731
            print(_row([str(batch), str(length), f"{kv_bytes / 1e6:.0f}", gbps(ours)] + [gbps(s) for _, s in peers]
                       + [best[0] if best else "-", f"{best[1] / ours:.2f}" if best else "-", f"{of_copy(ours):.2f}",
                          f"{of_copy(best[1]):.2f}" if best else "-", f"{1 / of_copy(best[1]):.2f}" if best else "-"]),
                  flush=True)
            del k_cache, v_cache


def main(argv=None):
    global _CALLS
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench_attention", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--calls", type=int,
                        help="calls back to back between a sample's events (1: one call on an idle GPU; "
                             "default 10, --backward 1)")
    parser.add_argument("--prefill", action="store_true")
    parser.add_argument("--decode", action="store_true")
    parser.add_argument("--backward", action="store_true", help="prefill: time the backward instead of the forward")
    parser.add_argument("--quick", action="store_true", help="sequence 1k and 8k; decode at batch 1 and 8")
    parser.add_argument("--groups", default="d64,d128,d256,gqa",
                        help="prefill: these of the shape groups d64, d128, d256 (16 KV heads) and gqa (d128, 2 KV heads)")
    parser.add_argument("--batches", help="decode: these batch sizes (comma-separated; default 1, 8, 64; --quick 1, 8)")
    parser.add_argument("--lengths", help="decode: these KV lengths (comma-separated; default 1k, 8k, 32k, 128k)")
    args = parser.parse_args(argv)
    if args.calls is not None and args.calls < 1:
        parser.error(f"--calls {args.calls}: a sample times one call or more (1, or 10 for the default)")
    for name in ("batches", "lengths"):
        text = getattr(args, name)
        if text is None:
            continue
        values = [v for v in text.split(",") if v.strip().isdigit() and int(v) > 0]
        if len(values) != len(text.split(",")):
            parser.error(f"--{name} {text}: positive integers separated by commas (as 1,8 or 8192,131072)")
        setattr(args, name, [int(v) for v in values])
    _CALLS = args.calls or (1 if args.backward else 10)
    unknown = [g for g in args.groups.split(",") if g not in _GROUPS]
    if unknown:
        parser.error(f"--groups {args.groups}: {', '.join(unknown)} is not one of {', '.join(_GROUPS)}")
    import torch

    if not torch.cuda.is_available():
        print("bench_attention: needs a CUDA GPU (none found); nothing was measured", file=sys.stderr)
        return 1
    print(f"bench_attention on {torch.cuda.get_device_name(0)}, torch {torch.__version__}; "
          + (f"{_CALLS} calls back to back a sample" if _CALLS > 1 else "one call on an idle GPU a sample"))
    both = not (args.prefill or args.decode)
    if args.prefill or both:
        prefill(torch, args)
    if args.decode or both:
        decode(torch, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
