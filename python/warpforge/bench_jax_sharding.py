"""warpforge.jax_sharding timed on the GPUs of one JAX process (single
controller), beside XLA's own sharded bf16 matmul of the same operands.

    python -m warpforge.bench_jax_sharding [--shapes 8192x16384x8192,16x16384x8192] [--formats mxfp8,nvfp4]
                                           [--gpus 1,2] [--reps 20]

Per GPU count, shape M x N x K and format, Markdown rows:
- column (weak scaling): A (M, K) whole on every GPU, B of GPUs x N rows
  sharded by rows, run by jax.jit(partitioned_gemm_amax) (the
  custom_partitioning rule) and by shard_map (jax_sharding.gemm_amax);
  ms per call and TFLOP/s per GPU, to compare with the one-GPU row;
- row: one GPU's K split over the GPUs (psum of the f32 partials, then the
  conversion and amax), both entry points;
- XLA bf16: jnp.dot of the same shards in bf16 under jax.jit, with the amax
  of the product (XLA inserts the same collectives).
Times: median of --reps calls after warm-up, host clock around a call and
block_until_ready (so they include the dispatch, a few µs)."""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from . import jax_sharding


def median_ms(f, args, reps):
    for _ in range(2):
        jax.block_until_ready(f(*args))
    samples = []
    for _ in range(reps):
        begin = time.perf_counter()
        jax.block_until_ready(f(*args))
        samples.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(samples)


def random_operand(key, rows, k, fmt, sharding, scale_sharding):
    """Random codes (rows, K, 1) (FP4: K/2 bytes) and scales in the 6-D
    layout, made on the GPUs in their shardings: every finite code, scales
    2^-7..2^7 (e8m0) or 0.125..0.47 (e4m3, NVFP4's), so that the products
    stay finite. Speed does not depend on the values; making them on the
    host would take longer than the measurement."""
    vec = 16 if fmt == "nvfp4" else 32
    scale_shape = (32, 4, -(-rows // 128), 4, -(-k // (vec * 4)), 1)

    def make(key):
        kc, ks = jax.random.split(key)
        if fmt == "nvfp4":
            codes = jax.random.bits(kc, (rows, k // 2, 1), jnp.uint8)  # every E2M1 pair is finite
            scales = jax.lax.bitcast_convert_type(
                jax.random.randint(ks, scale_shape, 0x20, 0x30).astype(jnp.uint8), jnp.float8_e4m3fn)
        else:
            bits = jax.random.bits(kc, (rows, k, 1), jnp.uint8)
            bits = jnp.where((bits & 0x7F) == 0x7F, bits - 1, bits)  # 0x7F, 0xFF: e4m3's NaNs
            codes = jax.lax.bitcast_convert_type(bits, jnp.float8_e4m3fn)
            scales = jax.lax.bitcast_convert_type(
                jax.random.randint(ks, scale_shape, 120, 135).astype(jnp.uint8), jnp.float8_e8m0fnu)
        return codes, scales

    return jax.jit(make, out_shardings=(sharding, scale_sharding))(key)


def rows_for(gpus, m, n, k, fmt, reps):
    vec = 16 if fmt == "nvfp4" else 32
    devices = jax.devices("gpu")[:gpus]
    mesh = jax.make_mesh((gpus,), ("tp",), devices=devices, axis_types=(AxisType.Auto,))
    key = jax.random.key(gpus)
    options = {"c_dtype": jnp.bfloat16, "sf_vec_size": vec}
    jit_op = jax.jit(lambda *t: jax_sharding.partitioned_gemm_amax(*t, **options))
    lines = []

    def sharded(spec):
        return NamedSharding(mesh, spec)

    def bf16_dot(x, y):
        c = jnp.dot(x[:, :, 0], y[:, :, 0].T, preferred_element_type=jnp.float32)
        return c.astype(jnp.bfloat16), jnp.max(jnp.abs(c))

    for split in ("column", "row"):
        rows_b = gpus * n if split == "column" else n
        if split == "row" and k % (gpus * 4 * vec):
            continue
        if split == "column":
            specs = (P(), P("tp"), P(), P(None, None, "tp"))
        else:
            specs = (P(None, "tp"), P(None, "tp"), P(None, None, None, None, "tp"), P(None, None, None, None, "tp"))
        keys = jax.random.split(key, 4)
        a, sfa = random_operand(keys[0], m, k, fmt, sharded(specs[0]), sharded(specs[2]))
        b, sfb = random_operand(keys[1], rows_b, k, fmt, sharded(specs[1]), sharded(specs[3]))
        args = (a, b, sfa, sfb)
        jit_ms = median_ms(jit_op, args, reps)
        mapped = jax.jit(lambda *t, split=split: jax_sharding.gemm_amax(*t, mesh, "tp", parallel=split, **options))
        map_ms = median_ms(mapped, args, reps)
        xs = jax.jit(lambda key: jax.random.normal(key, (m, k, 1), jnp.bfloat16),
                     out_shardings=sharded(specs[0]))(keys[2])
        ys = jax.jit(lambda key: jax.random.normal(key, (rows_b, k, 1), jnp.bfloat16),
                     out_shardings=sharded(specs[1]))(keys[3])
        peer_ms = median_ms(jax.jit(bf16_dot), (xs, ys), reps)
        flop = 2.0 * m * rows_b * k / gpus  # per GPU
        what = f"column (N {n} per GPU)" if split == "column" else f"row (K {k // gpus} per GPU)"
        lines.append(f"| {gpus} | {what} | {fmt} | {m} x {rows_b} x {k} | {jit_ms:.3f} | "
                     f"{flop / jit_ms / 1e9:.1f} | {map_ms:.3f} | {peer_ms:.3f} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench_jax_sharding",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="8192x16384x8192,16x16384x8192", help="M x N x K, comma-separated")
    parser.add_argument("--formats", default="mxfp8,nvfp4")
    parser.add_argument("--gpus", default=None, help="GPU counts, comma-separated (default 1 and every power of 2)")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)
    try:
        available = len(jax.devices("gpu"))
    except RuntimeError:
        available = 0
    if available == 0:
        raise SystemExit("bench_jax_sharding: JAX sees no GPU (it times GPUs only; "
                         "python/tests/test_distributed.py checks the splits on host devices)")
    counts = [int(g) for g in args.gpus.split(",")] if args.gpus else [g for g in (1, 2, 4, 8) if g <= available]
    print(f"{jax.devices('gpu')[0].device_kind}, JAX {jax.__version__}")
    print("| GPUs | split | format | M x N x K | jit ms | TFLOP/s per GPU | shard_map ms | XLA bf16 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for gpus in counts:
        if gpus > available:
            raise SystemExit(f"bench_jax_sharding: --gpus {gpus}, but JAX sees {available} GPU(s)")
        for shape in args.shapes.split(","):
            m, n, k = (int(v) for v in shape.lower().split("x"))
            for fmt in args.formats.split(","):
                print("\n".join(rows_for(gpus, m, n, k, fmt, args.reps)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
