"""warpforge.distributed on two ranks without GPUs: two processes on
torch.distributed's gloo backend, CPU tensors, the simulator standing for
both devices (distributed_worker.py is one rank; one run serves every torch
test); and warpforge.jax_sharding on two host devices, in a process of its
own (jax_sharding_worker.py: XLA_FLAGS must be set before JAX starts).

Column-parallel C and amax equal the one-device op's bit for bit. Row-parallel
C is an f32 sum of the same K exact products in another order, so for every
element |C_row - C_one| <= 2·γ(K-1)·Σ_k |a_k·b_k|, γ(n) = n·u/(1 - n·u),
u = 2^-24 (Higham §4.2: any summation order of n terms lies within
γ(n-1)·Σ|terms| of the exact sum; both sums do, hence twice that between
them); its amax is max |C_row| on the f32 sum, and a bf16/f16 C is that sum
rounded to nearest even."""

import os
import subprocess
import sys

import numpy as np
import pytest

import warpforge
from conftest import have

needs_torch = pytest.mark.skipif(not have("torch"), reason="torch is not installed")

U = 2.0**-24


def gamma(n):
    return n * U / (1 - n * U)


class Ranks(list):
    """Both ranks' results, by rank (on the host), and the device they ran on."""

    def __init__(self, results, device):
        super().__init__(results)
        self.device = device


@pytest.fixture(scope="module", params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def run(request, tmp_path_factory):
    """Two ranks: gloo with the simulator standing for both devices, or NCCL
    with a GPU each (where the machine has two)."""
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    device = request.param
    if device == "cpu" and (not dist.is_available() or not dist.is_gloo_available()):
        pytest.skip("this torch has no torch.distributed gloo backend")
    if device == "cuda":
        if torch.cuda.device_count() < 2:
            pytest.skip(f"needs two CUDA GPUs; torch sees {torch.cuda.device_count()}")
        if not dist.is_nccl_available():
            pytest.skip("this torch has no NCCL")
    import distributed_worker

    out = tmp_path_factory.mktemp(f"distributed_{device}")
    # The CPU ranks are forks of this process, torch and warpforge already
    # imported (a spawned rank's fresh interpreter spends ~6 CPU-s importing
    # them); CUDA cannot be forked once initialised (a fork's torch.compile
    # asks CUDA for its RNG state), so GPU ranks, and CPU ranks after an
    # earlier test of the session used CUDA, are spawned.
    fork = device == "cpu" and not torch.cuda.is_initialized()
    mp.start_processes(distributed_worker.run, args=(2, str(out / "rendezvous"), str(out), device), nprocs=2,
                       join=True, start_method="fork" if fork else "spawn")
    return Ranks([torch.load(out / f"rank{r}.pt") for r in range(2)], device)


def one_device(torch, x, y, fmt, vec, device="cpu", **options):
    """The one-device op on `device`; its results and inputs on the host."""
    a, sfa = warpforge.quantize(x.to(device), fmt)
    b, sfb = warpforge.quantize(y.to(device), fmt)
    c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec, **options)
    return (c.cpu(), amax.cpu()), tuple(t.cpu() for t in (a, b, sfa, sfb))


def magnitudes(torch, codes):
    """|x| of every element, as codes: e4m3 drops bit 7, packed FP4 bits 3 and 7."""
    raw = codes.view(torch.uint8)
    mask = 0x7F if codes.dtype == torch.float8_e4m3fn else 0x77
    return (raw & mask).view(codes.dtype)


FORMATS = [("mxfp8", 32), ("nvfp4", 16)]


@needs_torch
@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_column_parallel_is_the_one_device_op_bit_for_bit(run, fmt, vec):
    import torch
    from distributed_worker import full_problem

    (c, amax), _ = one_device(torch, *full_problem(fmt), fmt, vec, run.device, c_dtype=torch.bfloat16)
    shards = [r[f"column_{fmt}"] for r in run]
    assert all(s[0].shape == (64, 32, 1) and s[0].dtype == torch.bfloat16 for s in shards)
    assert torch.equal(torch.cat([s[0] for s in shards], dim=1), c)
    for _, rank_amax in shards:  # every rank holds the whole C's amax
        assert torch.equal(rank_amax, amax) and amax.item() > 0


