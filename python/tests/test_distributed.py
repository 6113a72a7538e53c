"""warpforge.distributed on two ranks without GPUs: two processes on
torch.distributed's gloo backend, CPU tensors, the simulator standing for
both devices (distributed_worker.py is one rank; one run serves every test).

Column-parallel C and amax equal the one-device op's bit for bit. Row-parallel
C is an f32 sum of the same K exact products in another order, so for every
element |C_row - C_one| <= 2·γ(K-1)·Σ_k |a_k·b_k|, γ(n) = n·u/(1 - n·u),
u = 2^-24 (Higham §4.2: any summation order of n terms lies within
γ(n-1)·Σ|terms| of the exact sum; both sums do, hence twice that between
them); its amax is max |C_row| on the f32 sum, and a bf16/f16 C is that sum
rounded to nearest even."""

import os

import numpy as np
import pytest

import warpforge
from conftest import have

pytestmark = pytest.mark.skipif(not have("torch"), reason="torch is not installed")

U = 2.0**-24


def gamma(n):
    return n * U / (1 - n * U)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Both ranks' results, by rank."""
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("this torch has no torch.distributed gloo backend")
    import distributed_worker

    out = tmp_path_factory.mktemp("distributed")
    mp.spawn(distributed_worker.run, args=(2, str(out / "rendezvous"), str(out)), nprocs=2, join=True)
    return [torch.load(out / f"rank{r}.pt") for r in range(2)]


def one_device(torch, x, y, fmt, vec, **options):
    a, sfa = warpforge.quantize(x, fmt)
    b, sfb = warpforge.quantize(y, fmt)
    return torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec, **options), (a, b, sfa, sfb)


def magnitudes(torch, codes):
    """|x| of every element, as codes: e4m3 drops bit 7, packed FP4 bits 3 and 7."""
    raw = codes.view(torch.uint8)
    mask = 0x7F if codes.dtype == torch.float8_e4m3fn else 0x77
    return (raw & mask).view(codes.dtype)


FORMATS = [("mxfp8", 32), ("nvfp4", 16)]


@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_column_parallel_is_the_one_device_op_bit_for_bit(run, fmt, vec):
    import torch
    from distributed_worker import full_problem

    (c, amax), _ = one_device(torch, *full_problem(fmt), fmt, vec, c_dtype=torch.bfloat16)
    shards = [r[f"column_{fmt}"] for r in run]
    assert all(s[0].shape == (64, 32, 1) and s[0].dtype == torch.bfloat16 for s in shards)
    assert torch.equal(torch.cat([s[0] for s in shards], dim=1), c)
    for _, rank_amax in shards:  # every rank holds the whole C's amax
        assert torch.equal(rank_amax, amax) and amax.item() > 0


@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_row_parallel_is_within_the_f32_summation_bound(run, fmt, vec):
    import torch
    from distributed_worker import K, full_problem

    (c_one, _), (a, b, sfa, sfb) = one_device(torch, *full_problem(fmt), fmt, vec)
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


def test_row_parallel_traces_into_torch_compile(run):
    import torch

    for rank in run:
        c, amax = rank["row_compiled"]
        assert torch.equal(c, rank[f"row_mxfp8_{torch.bfloat16}_n"][0])
        assert torch.equal(amax, rank[f"row_mxfp8_{torch.bfloat16}_n"][1])


def test_refusals_name_the_value(run):
    for rank in run:
        assert "equal shape" in rank["refuse_unequal"] and "rank 1: a (64, 256, 1)" in rank["refuse_unequal"]
        assert "b (32, 256, 1)" in rank["refuse_unequal"] and "b (16, 256, 1)" in rank["refuse_unequal"]
        assert "K shard of 48 elements" in rank["refuse_k"] and "2 x 32 = 64" in rank["refuse_k"]
        assert rank["refuse_c_dtype"].startswith("OpsError") and "c_dtype e4m3" in rank["refuse_c_dtype"]
        assert "parallel 'diagonal'" in rank["refuse_parallel"]


def test_convert_amax_on_its_own(rng):
    """The kernel against torch's own rounding, NaN above every number,
    and its refusals."""
    import torch

    import warpforge.torch  # noqa: F401

    s = torch.from_numpy(rng.uniform(-300.0, 300.0, (3, 1000)).astype(np.float32)).t()  # m-major, 3000 elements
    for c_dtype in (torch.float32, torch.bfloat16, torch.float16):
        c, amax = torch.ops.warpforge.convert_amax(s, c_dtype)
        assert c.stride() == s.stride() and torch.equal(c, s.to(c_dtype))
        assert amax.shape == (1, 1, 1) and amax.item() == s.abs().max().item()
    s[500, 1] = float("nan")
    assert torch.ops.warpforge.convert_amax(s, torch.bfloat16)[1].isnan().all()
    with pytest.raises(warpforge.OpsError, match="dense float32"):
        torch.ops.warpforge.convert_amax(s[::2], torch.bfloat16)
    with pytest.raises(warpforge.OpsError, match="c_dtype e5m2"):
        torch.ops.warpforge.convert_amax(s, torch.float8_e5m2)


def test_no_process_group_is_refused():
    import torch.distributed as dist

    import warpforge.distributed as wdist

    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(warpforge.RuntimeError, match="init_process_group"):
        wdist.gemm_amax(*(None,) * 4)


del os
