"""warpforge's benchmarks from Python, each beside its peer in the same run.

Host overhead (the default): microseconds of host time per call of
torch.ops.warpforge.gemm_amax on a cached op (its C++ kernel where the
package was built with torch), beside its Python implementation registered
as an operator of the same schema, torch.ops.warpforge.gemm and
warpforge.gemm on bf16 operands of the same M, N, K, and a bare torch.mm, on a problem small
enough that the GPU keeps up with the calls, and where the Python
implementation's time goes. Calls are issued in batches of --calls (fewer than the launch
queue holds), the GPU drained between batches; each batch's host time over
its calls is one sample, and the median of --repeats samples is printed.

    python -m warpforge.bench [--m 128 --n 128 --k 256] [--format mxfp8] [--calls 200] [--repeats 50]

Throughput (--throughput): TFLOP/s of torch.ops.warpforge.gemm (bf16; its
C++ kernel where the package was built with torch) or of
torch.ops.warpforge.gemm_amax (--format mxfp8|mxfp4|nvfp4, bf16 C) beside
torch.mm on bf16 inputs of the same shape (cuBLAS), per shape: CUDA events
around each call, the median of --reps after warm-up, inputs rotated among
copies larger than twice the L2 together. That is what an eager PyTorch
user gets: where the kernel is shorter than the call's host time, the time
is the host's. --back-to-back adds a second pair of columns: one event pair
around --reps calls issued back to back, divided by --reps, where the
launches queue up and the GPU time shows; a shape whose two ratios differ is
host-bound. --plot FILE.svg (which implies
--throughput) draws the run
under its roofline with matplotlib (warpforge.plot): the tensor-core rate
(--peak-tflops, else SMs x clock x dense bf16 FLOP per clock where torch
reports the clock) and each shape's bytes at the device-to-device copy
bandwidth measured in the run (or --copy-gbps).

    python -m warpforge.bench --throughput [--format bf16] [--shapes 1x8192x8192,...] [--reps 20] [--back-to-back]
    python -m warpforge.bench --plot gemm.svg [--format nvfp4] [--peak-tflops R] [--copy-gbps B]

The decoder sweep (--sweep llm, which implies --throughput): the shapes of
bench_gemm --sweep llm (two published decoders' projections at M from 1 to
8192, warpforge._warpforge.decoder_sweep()), then the ratio's geometric
mean and worst shape and, for M <= 256, where reading B bounds a GEMM, each
side's bandwidth (A + B + D bytes over the time) against a device-to-device
copy measured in the same run.

    python -m warpforge.bench --sweep llm [--format bf16] [--reps 20] [--back-to-back]

Needs torch with a CUDA GPU. `python -m warpforge.bench triton` is another
benchmark: Triton's tutorial kernels on the simulator against
TRITON_INTERPRET=1, on the CPU (warpforge/triton/bench.py)."""

import argparse
import math
import statistics
import sys
import time

_L2_BYTES = 50 << 20  # H100 and H200
_DEFAULT_SHAPES = "1x8192x8192,16x8192x8192,64x8192x8192,128x8192x8192,256x8192x8192,1024x8192x8192,4096x4096x4096"


def host_us_per_call(torch, call, calls, repeats):
    call()  # compile / warm caches
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def python_operator(torch, warpforge):
    """gemm_amax's Python implementation (the operator's kernel where the C++
    one is not built) registered as torch.ops.warpforge_bench.gemm_amax with
    the same schema: the same call through torch's dispatcher."""
    if not hasattr(torch.ops.warpforge_bench, "gemm_amax"):
        library = torch.library.Library("warpforge_bench", "DEF")
        library.define(warpforge.torch.GEMM_AMAX_SCHEMA)
        for key in ("CUDA", "CPU"):
            library.impl("gemm_amax", warpforge.torch._gemm_amax, key)
        python_operator.library = library  # torch drops an operator with its library
    return torch.ops.warpforge_bench.gemm_amax


