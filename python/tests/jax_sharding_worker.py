"""test_distributed.py's JAX run on two host devices: started in its own
process with XLA_FLAGS=--xla_force_host_platform_device_count=2 (read when
JAX starts), it runs warpforge.jax_sharding.gemm_amax column- and
row-parallel beside the one-device op and writes every result to the .npz
file named by its argument (refusals as text). Not a test module."""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import warpforge
from warpforge import jax as wjax
from warpforge import jax_sharding

M, N, K = 256, 256, 256

# Operand shardings (A, B, SFA, SFB) for plain jax.jit: M split, N split, K
# split, and one the op cannot split (M in halves of a 128-row scale block:
# M = 256 over 4 would; here the L dimension of size 1 cannot be, so M of
# A alone with B's K: two dimensions at once), which gathers.
SPLITS = {
    "rows": (P("tp"), P(), P(None, None, "tp"), P()),
    "column": (P(), P("tp"), P(), P(None, None, "tp")),
    "row": (P(None, "tp"), P(None, "tp"), P(None, None, None, None, "tp"), P(None, None, None, None, "tp")),
    "mixed": (P("tp"), P(None, "tp"), P(), P()),
}


def main(out):
    assert len(jax.devices("cpu")) == 2, jax.devices()
    mesh = jax.make_mesh((2,), ("tp",), devices=jax.devices("cpu"))
    auto = jax.make_mesh((2,), ("tp",), devices=jax.devices("cpu"), axis_types=(jax.sharding.AxisType.Auto,))
    results = {}
    for fmt, vec in (("mxfp8", 32), ("nvfp4", 16)):
        rng = np.random.default_rng(7 if fmt == "mxfp8" else 8)
        a, sfa = warpforge.quantize(rng.uniform(-2.0, 2.0, (M, K, 1)).astype(np.float32), fmt)
        b, sfb = warpforge.quantize(rng.uniform(-2.0, 2.0, (N, K, 1)).astype(np.float32), fmt)
        ja, jb, jsfa, jsfb = (jnp.asarray(t) for t in (a, b, sfa, sfb))
        for c_dtype in (jnp.float32, jnp.bfloat16):
            name = f"{fmt}_{jnp.dtype(c_dtype).name}"
            one = wjax.gemm_amax(ja, jb, jsfa, jsfb, c_dtype=c_dtype, sf_vec_size=vec)
            column = jax_sharding.gemm_amax(ja, jb, jsfa, jsfb, mesh, "tp", parallel="column", c_dtype=c_dtype,
                                            sf_vec_size=vec)
            row = jax_sharding.gemm_amax(ja, jb, jsfa, jsfb, mesh, "tp", parallel="row", c_dtype=c_dtype,
                                         sf_vec_size=vec)
            results[f"column_shards_{name}"] = np.array(len(column[0].sharding.device_set))
            # The same splits under plain jax.jit, chosen by the operands' shardings.
            partitioned = jax.jit(lambda *t: jax_sharding.partitioned_gemm_amax(*t, c_dtype=c_dtype, sf_vec_size=vec))
            for split, specs in SPLITS.items():
                args = [jax.device_put(x, NamedSharding(auto, spec)) for x, spec in zip((ja, jb, jsfa, jsfb), specs)]
                c, amax = partitioned(*args)
                hlo = partitioned.lower(*args).compile().as_text()
                results[f"jit_{split}_c_{name}"] = np.asarray(c.astype(jnp.float32))
                results[f"jit_{split}_amax_{name}"] = np.asarray(amax)
                results[f"jit_{split}_spec_{name}"] = np.array(str(tuple(c.sharding.spec)))
                results[f"jit_{split}_gathers_{name}"] = np.array("all-gather" in hlo)
            for what, (c, amax) in (("one", one), ("column", column), ("row", row)):
                results[f"{what}_c_{name}"] = np.asarray(c.astype(jnp.float32))
                results[f"{what}_amax_{name}"] = np.asarray(amax)
        # Σ|a·b| per element (codes with their sign bits cleared), for the row bound.
        mask = 0x7F if fmt == "mxfp8" else 0x77
        magnitude = [np.asarray(x).view(np.uint8) & mask for x in (a, b)]
        if fmt == "mxfp8":
            magnitude = [x.view(a.dtype) for x in magnitude]
        results[f"terms_{fmt}"] = warpforge.reference.gemm_amax(magnitude[0], magnitude[1], sfa, sfb,
                                                                sf_vec_size=vec)[0]
    refusals = []
    for call in (lambda: jax_sharding.gemm_amax(ja, jb[:128], jsfa, jsfb, mesh, "tp", parallel="column"),
                 lambda: jax_sharding.gemm_amax(ja[:, :96], jb[:, :96], jsfa, jsfb, mesh, "tp", parallel="row"),
                 lambda: jax_sharding.gemm_amax(ja, jb, jsfa, jsfb, mesh, "dp"),
                 lambda: jax_sharding.gemm_amax(ja, jb, jsfa, jsfb, mesh, "tp", parallel="diagonal"),
                 lambda: jax_sharding.partitioned_gemm_amax(jax.device_put(ja, NamedSharding(mesh, P("tp"))), jb,
                                                            jsfa, jsfb)):
        try:
            call()
            refusals.append("no refusal")
        except warpforge.Error as e:
            refusals.append(str(e))
    results["refusals"] = np.array(refusals)
    np.savez(out, **results)


if __name__ == "__main__":
    main(sys.argv[1])
