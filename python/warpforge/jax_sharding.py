"""Tensor-parallel block-scaled GEMM + amax in JAX: warpforge.jax.gemm_amax
(the FFI op) under jax.shard_map, with XLA's collectives:

    c, amax = warpforge.jax_sharding.gemm_amax(a, b, sfa, sfb, mesh, "tp", parallel="column")

a (M, K, L), b (N, K, L) and the 6-D scales are the whole problem's arrays;
the mesh axis `axis_name` splits it.
- parallel="column": B's N (and SFB's 128-row blocks) split; each device
  runs the op on its columns, jax.lax.pmax makes the amax the whole C's.
  C comes back sharded over N, its values those of the one-device op.
- parallel="row": K (and both scales' 4-block columns) split; each device's
  partial C in f32, summed by jax.lax.psum, then converted to c_dtype and
  its amax taken by XLA (one fused elementwise pass; the torch side runs
  warpforge's own kernel for it). C comes back replicated, within
  2·γ(K-1)·Σ|a·b| of the one-device op's (see warpforge.distributed).

shard_gemm_amax is the per-device body, for use inside a shard_map of
one's own.

partitioned_gemm_amax is the op for plain jax.jit over sharded arrays (no
mesh argument, no shard_map): a custom_partitioning rule reads the
shardings XLA chose for the operands and splits the work by them —
- A's M sharded (B whole): each device its rows of C, pmax on the amax;
- B's N sharded (A whole): each device its columns of C, pmax on the amax;
- K sharded in A and B alike: psum of the f32 partials, then conversion
  and amax, C replicated;
each only where every device's part holds whole 128-row (M, N) or
4-scale (K) blocks of the scale layout. Any other sharding (L, two
dimensions at once, parts of blocks) runs the whole op on every device
from gathered operands: the same result, without the split.

    c, amax = jax.jit(partitioned_gemm_amax)(a, b, sfa, sfb)   # a, b sharded"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from . import _warpforge
from . import jax as wjax
from ._frameworks import dtype_name

# The 128x4 scale layout (32, 4, ceil(rows/128), 4, ceil(K/vec/4), L): rows
# in blocks of 128, K in blocks of 4 scales.
_ROW_BLOCK = 128
_SCALE_K_BLOCK = 4


def shard_gemm_amax(a, b, sfa, sfb, axis_name, parallel="column", **options):
    """One device's part, inside shard_map over `axis_name`: its shard of
    the problem in; out, its C columns ("column": B's N split), its C rows
    ("rows": A's M split) or the whole C ("row": K split), and the whole C's
    amax."""
    if parallel in ("column", "rows"):
        c, amax = wjax.gemm_amax(a, b, sfa, sfb, **options)
        return c, jax.lax.pmax(amax, axis_name)
    c_dtype = options.pop("c_dtype", None) or jnp.float32
    partial, _ = wjax.gemm_amax(a, b, sfa, sfb, c_dtype=jnp.float32, **options)
    summed = jax.lax.psum(partial, axis_name)
    return summed.astype(c_dtype), jnp.max(jnp.abs(summed)).reshape(1, 1, 1)


def gemm_amax(a, b, sfa, sfb, mesh, axis_name, parallel="column", **options):
    """The whole problem split over mesh axis `axis_name` (see the module's text)."""
    if parallel not in ("column", "row"):
        raise _warpforge.OpsError(f"parallel '{parallel}': accepted 'column' (N split) or 'row' (K split)")
    _check_6d_scales(sfa, sfb)
    if axis_name not in mesh.shape:
        raise _warpforge.OpsError(f"axis_name '{axis_name}' is not an axis of the mesh (axes {tuple(mesh.shape)})")
    devices = mesh.shape[axis_name]
    packed = a.dtype == jnp.uint8
    k = a.shape[1] * (2 if packed else 1)
    vec = options.get("sf_vec_size", 32)
    if parallel == "column":
        if b.shape[0] % (devices * _ROW_BLOCK):
            raise _warpforge.OpsError(
                f"column-parallel N {b.shape[0]} over {devices} devices: N must be a multiple of {devices} x "
                f"{_ROW_BLOCK} = {devices * _ROW_BLOCK}, so that each device's B rows own whole 128-row scale blocks")
        in_specs = (P(), P(axis_name), P(), P(None, None, axis_name))
        out_specs = (P(None, axis_name), P())
    else:
        step = _SCALE_K_BLOCK * vec
        if k % (devices * step):
            raise _warpforge.OpsError(
                f"row-parallel K {k} over {devices} devices: K must be a multiple of {devices} x {_SCALE_K_BLOCK} x "
                f"sf_vec_size {vec} = {devices * step}, so that each device's K owns whole scale blocks")
        scales = P(None, None, None, None, axis_name)
        in_specs = (P(None, axis_name), P(None, axis_name), scales, scales)
        out_specs = (P(), P())
    # Under jit: one XLA program for the whole split (called eagerly, shard_map
    # would compile and run each of the body's operations on its own).
    body = jax.jit(jax.shard_map(lambda *t: shard_gemm_amax(*t, axis_name, parallel, **options), mesh=mesh,
                                 in_specs=in_specs, out_specs=out_specs, check_vma=False))
    # Each array laid out as its spec says (a no-op where it already is).
    return body(*(jax.device_put(x, NamedSharding(mesh, spec)) for x, spec in zip((a, b, sfa, sfb), in_specs)))


def _check_6d_scales(sfa, sfb):
    for name, s in (("sfa", sfa), ("sfb", sfb)):
        if s.ndim != 6:
            raise _warpforge.OpsError(f"{name} has shape {s.shape}: sharding takes the 6-D scale layout "
                                      "(32, 4, ceil(rows/128), 4, ceil(K/vec/4), L)")


def partitioned_gemm_amax(a, b, sfa, sfb, **options):
    """warpforge.jax.gemm_amax for jax.jit over sharded operands, split by
    their shardings (see the module's text). The options are
    warpforge.jax.gemm_amax's, static."""
    _check_6d_scales(sfa, sfb)
    for name, x in (("a", a), ("b", b), ("sfa", sfa), ("sfb", sfb)):
        spec = getattr(jax.typeof(x).sharding, "spec", ())
        if any(axis is not None for axis in spec):
            raise _warpforge.OpsError(
                f"{name} is sharded {spec} over mesh axes of type Explicit: partitioned_gemm_amax follows the "
                "shardings XLA propagates (axes of type Auto); with Explicit axes use "
                "warpforge.jax_sharding.gemm_amax (shard_map) and name the split")
    return _partitioned(tuple(sorted(options.items())))(a, b, sfa, sfb)


# The dimensions of each operand (A, B, SFA, SFB) that a split shards.
_SPLIT_DIMS = {"rows": (0, None, 2, None), "column": (None, 0, None, 2), "row": (1, 1, 4, 4)}


def _split_of(mesh, arg_shapes, vec):
    """(split, mesh axis) that the operands' shardings ask for and the scale
    blocks allow, or (None, None): the whole op on every device."""
    specs = [tuple(x.sharding.spec) + (None,) * (len(x.shape) - len(x.sharding.spec))
             if isinstance(x.sharding, NamedSharding) else (None,) * len(x.shape) for x in arg_shapes]
    a, b = arg_shapes[0].shape, arg_shapes[1].shape
    k = a[1] * (2 if arg_shapes[0].dtype == jnp.uint8 else 1)
    sharded = {(i, d): axis for i, spec in enumerate(specs[:2]) for d, axis in enumerate(spec) if axis is not None}
    for split, dims in _SPLIT_DIMS.items():
        wanted = {(i, d) for i, d in enumerate(dims[:2]) if d is not None}
        axes = {sharded[key] for key in wanted if key in sharded}
        if set(sharded) != wanted or len(axes) != 1:
            continue
        axis = axes.pop()
        if not isinstance(axis, str):
            continue  # several mesh axes on one dimension
        devices = mesh.shape[axis]
        extent, block = {"rows": (a[0], _ROW_BLOCK), "column": (b[0], _ROW_BLOCK),
                         "row": (k, _SCALE_K_BLOCK * vec)}[split]
        if extent % (devices * block) == 0:
            return split, axis
    return None, None


def _shardings(mesh, split, axis, ranks):
    """The operands' and results' NamedShardings for a split (None: replicated)."""
    def spec(rank, dim):
        return NamedSharding(mesh, P(*(axis if d == dim else None for d in range(rank))))

    dims = _SPLIT_DIMS.get(split, (None,) * 4)
    args = tuple(spec(r, d) for r, d in zip(ranks, dims))
    c_dim = {"rows": 0, "column": 1}.get(split)
    return args, (spec(3, c_dim), spec(3, None))


@functools.lru_cache(maxsize=None)
def _partitioned(options_items):
    options = dict(options_items)
    vec = options.get("sf_vec_size", 32)

    @custom_partitioning
    def op(a, b, sfa, sfb):
        return wjax.gemm_amax(a, b, sfa, sfb, **options)

    def infer(mesh, arg_shapes, result_shape):
        split, axis = _split_of(mesh, arg_shapes, vec)
        return _shardings(mesh, split, axis, [len(x.shape) for x in arg_shapes])[1]

    def partition(mesh, arg_shapes, result_shape):
        split, axis = _split_of(mesh, arg_shapes, vec)
        args, results = _shardings(mesh, split, axis, [len(x.shape) for x in arg_shapes])

        def lower(a, b, sfa, sfb):
            if split is None:
                return wjax.gemm_amax(a, b, sfa, sfb, **options)
            return shard_gemm_amax(a, b, sfa, sfb, axis, split, **dict(options))

        return mesh, lower, results, args

    # Shardy's propagation: M, N, K, L are factors shared where they are one
    # dimension (a packed FP4 C holds N/2 bytes a row: B's N is then the
    # compound (c 2)); the scale blocks are factors of their own, which
    # partition() ties to M, N and K.
    packed = options.get("c_dtype") is not None and dtype_name(options["c_dtype"]) in ("u8", "e2m1")
    n = "(c two)" if packed else "n"
    op.def_partition(partition=partition, infer_sharding_from_operands=infer,
                     sharding_rule=f"m k l, {n} k l, s0 s1 mb s3 kb l, t0 t1 nb t3 kb l -> m {'c' if packed else 'n'} l, "
                                   "x y z",
                     reduction_factors=("k",), **({"two": 2} if packed else {}))
    return op