def host_overhead(torch, warpforge, args):
    from warpforge._frameworks import to_tensor

    x = torch.rand(args.m, args.k, 1, device="cuda") * 4 - 2
    y = torch.rand(args.n, args.k, 1, device="cuda") * 4 - 2
    a, sfa = warpforge.quantize(x, args.format)
    b, sfb = warpforge.quantize(y, args.format)
    vec = 16 if args.format == "nvfp4" else 32
    op = torch.ops.warpforge.gemm_amax
    python_op = python_operator(torch, warpforge)
    xa, yb = x[:, :, 0].bfloat16(), y[:, :, 0].bfloat16().t()

    def timed(call):
        return host_us_per_call(torch, call, args.calls, args.repeats)

    registered = "C++ kernel" if warpforge.torch.CPP_KERNELS else "Python implementation"
    rows = [
        (f"torch.ops.warpforge.gemm_amax (cached op), {registered}",
         timed(lambda: op(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec))),
        ("torch.ops.warpforge.gemm_amax.default", timed(
            lambda: op.default(a, b, sfa, sfb, "n", torch.bfloat16, None, None, None, vec, "exact", "auto"))),
        ("the Python implementation as an operator", timed(
            lambda: python_op(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec))),
        (f"torch.ops.warpforge.gemm (bf16, same M, N, K), {registered}",
         timed(lambda: torch.ops.warpforge.gemm(xa, yb))),
        ("warpforge.gemm (bf16, same M, N, K)", timed(lambda: warpforge.gemm(xa, yb))),
        ("torch.mm (bf16, same M, N, K)", timed(lambda: torch.mm(xa, yb))),
    ]
    # The same aten kernel called as a torch.ops operator is called (Python
    # packet, schema-driven argument parsing, boxed dispatch): the call path
    # every custom operator pays, whatever language its kernel is in.
    via_ops = ("  torch.mm through torch.ops.aten.mm.default", timed(lambda: torch.ops.aten.mm.default(xa, yb)))
    # Where the Python implementation's time goes: the function without
    # torch's dispatcher, the C++ launch alone (amax's memset and the kernel),
    # and its two output allocations.
    impl = warpforge.torch._gemm_amax
    c, amax = op(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec)
    cached = warpforge._warpforge.gemm_amax_op(  # the compiled op the operator runs (kept by description)
        *[to_tensor(x, role) for x, role in ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))],
        c_dtype="bf16", sf_vec_size=vec)
    addresses = tuple(t.data_ptr() for t in (a, b, sfa, sfb, c, amax))
    stream = torch.cuda.current_stream().cuda_stream
    parts = [
        ("  of which: the function, no dispatcher", timed(
            lambda: impl(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec))),
        ("  of which: C++ launch (memset + kernel)", timed(
            lambda: cached.execute_addresses(addresses, stream=stream, zero_amax=True))),
        ("  of which: allocating C and amax", timed(
            lambda: (torch.empty_strided(c.shape, c.stride(), dtype=c.dtype, device=c.device),
                     torch.empty((1, 1, 1), dtype=torch.float32, device=c.device)))),
    ]
    print(f"host time per call, {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{args.format} {args.m}x{args.n}x{args.k}, median of {args.repeats} batches of {args.calls} calls")
    print(f"| {'call':56} | µs per call | vs torch.mm |")
    print(f"|{'-' * 58}|-------------|------------|")
    mm = rows[-1][1]
    for name, us in rows + [via_ops] + parts:
        print(f"| {name:56} | {us:11.2f} | {us / mm:10.2f} |")
    print(f"target: <= 10 µs per call for the cached op: {'met' if rows[0][1] <= 10 else 'NOT met'}")
    return 0


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) >= 1 for p in parts):
            raise SystemExit(f"python -m warpforge.bench: --shapes item {item!r} is not MxNxK (e.g. 16x8192x8192)")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


def median_ms(torch, calls, reps):
    """The median time of calls[i % len(calls)]() over reps runs after three
    warm-ups, every event recorded before any is read (GPU time, not host)."""
    for i in range(3):
        calls[i % len(calls)]()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for r in range(reps):
        starts[r].record()
        calls[r % len(calls)]()
        ends[r].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def back_to_back_ms(torch, calls, reps):
    """The time of reps calls issued back to back (calls[i % len(calls)]),
    over reps, after three warm-ups: one event pair around them all, so the
    host's time per call hides behind the GPU's wherever it is shorter."""
    for i in range(3):
        calls[i % len(calls)]()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for r in range(reps):
        calls[r % len(calls)]()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def copy_gbps(torch):
    src = torch.empty(512 << 20, dtype=torch.uint8, device="cuda").fill_(0x3C)
    dst = torch.empty_like(src)
    ms = median_ms(torch, [lambda: dst.copy_(src)], 20)
    return 2 * src.numel() / (ms * 1e-3) / 1e9  # read and write


