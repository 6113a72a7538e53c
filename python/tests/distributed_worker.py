"""One rank of test_distributed.py's two-process torch.distributed run: gloo
and CPU tensors on the simulator, or NCCL and one GPU a rank (device
"cuda"): every call of warpforge.distributed.gemm_amax the tests check, its
results saved to <out>/rank<r>.pt. Not a test module."""

import numpy as np
import torch
import torch.distributed as dist

import warpforge
import warpforge.distributed as wdist

M, N, K = 64, 64, 256
SEED = 2026


def full_problem(fmt):
    """The whole problem's inputs (the same on every rank): x (M, K, 1), y (N, K, 1)."""
    rng = np.random.default_rng(SEED if fmt == "mxfp8" else SEED + 1)
    x = torch.from_numpy(rng.uniform(-2.0, 2.0, (M, K, 1)).astype(np.float32))
    y = torch.from_numpy(rng.uniform(-2.0, 2.0, (N, K, 1)).astype(np.float32))
    return x, y


def column_shard(fmt, rank, world, device="cpu"):
    x, y = (t.to(device) for t in full_problem(fmt))
    cols = N // world
    return (*warpforge.quantize(x, fmt), *warpforge.quantize(y[rank * cols:(rank + 1) * cols], fmt))


def row_shard(fmt, rank, world, device="cpu"):
    x, y = (t.to(device) for t in full_problem(fmt))
    ks = slice(rank * K // world, (rank + 1) * K // world)
    return (*warpforge.quantize(x[:, ks].contiguous(), fmt), *warpforge.quantize(y[:, ks].contiguous(), fmt))


def refusal(call):
    try:
        call()
    except warpforge.Error as e:
        return f"{type(e).__name__}: {e}"
    return "no refusal"


def run(rank, world, rendezvous, out, device="cpu"):
    if device == "cuda":
        torch.cuda.set_device(rank)
        device = f"cuda:{rank}"
    dist.init_process_group("gloo" if device == "cpu" else "nccl", init_method=f"file://{rendezvous}", rank=rank,
                            world_size=world)
    results = {}
    for fmt, vec in (("mxfp8", 32), ("nvfp4", 16)):
        a, sfa, b, sfb = column_shard(fmt, rank, world, device)
        results[f"column_{fmt}"] = wdist.gemm_amax(a, b, sfa, sfb, parallel="column", c_dtype=torch.bfloat16,
                                                   sf_vec_size=vec)
        a, sfa, b, sfb = row_shard(fmt, rank, world, device)
        for c_dtype, c_major in ((torch.float32, "n"), (torch.bfloat16, "n"), (torch.float16, "m")):
            results[f"row_{fmt}_{c_dtype}_{c_major}"] = wdist.gemm_amax(
                a, b, sfa, sfb, parallel="row", c_dtype=c_dtype, c_major=c_major, sf_vec_size=vec)
        results[f"row_{fmt}_unchecked"] = wdist.gemm_amax(a, b, sfa, sfb, parallel="row", c_dtype=torch.float32,
                                                          sf_vec_size=vec, check_ranks=False)

    # torch.compile traces the call (the functional collectives, both ops)
    # into one graph; aot_eager runs it without generating code.
    a, sfa, b, sfb = row_shard("mxfp8", rank, world, device)
    compiled = torch.compile(lambda *t: wdist.gemm_amax(*t, parallel="row", c_dtype=torch.bfloat16),
                             fullgraph=True, backend="aot_eager")
    results["row_compiled"] = compiled(a, b, sfa, sfb)

    # Refusals: shards of unequal shape (rank 1 with 16 rows of B where rank 0
    # has 32), an A dtype the op refuses (on every rank alike, before any
    # collective), a K shard that splits a scale block, an FP8 C for the row
    # split, an unknown split.
    a, sfa, b, sfb = column_shard("mxfp8", rank, world, device)
    if rank == 1:
        b, sfb = warpforge.quantize(full_problem("mxfp8")[1][:16].to(device), "mxfp8")
    results["refuse_unequal"] = refusal(lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="column"))
    a, sfa, b, sfb = column_shard("mxfp8", rank, world, device)
    results["refuse_a_dtype"] = refusal(lambda: wdist.gemm_amax(a.float(), b, sfa, sfb, parallel="column"))
    x, y = (t.to(device) for t in full_problem("mxfp8"))
    a, sfa = warpforge.quantize(x[:, :48].contiguous(), "mxfp8")
    b, sfb = warpforge.quantize(y[:, :48].contiguous(), "mxfp8")
    results["refuse_k"] = refusal(lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="row"))
    a, sfa, b, sfb = row_shard("mxfp8", rank, world, device)
    results["refuse_c_dtype"] = refusal(
        lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="row", c_dtype=torch.float8_e4m3fn))
    results["refuse_parallel"] = refusal(lambda: wdist.gemm_amax(a, b, sfa, sfb, parallel="diagonal"))
    results = {key: tuple(t.cpu() for t in value) if isinstance(value, tuple) else value
               for key, value in results.items()}
    torch.save(results, f"{out}/rank{rank}.pt")
    dist.destroy_process_group()
