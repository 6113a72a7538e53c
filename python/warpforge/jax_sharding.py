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
one's own."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from . import _warpforge
from . import jax as wjax

# The 128x4 scale layout (32, 4, ceil(rows/128), 4, ceil(K/vec/4), L): rows
# in blocks of 128, K in blocks of 4 scales.
_ROW_BLOCK = 128
_SCALE_K_BLOCK = 4


def shard_gemm_amax(a, b, sfa, sfb, axis_name, parallel="column", **options):
    """One device's part, inside shard_map over `axis_name`: its shard of
    the problem in, its C (column) or the whole C (row) and the whole C's amax out."""
    if parallel == "column":
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
    if axis_name not in mesh.shape:
        raise _warpforge.OpsError(f"axis_name '{axis_name}' is not an axis of the mesh (axes {tuple(mesh.shape)})")
    for name, s in (("sfa", sfa), ("sfb", sfb)):
        if s.ndim != 6:
            raise _warpforge.OpsError(f"{name} has shape {s.shape}: sharding takes the 6-D scale layout "
                                      "(32, 4, ceil(rows/128), 4, ceil(K/vec/4), L)")
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
    body = jax.shard_map(lambda *t: shard_gemm_amax(*t, axis_name, parallel, **options), mesh=mesh,
                         in_specs=in_specs, out_specs=out_specs, check_vma=False)
    # Each array laid out as its spec says (a no-op where it already is).
    return body(*(jax.device_put(x, NamedSharding(mesh, spec)) for x, spec in zip((a, b, sfa, sfb), in_specs)))
