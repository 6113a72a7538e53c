"""warpforge.distributed.gemm_amax timed on every rank of a torchrun job,
beside torch's own tensor-parallel bf16 matmul with the same collectives.
One rank per GPU (NCCL); without CUDA, gloo and the simulator (tiny shapes
only: a check of this script, not a measurement).

    torchrun --nproc-per-node 2 -m warpforge.bench_distributed [--shapes 8192x16384x8192,16x16384x8192]
                                                               [--formats mxfp8,nvfp4] [--reps 20]

Per shape M x N x K and format, rank 0 prints Markdown rows:
- column, weak scaling: each rank multiplies the whole A (M, K) by its own
  B of N rows (the job's N is ranks x N); time per call and TFLOP/s per GPU,
  to compare with the one-GPU job's row;
- row: the K of one GPU's problem split over the ranks; time per call, and
  apart: the local GEMM (f32 partial), the all-reduce of the partials, and
  the conversion + amax kernel;
- torch: the bf16 matmul of the same shards (torch.mm), with the amax
  all-reduced with MAX (column) or the bf16 partials all-reduced (row).
The calls skip the ranks' shape check (check_ranks=False), as a model
whose shards are fixed would. Times are the median of --reps calls after warm-up, CUDA events around each
(host clock on the simulator), ranks in step through a barrier."""

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist

import warpforge
import warpforge.distributed as wdist


def timer(device):
    """ms of one call of f(), the GPU drained before and after."""
    def measure(f):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            f()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end)
        begin = time.perf_counter()
        f()
        return (time.perf_counter() - begin) * 1e3
    return measure


def median_ms(measure, f, reps):
    for _ in range(2):
        f()
    samples = []
    for _ in range(reps):
        dist.barrier()
        samples.append(measure(f))
    return statistics.median(samples)


def operands(m, n, k, fmt, device, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(m, k, 1, generator=gen) * 4 - 2
    y = torch.rand(n, k, 1, generator=gen) * 4 - 2
    a, sfa = warpforge.quantize(x.to(device), fmt)
    b, sfb = warpforge.quantize(y.to(device), fmt)
    return (a, b, sfa, sfb), x[:, :, 0].to(device, torch.bfloat16), y[:, :, 0].to(device, torch.bfloat16)


def rows_for(m, n, k, fmt, device, args):
    rank, world = dist.get_rank(), dist.get_world_size()
    vec = 16 if fmt == "nvfp4" else 32
    measure = timer(device)
    flop = 2.0 * m * n * k
    rows = []

    # Column, weak scaling: this rank's B is N rows of its own.
    (a, b, sfa, sfb), xa, yb = operands(m, n, k, fmt, device, seed=rank)
    ms = median_ms(measure, lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="column", c_dtype=torch.bfloat16,
                                                    sf_vec_size=vec, check_ranks=False), args.reps)

    def torch_column():
        amax = (xa @ yb.t()).abs().amax().float()
        dist.all_reduce(amax, op=dist.ReduceOp.MAX)

    peer = median_ms(measure, torch_column, args.reps)
    rows.append(f"| {world} | column (N {n} per GPU) | {fmt} | {m} x {n * world} x {k} | {ms:.3f} | "
                f"{flop / ms / 1e9:.1f} | | | | {peer:.3f} |")

    # Row: one GPU's K split over the ranks.
    if k % (world * 4 * vec):
        rows.append(f"| {world} | row | {fmt} | {m} x {n} x {k} | K not a multiple of {world * 4 * vec}: skipped |")
        return rows
    (a, b, sfa, sfb), xa, yb = operands(m, n, k // world, fmt, device, seed=100 + rank)
    ms = median_ms(measure, lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="row", c_dtype=torch.bfloat16,
                                                    sf_vec_size=vec, check_ranks=False), args.reps)
    partial, _ = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    gemm_ms = median_ms(measure, lambda: torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec), args.reps)
    reduce_ms = median_ms(measure, lambda: dist.all_reduce(partial.clone()), args.reps)
    convert_ms = median_ms(measure, lambda: torch.ops.warpforge.convert_amax(partial, torch.bfloat16), args.reps)

    def torch_row():
        dist.all_reduce(xa @ yb.t())

    peer = median_ms(measure, torch_row, args.reps)
    rows.append(f"| {world} | row (K {k // world} per GPU) | {fmt} | {m} x {n} x {k} | {ms:.3f} | "
                f"{flop / world / ms / 1e9:.1f} | {gemm_ms:.3f} | {reduce_ms:.3f} | {convert_ms:.3f} | {peer:.3f} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench_distributed", description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="8192x16384x8192,16x16384x8192", help="M x N x K, comma-separated")
    parser.add_argument("--formats", default="mxfp8,nvfp4")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    lines = ["| GPUs | split | format | M x N x K | ms | TFLOP/s per GPU | GEMM ms | all-reduce ms | convert ms | "
             "torch bf16 ms |", "|---|---|---|---|---|---|---|---|---|---|"]
    for shape in args.shapes.split(","):
        m, n, k = (int(v) for v in shape.lower().split("x"))
        for fmt in args.formats.split(","):
            lines += rows_for(m, n, k, fmt, device, args)
    if dist.get_rank() == 0:
        print(f"{torch.cuda.get_device_name() if cuda else 'simulator (gloo)'}, {dist.get_world_size()} rank(s)")
        print("\n".join(lines))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
