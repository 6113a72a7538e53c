"""Benchmark of warpforge.grouped_mm against torch._grouped_mm (where this
torch has it) and a loop of torch.mm over the groups, in one run on one GPU:
forward (gate/up projection) over published MoE expert shapes under a skewed
routing, and forward + backward (autograd) beside torch._grouped_mm's.

    python -m warpforge.bench_grouped [--models gpt-oss,qwen3] [--tokens 1,16,128,1024] [--weights bf16|mxfp4]
                                       [--backward] [--causes] [--reps 10]

Each figure: the median over --reps runs of CUDA events around one call,
after 3 warm-up calls; each run takes the next of 4 routings (other active
experts, so that no run finds their weights in L2). Ratios are theirs / ours
(above 1: ours faster).

--causes replaces the loop's columns by what separates a row's causes: the
kernel automatic selection takes (and, with --backward, dA's and dB's); the
GPU time of each side alone (10 calls replayed from a CUDA graph, so that no
host gap is inside); the host time a call (calls issued without waiting,
bench.host_us_per_call); at 128 tokens or fewer, ours with the sm90a kernel
forced; with --backward, ours dA and dB each alone (event-timed).
"""

import argparse
import functools
import re
import statistics

from warpforge.bench import host_us_per_call, median_ms

MODELS = {  # experts, top k, hidden, expert width
    "mixtral": (8, 2, 4096, 14336),
    "qwen3": (128, 8, 2048, 768),
    "gpt-oss": (128, 4, 2880, 2880),
    "deepseek": (256, 8, 7168, 2048),
}


def routing(torch, experts, top_k, tokens, skew, seed):
    """Group sizes of `tokens` tokens each taking top_k distinct experts drawn with weights 1/(rank+1)^skew."""
    g = torch.Generator().manual_seed(seed)
    weight = 1.0 / torch.arange(1, experts + 1, dtype=torch.float64) ** skew
    weight = weight[torch.randperm(experts, generator=g)]
    picks = torch.multinomial(weight.expand(tokens, experts), top_k, replacement=False, generator=g)
    return torch.bincount(picks.flatten(), minlength=experts)


def timed(torch, fn, reps, variants=4):
    """fn(i) runs with routing i; the median GPU time of a run, in us."""
    return median_ms(torch, [functools.partial(fn, i) for i in range(variants)], reps) * 1e3