@needs_torch
@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_row_parallel_is_within_the_f32_summation_bound(run, fmt, vec):
    import torch
    from distributed_worker import K, full_problem

    (c_one, _), (a, b, sfa, sfb) = one_device(torch, *full_problem(fmt), fmt, vec, run.device)
    terms, _ = warpforge.reference.gemm_amax(magnitudes(torch, a), magnitudes(torch, b), sfa, sfb, sf_vec_size=vec)
    # The reference rounds Σ|a·b| once to f32: (1 + u) covers it.
    bound = 2 * gamma(K - 1) * terms * (1 + U)
    key = f"row_{fmt}_{torch.float32}_n"
    c_row, amax = run[0][key]
    assert torch.equal(c_row, run[1][key][0]) and torch.equal(amax, run[1][key][1])
    assert c_row.shape == c_one.shape and c_row.stride() == c_one.stride()
    assert ((c_row - c_one).abs() <= bound).all()
    assert not torch.equal(bound, torch.zeros_like(bound)) and c_row.abs().max() > 1
    assert amax.item() == c_row.abs().max().item()
    unchecked = run[0][f"row_{fmt}_unchecked"]  # check_ranks=False: the same call, one collective fewer
    assert torch.equal(unchecked[0], c_row) and torch.equal(unchecked[1], amax)


@needs_torch
@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_row_parallel_conversion_rounds_the_f32_sum(run, fmt, vec):
    import torch

    summed, amax = run[0][f"row_{fmt}_{torch.float32}_n"]
    for c_dtype, c_major in ((torch.bfloat16, "n"), (torch.float16, "m")):
        for rank in run:
            c, c_amax = rank[f"row_{fmt}_{c_dtype}_{c_major}"]
            assert c.dtype == c_dtype and torch.equal(c, summed.to(c_dtype))
            assert c.stride() == ((64, 1, 64 * 64) if c_major == "n" else (1, 64, 64 * 64))
            assert torch.equal(c_amax, amax)


@needs_torch
def test_row_parallel_traces_into_torch_compile(run):
    import torch

    for rank in run:
        c, amax = rank["row_compiled"]
        assert torch.equal(c, rank[f"row_mxfp8_{torch.bfloat16}_n"][0])
        assert torch.equal(amax, rank[f"row_mxfp8_{torch.bfloat16}_n"][1])


@needs_torch
def test_refusals_name_the_value(run):
    for rank in run:
        assert "equal shape" in rank["refuse_unequal"] and "rank 1: a (64, 256, 1)" in rank["refuse_unequal"]
        assert "b (32, 256, 1)" in rank["refuse_unequal"] and "b (16, 256, 1)" in rank["refuse_unequal"]
        assert rank["refuse_a_dtype"].startswith("OpsError") and "A dtype f32" in rank["refuse_a_dtype"]
        assert "K shard of 48 elements" in rank["refuse_k"] and "2 x 32 = 64" in rank["refuse_k"]
        assert rank["refuse_c_dtype"].startswith("OpsError") and "c_dtype e4m3" in rank["refuse_c_dtype"]
        assert "parallel 'diagonal'" in rank["refuse_parallel"]


@needs_torch
def test_convert_amax_on_its_own(rng):
    """The kernel against torch's own rounding, NaN above every number,
    torch.library.opcheck (the fake against the real outputs), and its refusals."""
    import torch

    import warpforge.torch  # noqa: F401

    s = torch.from_numpy(rng.uniform(-300.0, 300.0, (3, 1000)).astype(np.float32)).t()  # m-major, 3000 elements
    for c_dtype in (torch.float32, torch.bfloat16, torch.float16):
        c, amax = torch.ops.warpforge.convert_amax(s, c_dtype)
        assert c.stride() == s.stride() and torch.equal(c, s.to(c_dtype))
        assert amax.shape == (1, 1, 1) and amax.item() == s.abs().max().item()
    torch.library.opcheck(torch.ops.warpforge.convert_amax.default, (s, torch.bfloat16))
    s[500, 1] = float("nan")
    assert torch.ops.warpforge.convert_amax(s, torch.bfloat16)[1].isnan().all()
    with pytest.raises(warpforge.OpsError, match="dense float32"):
        torch.ops.warpforge.convert_amax(s[::2], torch.bfloat16)
    with pytest.raises(warpforge.OpsError, match="c_dtype e5m2"):
        torch.ops.warpforge.convert_amax(s, torch.float8_e5m2)


