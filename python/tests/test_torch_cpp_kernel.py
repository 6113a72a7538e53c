"""torch.ops.warpforge.gemm_amax's C++ kernel (warpforge._warpforge_torch) on
CPU tensors, the simulator: its cache of compiled ops keyed by description
(shapes, strides, dtypes, alignment, options), its refusals as warpforge
exceptions with the nanobind path's messages, and its agreement with the
Python implementation it replaces. test_torch.py runs the operator's shared
tests (reference values, opcheck, torch.compile, CUDA graphs) on whichever
kernel is registered."""

import os

import pytest

import warpforge
from conftest import have, torch_or_skip, uniform

pytestmark = pytest.mark.skipif(not have("torch"), reason="torch is not installed")


def cpp_torch():
    torch = torch_or_skip()
    import warpforge.torch as wtorch

    if not wtorch.CPP_GEMM_AMAX:
        pytest.skip("warpforge._warpforge_torch was not built (no torch when the package was configured)")
    return torch


def problem(rng, torch, fmt="mxfp8", m=32, n=32, k=64, l=1):
    x = torch.from_numpy(uniform(rng, m, k, l))
    y = torch.from_numpy(uniform(rng, n, k, l))
    a, sfa = warpforge.quantize(x, fmt)
    b, sfb = warpforge.quantize(y, fmt)
    return a, b, sfa, sfb


def test_the_build_registered_the_cpp_kernel_where_it_made_it():
    # ctest sets WARPFORGE_TORCH_KERNEL when CMake built _warpforge_torch.
    if os.environ.get("WARPFORGE_TORCH_KERNEL") != "1":
        pytest.skip("not run by ctest from a build that made warpforge._warpforge_torch")
    torch_or_skip()
    import warpforge.torch as wtorch

    assert wtorch.CPP_GEMM_AMAX


def test_it_gives_the_bits_of_the_python_implementation(rng):
    torch = cpp_torch()
    from warpforge.torch import _gemm_amax

    for fmt, vec, c_dtype, c_major in (("mxfp8", 32, torch.bfloat16, "n"), ("nvfp4", 16, torch.float32, "m"),
                                       ("mxfp4", 32, torch.float16, "n")):
        a, b, sfa, sfb = problem(rng, torch, fmt, m=48, n=40, k=128, l=2)
        c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_major=c_major, c_dtype=c_dtype, sf_vec_size=vec)
        c_py, amax_py = _gemm_amax(a, b, sfa, sfb, c_major=c_major, c_dtype=c_dtype, sf_vec_size=vec)
        assert c.dtype == c_dtype and c.shape == c_py.shape and c.stride() == c_py.stride()
        assert torch.equal(c, c_py) and torch.equal(amax, amax_py)
        ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
        torch.testing.assert_close(c.float(), ref, atol=0.02, rtol=0.01)
        assert amax.item() == pytest.approx(ref_amax, rel=1e-6) and ref_amax > 0


def test_each_description_gets_its_own_op(rng):
    # Calls alternating between shapes, and an A that starts 16 bytes into
    # its storage (another base alignment): each against the reference, so
    # that an op cached for another description would show.
    torch = cpp_torch()
    small = problem(rng, torch, m=32, n=32, k=64)
    tall = problem(rng, torch, m=96, n=32, k=64)
    a, b, sfa, sfb = small
    storage = torch.empty(a.numel() + 16, dtype=torch.uint8)
    shifted = storage[16:].view(a.dtype).view(a.shape)
    shifted.copy_(a)
    assert shifted.data_ptr() % 256 == (storage.data_ptr() + 16) % 256
    for inputs in (small, tall, (shifted, b, sfa, sfb), small, tall):
        c, amax = torch.ops.warpforge.gemm_amax(*inputs)
        ref, ref_amax = warpforge.reference.gemm_amax(*inputs)
        assert c.shape == ref.shape
        torch.testing.assert_close(c, ref, atol=0.01, rtol=0.01)
        assert amax.item() == pytest.approx(ref_amax, rel=1e-6)


def test_refusals_are_warpforge_errors_with_the_nanobind_messages(rng):
    torch = cpp_torch()
    a, b, sfa, sfb = problem(rng, torch)
    op = torch.ops.warpforge.gemm_amax
    with pytest.raises(warpforge.OpsError, match="c_major must be 'm' or 'n', got 'k'"):
        op(a, b, sfa, sfb, c_major="k")
    with pytest.raises(warpforge.OpsError, match="precision 'approximate': accepted exact"):
        op(a, b, sfa, sfb, precision="approximate")
    with pytest.raises(warpforge.OpsError, match="kernel 'sm100': accepted auto, skinny, prepass, sm90a, sm80"):
        op(a, b, sfa, sfb, kernel_name="sm100")
    with pytest.raises(warpforge.OpsError, match="A dtype f32"):
        op(a.float(), b, sfa, sfb)
    with pytest.raises(warpforge.OpsError, match="e4m3 A/B with e4m3 C"):
        op(a, b, sfa, sfb, c_dtype=torch.float8_e4m3fn)
    with pytest.raises(warpforge.OpsError, match="mma_tiler_mn takes two values"):
        op(a, b, sfa, sfb, mma_tiler_mn=[128])
    with pytest.raises(warpforge.RuntimeError, match="a: dtype ComplexFloat has no warpforge dtype"):
        op(a.float().to(torch.complex64), b, sfa, sfb)
    # A refusal caches nothing: the same description then runs.
    c, amax = op(a, b, sfa, sfb)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    torch.testing.assert_close(c, ref, atol=0.01, rtol=0.01)
    assert amax.item() == pytest.approx(ref_amax, rel=1e-6)