def dense_bf16_tflops(torch):
    """SMs x top clock x dense bf16 FLOP per clock and SM (4096 on sm_90, 2048 on sm_80); 0 where unknown."""
    props = torch.cuda.get_device_properties(0)
    per_clock = {(9, 0): 4096, (8, 0): 2048}.get((props.major, props.minor), 0)
    khz = getattr(props, "clock_rate", 0)
    return props.multi_processor_count * khz * 1e3 * per_clock / 1e12


def throughput(torch, warpforge, args):
    fmt = args.format
    series = "warpforge" if fmt == "bf16" else f"warpforge {fmt}"
    rows = []
    kernel = "C++ kernel" if warpforge.torch.CPP_KERNELS else "Python implementation"
    ours_name = ("torch.ops.warpforge.gemm, bf16" if fmt == "bf16" else
                 f"torch.ops.warpforge.gemm_amax, {fmt}, bf16 C") + f" ({kernel})"
    b2b = f"; back to back: {args.reps} calls between one event pair" if args.back_to_back else ""
    print(f"TFLOP/s, {torch.cuda.get_device_name()}, torch {torch.__version__}; ours: {ours_name}; "
          f"peer: torch.mm on bf16 (cuBLAS); median of {args.reps} runs, events around each call{b2b}")
    if args.back_to_back:
        print("| M x N x K | ours TFLOP/s | torch.mm TFLOP/s | ours / torch.mm "
              "| ours b2b TFLOP/s | torch.mm b2b TFLOP/s | b2b ours / torch.mm |")
        print("|---|---|---|---|---|---|---|")
    else:
        print("| M x N x K | ours TFLOP/s | torch.mm TFLOP/s | ours / torch.mm |")
        print("|---|---|---|---|")
    shapes = warpforge._warpforge.decoder_sweep() if args.sweep else parse_shapes(args.shapes)
    for m, n, k in shapes:
        per_copy = (m * k + k * n + m * n) * 2
        copies = max(2, 2 * _L2_BYTES // per_copy + 1)
        xs = [torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 4 - 2 for _ in range(copies)]
        ws = [torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 4 - 2 for _ in range(copies)]
        peer = [lambda x=x, w=w: torch.mm(x, w.t()) for x, w in zip(xs, ws)]
        if fmt == "bf16":
            ours = [lambda x=x, w=w: torch.ops.warpforge.gemm(x, w.t()) for x, w in zip(xs, ws)]
            moved = per_copy
        else:
            vec = 16 if fmt == "nvfp4" else 32
            quantized = [(warpforge.quantize(x.float()[:, :, None], fmt), warpforge.quantize(w.float()[:, :, None], fmt))
                         for x, w in zip(xs, ws)]
            ours = [lambda q=q: torch.ops.warpforge.gemm_amax(q[0][0], q[1][0], q[0][1], q[1][1], c_dtype=torch.bfloat16,
                                                              sf_vec_size=vec) for q in quantized]
            code_bytes = 0.5 if fmt in ("mxfp4", "nvfp4") else 1.0
            moved = (m + n) * k * (code_bytes + 1.0 / vec) + 2 * m * n
        flops = 2.0 * m * n * k
        ours_tf = flops / (median_ms(torch, ours, args.reps) * 1e-3) / 1e12
        peer_tf = flops / (median_ms(torch, peer, args.reps) * 1e-3) / 1e12
        row = {"shape": f"{m}x{n}x{k}", "bytes": moved, series: ours_tf, "cuBLAS bf16": peer_tf}
        cells = f"| {m} x {n} x {k} | {ours_tf:.1f} | {peer_tf:.1f} | {ours_tf / peer_tf:.3f} |"
        if args.back_to_back:
            row[series + " b2b"] = flops / (back_to_back_ms(torch, ours, args.reps) * 1e-3) / 1e12
            row["cuBLAS bf16 b2b"] = flops / (back_to_back_ms(torch, peer, args.reps) * 1e-3) / 1e12
            cells += (f" {row[series + ' b2b']:.1f} | {row['cuBLAS bf16 b2b']:.1f} | "
                      f"{row[series + ' b2b'] / row['cuBLAS bf16 b2b']:.3f} |")
        print(cells, flush=True)
        rows.append(row)
    if args.sweep:
        sweep_summary(rows, series, args.copy_gbps or copy_gbps(torch), args.back_to_back)
    if args.plot:
        from . import plot

        peak = args.peak_tflops or dense_bf16_tflops(torch)
        if peak <= 0:
            raise SystemExit(f"python -m warpforge.bench: --plot: no dense bf16 rate known for "
                             f"{torch.cuda.get_device_name()} (torch reports no clock); give --peak-tflops")
        bandwidth = args.copy_gbps or copy_gbps(torch)
        plot.plot_benchmarks(rows, peak_tflops=peak, copy_gbps=bandwidth, series=(series, "cuBLAS bf16"),
                             title=f"{series} vs cuBLAS bf16, {torch.cuda.get_device_name()}", path=args.plot)
        print(f"wrote {args.plot} (tensor cores {peak:.0f} TFLOP/s, copy {bandwidth:.0f} GB/s)")
    return 0


def sweep_summary(rows, series, bandwidth, back_to_back=False):
    """The decoder sweep's last lines: geometric mean and worst of ours / torch.mm (each timing
    given), and at M <= 256 both sides' bytes per second against the copy's."""
    timings = [("\nSweep llm", series, "cuBLAS bf16")]  # events around each call
    if back_to_back:
        timings.append(("Back to back", series + " b2b", "cuBLAS bf16 b2b"))
    for label, ours, peer in timings:
        ratios = [(row[ours] / row[peer], row["shape"]) for row in rows]
        mean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        worst = min(ratios)
        print(f"{label}, {len(rows)} shapes: ours / torch.mm geometric mean {mean:.3f}; "
              f"worst {worst[0]:.3f} at {worst[1]}.")
    print(f"M <= 256, bytes moved over the time (events around each call) against a device-to-device copy "
          f"of {bandwidth:.0f} GB/s:")
    print("| M x N x K | ours / copy | torch.mm / copy |")
    print("|---|---|---|")
    for row in rows:
        m, n, k = (int(v) for v in row["shape"].split("x"))
        if m > 256:
            continue
        flops = 2.0 * m * n * k
        ours_gbps, peer_gbps = (row["bytes"] / (flops / (row[key] * 1e12)) / 1e9 for key in (series, "cuBLAS bf16"))
        print(f"| {m} x {n} x {k} | {ours_gbps / bandwidth:.2f} | {peer_gbps / bandwidth:.2f} |")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["triton"]:
        from .triton.bench import main as triton_bench

        return triton_bench(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--throughput", action="store_true", help="TFLOP/s per shape instead of host overhead")
    parser.add_argument("--m", type=int, default=128)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--format", default=None, choices=["bf16", "mxfp8", "mxfp4", "nvfp4"],
                        help="host overhead: mxfp8 (default), mxfp4, nvfp4; --throughput: bf16 (default) or those")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--shapes", default=None, help=f"MxNxK,... (default {_DEFAULT_SHAPES})")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--plot", default=None, help="draw a throughput run into this SVG (matplotlib; implies --throughput)")
    parser.add_argument("--sweep", default=None, choices=["llm"],
                        help="llm: the decoder sweep's shapes and summary (implies --throughput; not with --shapes)")
    parser.add_argument("--back-to-back", action="store_true",
                        help="throughput: also time --reps calls back to back between one event pair (GPU-bound)")
    parser.add_argument("--peak-tflops", type=float, default=0.0)
    parser.add_argument("--copy-gbps", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.sweep and args.shapes is not None:
        parser.error("--sweep llm chooses the shapes: give it or --shapes, not both")
    args.shapes = args.shapes or _DEFAULT_SHAPES
    args.throughput = args.throughput or bool(args.plot) or bool(args.sweep)  # both are throughput runs
    if not args.throughput and args.format == "bf16":
        parser.error("--format bf16 belongs to --throughput: the host-overhead run times gemm_amax")
    if args.format is None:
        args.format = "bf16" if args.throughput else "mxfp8"
    parse_shapes(args.shapes)  # refuse a bad list before touching the GPU

    import torch

    if not torch.cuda.is_available():
        print("warpforge.bench: needs torch with a CUDA GPU", file=sys.stderr)
        return 2
    import warpforge
    import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)

    return (throughput if args.throughput else host_overhead)(torch, warpforge, args)


if __name__ == "__main__":
    sys.exit(main())