@needs_torch
def test_no_process_group_is_refused():
    import torch.distributed as dist

    import warpforge.distributed as wdist

    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(warpforge.RuntimeError, match="init_process_group"):
        wdist.gemm_amax(*(None,) * 4)


@pytest.fixture(scope="module")
def jax_run(tmp_path_factory):
    """The JAX worker's results: two host devices, the FFI op on the simulator."""
    if not have("jax"):
        pytest.skip("JAX is not installed")
    if not hasattr(warpforge._warpforge, "jax_ffi_targets"):
        pytest.skip("this build of warpforge has no JAX FFI handlers (JAX was absent when it was built)")
    out = tmp_path_factory.mktemp("jax_sharding") / "results.npz"
    here = os.path.dirname(os.path.abspath(__file__))
    # XLA ends the process when one device reaches a collective more than
    # 40 s (its default) before the other: on a loaded two-core CI machine the
    # other device's simulator shard (the first call JIT-compiles the kernel)
    # measured longer, so the wait is raised to the subprocess's own timeout.
    flags = ("--xla_force_host_platform_device_count=2 --xla_cpu_collective_call_terminate_timeout_seconds=600 "
             "--xla_cpu_collective_call_warn_stuck_timeout_seconds=300")
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, os.path.join(here, "jax_sharding_worker.py"), str(out)], env=env, check=True,
                   timeout=600)
    return np.load(out)