def graph_us(torch, calls, reps=10):
    """The GPU time of a call alone: reps calls (calls[i % len(calls)])
    captured in a CUDA graph, replayed once to warm, then timed; None where
    the capture fails."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(len(calls)):
                calls[i]()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for r in range(reps):
                calls[r % len(calls)]()
        graph.replay()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1e3 / reps
    except RuntimeError:
        return None


def kernel_of(warpforge, a, b, offs, out_dtype=None):
    """The kernel automatic selection takes for warpforge.grouped_mm(a, b, offs)."""
    found = re.search(r"kernel (\w+)", warpforge.grouped.describe(a, b, offs, out_dtype))
    return found.group(1) if found else "?"


def _us(x):
    return "–" if x is None else f"{x:.1f}"


def main(argv=None):
    import torch

    import warpforge
    import warpforge.torch  # noqa: F401

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="gpt-oss,qwen3,mixtral,deepseek")
    parser.add_argument("--tokens", default="1,16,128,1024,8192")
    parser.add_argument("--weights", default="bf16", choices=["bf16", "mxfp4", "nvfp4", "mxfp8"])
    parser.add_argument("--backward", action="store_true", help="also time forward + backward (bf16)")
    parser.add_argument("--causes", action="store_true",
                        help="kernels, GPU-only and host times, sm90a forced, dA and dB alone (not the loop)")
    parser.add_argument("--skew", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench_grouped: needs a CUDA GPU")
    has_grouped_mm = hasattr(torch, "_grouped_mm")
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__} "
          f"({'with' if has_grouped_mm else 'without'} torch._grouped_mm); gate/up projection, bf16 D; "
          f"routing skew {args.skew}; median of {args.reps} runs.\n")
    header = "| model | tokens | ours us | torch._grouped_mm us | grouped_mm / ours |"
    if args.causes:
        header += (" kernel | ours GPU us | theirs GPU us | GPU theirs / ours | ours host us | theirs host us |"
                   " ours sm90a us |")
    else:
        header += " torch.mm loop us | loop / ours |"
    if args.weights != "bf16":
        header += f" ours {args.weights} us | bf16 ours / {args.weights} |"
    if args.backward:
        header += " fwd+bwd ours us | fwd+bwd torch._grouped_mm us | theirs / ours |"
        if args.causes:
            header += " dA kernel | dA us | dB kernel | dB us |"
    print(header)
    print("|" + "---|" * header.count(" |"))
    ratios, backward_ratios = [], []
    for name in args.models.split(","):
        experts, top_k, hidden, width = MODELS[name]
        k, n = hidden, 2 * width
        # B as torch._grouped_mm takes it on sm90: (G, K, N) with K contiguous.
        b = (torch.randn(experts, n, k, device="cuda") / k**0.5).bfloat16().transpose(-2, -1)
        packed = None
        if args.weights != "bf16":
            packed, _ = warpforge.quantize_weights(b.float().cpu(), args.weights)
            packed.codes, packed.scales = packed.codes.cuda(), packed.scales.cuda()
        for tokens in (int(t) for t in args.tokens.split(",")):
            rows = tokens * top_k
            a = torch.randn(rows, k, device="cuda").bfloat16()
            routings = [torch.cumsum(routing(torch, experts, top_k, tokens, args.skew, 100 * s + tokens), 0)
                        .to(torch.int32).cuda() for s in range(4)]
            ours = timed(torch, lambda i: warpforge.grouped_mm(a, b, routings[i]), args.reps)
            row = f"| {name} | {tokens} | {ours:.1f} |"
            if has_grouped_mm:
                theirs = timed(torch, lambda i: torch._grouped_mm(a, b, offs=routings[i]), args.reps)
                row += f" {theirs:.1f} | {theirs / ours:.2f} |"
                ratios.append(theirs / ours)
            else:
                row += " – | – |"
            if args.causes:
                ours_calls = [functools.partial(lambda i: warpforge.grouped_mm(a, b, routings[i]), i) for i in range(4)]
                theirs_calls = [functools.partial(lambda i: torch._grouped_mm(a, b, offs=routings[i]), i)
                                for i in range(4)] if has_grouped_mm else None
                ours_gpu = graph_us(torch, ours_calls)
                theirs_gpu = graph_us(torch, theirs_calls) if theirs_calls else None
                ratio = f"{theirs_gpu / ours_gpu:.2f}" if ours_gpu and theirs_gpu else "–"
                ours_host = host_us_per_call(torch, ours_calls[0], 20, 3)
                theirs_host = host_us_per_call(torch, theirs_calls[0], 20, 3) if theirs_calls else None
                forced = None
                if tokens <= 128:
                    d = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
                    try:
                        forced = timed(torch, lambda i: warpforge.grouped.run(a, b, routings[i], d, kernel="sm90a"),
                                       args.reps)
                    except warpforge.OpsError:  # not a Hopper GPU
                        pass
                row += (f" {kernel_of(warpforge, a, b, routings[0])} | {_us(ours_gpu)} | {_us(theirs_gpu)} | {ratio} |"
                        f" {ours_host:.1f} | {_us(theirs_host)} | {_us(forced)} |")
            else:
                host_ends = [o.tolist() for o in routings]

                def loop(i):
                    begin = 0
                    out = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
                    for g, end in enumerate(host_ends[i]):
                        if end > begin:
                            torch.mm(a[begin:end], b[g], out=out[begin:end])
                        begin = end
                    return out

                looped = timed(torch, loop, args.reps)
                row += f" {looped:.1f} | {looped / ours:.2f} |"
            if packed is not None:
                quantized = timed(torch, lambda i: warpforge.grouped_mm(a, packed, routings[i]), args.reps)
                row += f" {quantized:.1f} | {ours / quantized:.2f} |"
            if args.backward:
                a_grad, b_grad = a.clone().requires_grad_(), b.detach().clone().requires_grad_()
                grad = torch.randn(rows, n, device="cuda").bfloat16()
                ours_fb = timed(torch, lambda i: warpforge.grouped_mm(a_grad, b_grad, routings[i]).backward(grad),
                                args.reps)
                row += f" {ours_fb:.1f} |"
                if has_grouped_mm:
                    theirs_fb = timed(torch, lambda i: torch._grouped_mm(a_grad, b_grad, offs=routings[i]).backward(grad),
                                      args.reps)
                    row += f" {theirs_fb:.1f} | {theirs_fb / ours_fb:.2f} |"
                    backward_ratios.append(theirs_fb / ours_fb)
                else:
                    row += " – | – |"
                if args.causes:
                    # The two products the backward runs (grouped_torch._backward), each alone.
                    bt, gt = b.transpose(-2, -1), grad.t()
                    da = timed(torch, lambda i: warpforge.grouped_mm(grad, bt, routings[i]), args.reps)
                    db = timed(torch, lambda i: warpforge.grouped_mm(gt, a, routings[i]), args.reps)
                    row += (f" {kernel_of(warpforge, grad, bt, routings[0])} | {da:.1f} |"
                            f" {kernel_of(warpforge, gt, a, routings[0])} | {db:.1f} |")
            print(row, flush=True)
    if ratios:
        geomean = statistics.geometric_mean(ratios)
        print(f"\ntorch._grouped_mm / ours: geometric mean {geomean:.3f}, worst {min(ratios):.3f} over {len(ratios)} rows")
    if backward_ratios:
        print(f"fwd+bwd, torch._grouped_mm / ours: geometric mean {statistics.geometric_mean(backward_ratios):.3f}, "
              f"worst {min(backward_ratios):.3f} over {len(backward_ratios)} rows")


if __name__ == "__main__":
    main()
