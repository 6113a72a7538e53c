"""Tensor-parallel block-scaled GEMM + amax over a torch.distributed group,
with the group's own collectives (NCCL between GPUs, gloo between CPU
processes, where the simulator runs the op):

    c, amax = warpforge.distributed.gemm_amax(a, b, sfa, sfb, parallel="column", c_dtype=torch.bfloat16)

- parallel="column": B's N is split over the ranks. Each rank passes the
  whole A and its own B shard (N/P, K, L) with that shard's scales, and gets
  its C shard (M, N/P, L), computed by torch.ops.warpforge.gemm_amax as on
  one device: bit for bit the columns of the one-device C wherever the
  shard runs the whole problem's kernel and K split (GemmAmax.describe()
  names both; an N shard changes neither at the shapes tested), else within
  the f32 summation bound below. The amax is all-reduced with MAX, so every
  rank holds the amax of the whole C.
- parallel="row": K is split. Each rank passes its K shard of A and of B
  with their scales; each computes its partial product in f32, the partials
  are summed by an all-reduce, and one warpforge kernel
  (torch.ops.warpforge.convert_amax) converts the sum to c_dtype and takes
  its amax. Every rank gets the whole C (M, N, L), as the one-device op
  returns it. All-reduce rather than reduce-scatter over M: the result is a
  drop-in for the one-device op's (any M, L and c_major, no split of M to
  agree on), and the amax of the whole C then needs no second collective;
  the price is twice reduce-scatter's traffic and the conversion run on
  every rank. The sum differs from the one-device op's by the rounding of
  another f32 summation order: for every element,
      |C_row - C_one| <= 2·γ(K-1)·Σ_k |a_k·b_k|,  γ(n) = n·u/(1 - n·u), u = 2^-24.
  Both are f32 sums of the same K exact products (precision="exact", the
  default; "fast" rounds its FP8 products otherwise), and any order of
  summing n terms lies within γ(n-1)·Σ|terms| of the exact sum (Higham,
  Accuracy and Stability of Numerical Algorithms, §4.2); hence twice that
  between the two. C's dtype is f32, bf16 or f16 here.

The keyword arguments are torch.ops.warpforge.gemm_amax's. The collectives
are torch's functional collectives, so the call traces into torch.compile
graphs. In eager mode the ranks first compare their shapes and dtypes (one
small all-gather) and refuse, naming each rank's, when they disagree, all
of them before any other collective; inside torch.compile and CUDA graph
capture, or with check_ranks=False, that check is skipped."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from . import _warpforge, convert_amax
from . import torch as _ops  # registers torch.ops.warpforge
from ._frameworks import dtype_name

_PARALLEL = ("column", "row")


def gemm_amax(a, b, sfa, sfb, group=None, parallel="column", check_ranks=True, **options):
    """Block-scaled GEMM + amax split over the ranks of `group` (default: the
    whole world); see the module's text for what each rank passes and gets.
    check_ranks=False skips the eager comparison of the ranks' shapes (one
    small all-gather per call) where the caller knows they agree."""
    if not dist.is_initialized():
        raise _warpforge.RuntimeError(
            "warpforge.distributed.gemm_amax needs torch.distributed initialised (dist.init_process_group)")
    group = group or dist.group.WORLD
    # First, while every rank is in this call: a rank that refused alone
    # would leave the others waiting in a collective.
    if check_ranks and not _tracing(a):
        _check_ranks_agree(a, b, sfa, sfb, group, parallel, options)
    if parallel not in _PARALLEL:
        raise _warpforge.OpsError(f"parallel '{parallel}': accepted 'column' (N split) or 'row' (K split)")
    for name, x in (("a", a), ("b", b)):
        if x.dim() != 3:
            raise _warpforge.OpsError(f"{name} has shape {tuple(x.shape)}: expected ({'M' if name == 'a' else 'N'}, "
                                      "K, L) (FP4: K/2 bytes)")
    if parallel == "row":
        _check_row_split(a, options.get("sf_vec_size", 32), dist.get_world_size(group))
        convert_amax.check_c_dtype(dtype_name(options.get("c_dtype") or torch.float32))
    if parallel == "column":
        c, amax = _ops.gemm_amax(a, b, sfa, sfb, **options)
        return c, _all_reduced(amax, "max", group, a)
    c_dtype = options.pop("c_dtype", None) or torch.float32
    partial, _ = _ops.gemm_amax(a, b, sfa, sfb, c_dtype=torch.float32, **options)
    return _ops.convert_amax(_summed(partial, group), c_dtype)


def _check_row_split(a, sf_vec_size, world):
    packed = a.dtype in (torch.uint8, getattr(torch, "float4_e2m1fn_x2", torch.uint8))
    k = a.shape[1] * (2 if packed else 1)
    if k % sf_vec_size:
        raise _warpforge.OpsError(
            f"row-parallel K shard of {k} elements: each rank's K must be a multiple of sf_vec_size "
            f"({sf_vec_size}) so that no scale block straddles two ranks (the whole K a multiple of "
            f"{world} x {sf_vec_size} = {world * sf_vec_size})")


def _all_reduced(t, op, group, like):
    """t all-reduced over the group. Traced (torch.compile, CUDA graph
    capture): torch's functional collective, which the graph records. Eager:
    c10d's in-place all_reduce on t, an output of ours no one else holds,
    without the functional wrapper's cost: on two H200s the functional
    all-reduce of the amax added 0.053 ms a call from one GPU to two where
    the bf16 peer's c10d all_reduce added 0.024 (docs/PERFORMANCE.md)."""
    if _tracing(like):
        return funcol.wait_tensor(funcol.all_reduce(t, op, group))
    dist.all_reduce(t, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM, group=group)
    return t


def _tracing(a):
    return torch.compiler.is_compiling() or (a.is_cuda and torch.cuda.is_current_stream_capturing())


def _check_ranks_agree(a, b, sfa, sfb, group, parallel, options):
    """Every rank must pass shards of one shape and dtype, and the same
    options: a column split gives each rank N/P rows of B (A whole), a row
    split K/P of A and B."""
    mine = (tuple(a.shape), tuple(b.shape), tuple(sfa.shape), tuple(sfb.shape), str(a.dtype), str(b.dtype),
            str(sfa.dtype), str(sfb.dtype), parallel, sorted((k, str(v)) for k, v in options.items()))
    everyone = [None] * dist.get_world_size(group)
    dist.all_gather_object(everyone, mine, group=group)
    if any(other != everyone[0] for other in everyone):
        split = "B's N (each rank the whole A)" if parallel == "column" else "A's and B's K"
        listing = "; ".join(f"rank {r}: a {d[0]} {d[4]}, b {d[1]} {d[5]}, sfa {d[2]}, sfb {d[3]}, {d[8]}, "
                            f"options {dict(d[9])}" for r, d in enumerate(everyone))
        raise _warpforge.OpsError(
            f"{parallel}-parallel gemm_amax needs shards of equal shape and dtype and the same options on every "
            f"rank ({split} split evenly), got {listing}")


def _summed(partial, group):
    """The all-reduced sum of the ranks' partial C, in partial's layout: the
    collective runs on the contiguous tensor its memory order gives."""
    order = sorted(range(partial.dim()), key=lambda d: -partial.stride(d))
    inverse = [order.index(d) for d in range(partial.dim())]
    flat = partial.permute(order)
    summed = _all_reduced(flat, "sum", group, partial)
    return summed.permute(inverse)