@pytest.mark.parametrize("fmt", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("c_dtype", ["float32", "bfloat16"])
def test_jax_column_parallel_is_the_one_device_op_bit_for_bit(jax_run, fmt, c_dtype):
    name = f"{fmt}_{c_dtype}"
    assert jax_run[f"column_shards_{name}"] == 2  # C really is split over both devices
    np.testing.assert_array_equal(jax_run[f"column_c_{name}"], jax_run[f"one_c_{name}"])
    np.testing.assert_array_equal(jax_run[f"column_amax_{name}"], jax_run[f"one_amax_{name}"])
    assert jax_run[f"one_amax_{name}"].item() > 1


@pytest.mark.parametrize("fmt", ["mxfp8", "nvfp4"])
def test_jax_row_parallel_is_within_the_f32_summation_bound(jax_run, fmt):
    from jax_sharding_worker import K

    bound = 2 * gamma(K - 1) * jax_run[f"terms_{fmt}"] * (1 + U)
    c_row, c_one = jax_run[f"row_c_{fmt}_float32"], jax_run[f"one_c_{fmt}_float32"]
    assert (np.abs(c_row - c_one) <= bound).all()
    assert jax_run[f"row_amax_{fmt}_float32"].item() == np.abs(c_row).max()
    # bf16 C: the f32 sum rounded (to nearest even); the amax of that sum.
    import ml_dtypes

    np.testing.assert_array_equal(jax_run[f"row_c_{fmt}_bfloat16"],
                                  c_row.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert jax_run[f"row_amax_{fmt}_bfloat16"].item() == np.abs(c_row).max()


@pytest.mark.parametrize("fmt", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("c_dtype", ["float32", "bfloat16"])
def test_jax_jit_splits_by_the_operands_shardings(jax_run, fmt, c_dtype):
    """partitioned_gemm_amax under plain jax.jit: the N split keeps C
    sharded by columns and equals the one-device op bit for bit (its shard
    runs the whole problem's kernel); the M split keeps C sharded by rows,
    within the f32 summation bound (a 128-row shard runs the skinny kernel,
    whose K split sums in another order); the K split sums the partials;
    none of them gathers. A sharding it cannot split (A's M with B's K)
    gathers and computes the whole problem on every device."""
    from jax_sharding_worker import K

    name = f"{fmt}_{c_dtype}"
    one_c, one_amax = jax_run[f"one_c_{name}"], jax_run[f"one_amax_{name}"]
    bound = 2 * gamma(K - 1) * jax_run[f"terms_{fmt}"] * (1 + U)
    for split, spec in (("rows", "('tp',)"), ("column", "(None, 'tp')"), ("row", "()")):
        assert jax_run[f"jit_{split}_spec_{name}"].item() == spec, split
        assert not jax_run[f"jit_{split}_gathers_{name}"].item(), split
    np.testing.assert_array_equal(jax_run[f"jit_column_c_{name}"], one_c)
    np.testing.assert_array_equal(jax_run[f"jit_column_amax_{name}"], one_amax)
    assert jax_run[f"jit_mixed_gathers_{name}"].item()
    np.testing.assert_array_equal(jax_run[f"jit_mixed_c_{name}"], one_c)
    np.testing.assert_array_equal(jax_run[f"jit_mixed_amax_{name}"], one_amax)
    for split in ("rows", "row"):
        c = jax_run[f"jit_{split}_c_{name}"]
        if c_dtype == "float32":
            assert (np.abs(c - one_c) <= bound).all(), split
            assert jax_run[f"jit_{split}_amax_{name}"].item() == np.abs(c).max(), split
        else:  # the f32 sum rounded once, as the shard_map row split does
            assert (np.abs(c - one_c) <= bound + np.abs(one_c) * 2.0**-8).all(), split
    np.testing.assert_array_equal(jax_run[f"jit_row_c_{name}"], jax_run[f"row_c_{name}"])


def test_jax_refusals_name_the_value(jax_run):
    column_n, row_k, axis, parallel, explicit = jax_run["refusals"]
    assert "a is sharded" in explicit and "Explicit" in explicit and "jax_sharding.gemm_amax" in explicit
    assert "column-parallel N 128 over 2 devices" in column_n and "2 x 128 = 256" in column_n
    assert "row-parallel K 192 over 2 devices" in row_k and "= 256" in row_k
    assert "axis_name 'dp'" in axis and "('tp',)" in axis
    assert "parallel 'diagonal'" in parallel


@needs_torch
@pytest.mark.gpu
def test_on_one_gpu_under_torch_compile_and_cuda_graphs(tmp_path):
    """One rank on NCCL (the GPU path of both splits, without a second GPU):
    the results of the simulator's run, compiled with Inductor and replayed
    from a CUDA graph."""
    from conftest import torch_cuda_or_skip

    torch = torch_cuda_or_skip()
    import torch.distributed as dist

    import warpforge.distributed as wdist
    from distributed_worker import full_problem

    if not dist.is_nccl_available():
        pytest.skip("this torch has no NCCL")
    dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        x, y = (t.cuda() for t in full_problem("mxfp8"))
        (a, sfa), (b, sfb) = warpforge.quantize(x, "mxfp8"), warpforge.quantize(y, "mxfp8")
        for parallel in ("column", "row"):
            if parallel == "column":
                c_one, amax_one = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
            else:  # one rank: the sum is its one f32 partial, rounded to nearest even
                summed, amax_one = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb)
                c_one = summed.to(torch.bfloat16)
            c, amax = wdist.gemm_amax(a, b, sfa, sfb, parallel=parallel, c_dtype=torch.bfloat16)
            assert torch.equal(c, c_one) and torch.equal(amax, amax_one) and amax.item() > 1
            compiled = torch.compile(lambda *t: wdist.gemm_amax(*t, parallel=parallel, c_dtype=torch.bfloat16),
                                     fullgraph=True)
            c2, amax2 = compiled(a, b, sfa, sfb)
            assert torch.equal(c2, c) and torch.equal(amax2, amax)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                wdist.gemm_amax(a, b, sfa, sfb, parallel=parallel, c_dtype=torch.bfloat16)  # compile outside
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                c3, amax3 = wdist.gemm_amax(a, b, sfa, sfb, parallel=parallel, c_dtype=torch.bfloat16)
            c3.fill_(float("nan"))
            amax3.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(c3, c) and torch.equal(amax3, amax)
    finally:
        dist.destroy_process_group()
