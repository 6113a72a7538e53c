"""Host overhead of torch.ops.warpforge.gemm_amax on a cached op, beside a
bare torch.mm in the same run: microseconds of host time per call, on a
problem small enough that the GPU keeps up with the calls.

    python -m warpforge.bench [--m 128 --n 128 --k 256] [--format mxfp8] [--calls 200] [--repeats 50]

Calls are issued in batches of --calls (fewer than the launch queue holds),
the GPU drained between batches; each batch's host time over its calls is
one sample, and the median of --repeats samples is printed. Needs torch
with a CUDA GPU."""

import argparse
import statistics
import sys
import time


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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", type=int, default=128)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--format", default="mxfp8", choices=["mxfp8", "mxfp4", "nvfp4"])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("warpforge.bench: needs torch with a CUDA GPU", file=sys.stderr)
        return 2
    import warpforge
    import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)
    from warpforge._frameworks import to_tensor

    x = torch.rand(args.m, args.k, 1, device="cuda") * 4 - 2
    y = torch.rand(args.n, args.k, 1, device="cuda") * 4 - 2
    a, sfa = warpforge.quantize(x, args.format)
    b, sfb = warpforge.quantize(y, args.format)
    vec = 16 if args.format == "nvfp4" else 32
    op = torch.ops.warpforge.gemm_amax
    xa, yb = x[:, :, 0].bfloat16(), y[:, :, 0].bfloat16().t()

    rows = [
        ("torch.ops.warpforge.gemm_amax (cached op)",
         host_us_per_call(torch, lambda: op(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec),
                          args.calls, args.repeats)),
        ("torch.ops.warpforge.gemm_amax.default", host_us_per_call(
            torch, lambda: op.default(a, b, sfa, sfb, "n", torch.bfloat16, None, None, None, vec, "exact", "auto"),
            args.calls, args.repeats)),
        ("torch.mm (bf16, same M, N, K)", host_us_per_call(torch, lambda: torch.mm(xa, yb), args.calls,
                                                           args.repeats)),
    ]
    # Where the cached op's time goes: its Python implementation without
    # torch's dispatcher, the C++ launch alone (amax's memset and the
    # kernel), and the two output allocations.
    impl = warpforge.torch._gemm_amax
    c, amax = op(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec)
    cached = warpforge._warpforge.gemm_amax_op(  # the compiled op the operator runs (kept by description)
        *[to_tensor(x, role) for x, role in ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))],
        c_dtype="bf16", sf_vec_size=vec)
    addresses = tuple(t.data_ptr() for t in (a, b, sfa, sfb, c, amax))
    stream = torch.cuda.current_stream().cuda_stream
    parts = [
        ("  of which: the implementation, no dispatcher", host_us_per_call(
            torch, lambda: impl(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec), args.calls, args.repeats)),
        ("  of which: C++ launch (memset + kernel)", host_us_per_call(
            torch, lambda: cached.execute_addresses(addresses, stream=stream, zero_amax=True), args.calls,
            args.repeats)),
        ("  of which: allocating C and amax", host_us_per_call(
            torch, lambda: (torch.empty_strided(c.shape, c.stride(), dtype=c.dtype, device=c.device),
                            torch.empty((1, 1, 1), dtype=torch.float32, device=c.device)), args.calls, args.repeats)),
    ]
    print(f"host time per call, {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{args.format} {args.m}x{args.n}x{args.k}, median of {args.repeats} batches of {args.calls} calls")
    print(f"| {'call':45} | µs per call | vs torch.mm |")
    print(f"|{'-' * 47}|-------------|------------|")
    mm = rows[-1][1]
    for name, us in rows + parts:
        print(f"| {name:45} | {us:11.2f} | {us / mm:10.2f} |")
    print(f"target: <= 10 µs per call for the cached op: {'met' if rows[0][1] <= 10 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
