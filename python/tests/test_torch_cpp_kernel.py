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
from conftest import core_only_pythonpath, cpp_torch_or_skip, have, run_python, torch_or_skip, uniform

pytestmark = pytest.mark.skipif(not have("torch"), reason="torch is not installed")


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
    torch = cpp_torch_or_skip()
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
    torch = cpp_torch_or_skip()
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
    torch = cpp_torch_or_skip()
    a, b, sfa, sfb = problem(rng, torch)
    op = torch.ops.warpforge.gemm_amax
    with pytest.raises(warpforge.OpsError, match="c_major must be 'm' or 'n', got 'k'"):
        op(a, b, sfa, sfb, c_major="k")
    with pytest.raises(warpforge.OpsError, match="precision 'approximate': accepted exact"):
        op(a, b, sfa, sfb, precision="approximate")
    with pytest.raises(warpforge.OpsError, match="kernel 'sm100': accepted auto, stream, skinny, prepass, swapped, sm90a, sm80"):
        op(a, b, sfa, sfb, kernel_name="sm100")
    with pytest.raises(warpforge.OpsError, match="A dtype f32"):
        op(a.float(), b, sfa, sfb)
    with pytest.raises(warpforge.OpsError, match="e4m3 A/B with e4m3 C"):
        op(a, b, sfa, sfb, c_dtype=torch.float8_e4m3fn)
    with pytest.raises(warpforge.OpsError, match="mma_tiler_mn takes two values"):
        op(a, b, sfa, sfb, mma_tiler_mn=[128])
    with pytest.raises(warpforge.OpsError, match="sf_vec_size 4294967328 does not fit an int"):
        op(a, b, sfa, sfb, sf_vec_size=2**32 + 32)
    with pytest.raises(warpforge.RuntimeError, match="a: dtype ComplexFloat has no warpforge dtype"):
        op(a.float().to(torch.complex64), b, sfa, sfb)
    # A refusal caches nothing: the same description then runs.
    c, amax = op(a, b, sfa, sfb)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    torch.testing.assert_close(c, ref, atol=0.01, rtol=0.01)
    assert amax.item() == pytest.approx(ref_amax, rel=1e-6)


def test_the_benchmarks_python_operator_runs_the_python_implementation(rng):
    # python -m warpforge.bench times it beside the C++ kernel: the same
    # schema, through the dispatcher, the same bits.
    torch = cpp_torch_or_skip()
    from warpforge import bench

    python_op = bench.python_operator(torch, warpforge)
    assert bench.python_operator(torch, warpforge) is python_op  # registered once
    a, b, sfa, sfb = problem(rng, torch)
    c, amax = python_op(a, b, sfa, sfb, c_dtype=torch.bfloat16)
    c_cpp, amax_cpp = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
    assert torch.equal(c, c_cpp) and torch.equal(amax, amax_cpp)
    ref, _ = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    torch.testing.assert_close(c.float(), ref, atol=0.02, rtol=0.01)


# A fresh interpreter (torch's operator registry is global) that imports
# warpforge.torch after `prologue`, checks that the Python implementation is
# registered and runs it against the reference, then runs `epilogue`.
_FALLBACK_SCRIPT = """
import numpy as np, torch, warnings
{prologue}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import warpforge  # which imports warpforge.torch, torch being imported
    import warpforge.torch as wt
assert not wt.CPP_GEMM_AMAX
print("warned:", *(str(w.message) for w in caught))
rng = np.random.default_rng(5)
x = torch.from_numpy(rng.uniform(-2, 2, (32, 64, 1)).astype(np.float32))
y = torch.from_numpy(rng.uniform(-2, 2, (32, 64, 1)).astype(np.float32))
(a, sfa), (b, sfb) = warpforge.quantize(x, "mxfp8"), warpforge.quantize(y, "mxfp8")
c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb)
ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb)
torch.testing.assert_close(c, ref, atol=0.01, rtol=0.01)
assert abs(amax.item() - ref_amax) <= 1e-6 * ref_amax
{epilogue}
print("python implementation ran")
"""

# With no C++ kernel at all (a build that did not see torch), gemm's and
# attention's Python implementations too, in the same interpreter.
_OTHER_OPS_SCRIPT = """
assert not wt.CPP_KERNELS
a = torch.from_numpy(rng.uniform(-2, 2, (2, 24, 40)).astype(np.float32)).bfloat16()
b = torch.from_numpy(rng.uniform(-2, 2, (40, 16)).astype(np.float32)).bfloat16()
c = torch.from_numpy(rng.uniform(-2, 2, (2, 24, 16)).astype(np.float32))
expected = 2 * torch.matmul(a.double(), b.double()) + 0.5 * c.double()
for d in (torch.ops.warpforge.gemm(a, b, c, 2.0, 0.5, torch.float32),
          warpforge.gemm(a, b, c, alpha=2.0, beta=0.5, out_dtype=torch.float32)):
    torch.testing.assert_close(d.double(), expected, atol=1e-3, rtol=1e-3)
# attention's Python kernels and autograd (warpforge.torch_attention).
from warpforge import torch_attention as ta
assert not ta.CPP_FORWARD and not ta.CPP_BACKWARD
q, k, v = (torch.randn(1, 2, 24, 64).bfloat16().requires_grad_() for _ in range(3))
out = warpforge.attention(q, k, v, is_causal=True)
out.float().sum().backward()
want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
assert (out.double() - want).abs().max() < 0.03 and q.grad.abs().sum() > 0
"""


def run_fallback(pythonpath, cwd, prologue="", epilogue=""):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    # cwd: elsewhere than the build folder, which `python -c` would put on the path.
    script = _FALLBACK_SCRIPT.format(prologue=prologue, epilogue=epilogue)
    run = run_python(["-c", script], env=env, cwd=cwd)
    assert run.returncode == 0, run.stderr
    assert "python implementation ran" in run.stdout
    return run.stdout


def test_without_the_cpp_kernel_the_python_implementation_is_registered(tmp_path):
    # A package whose build did not see torch: _warpforge alone beside the
    # Python sources.
    torch_or_skip()
    out = run_fallback(core_only_pythonpath(tmp_path), tmp_path, epilogue=_OTHER_OPS_SCRIPT)
    assert out.startswith("warned:\n")  # nothing to warn of: no kernel was built


def test_a_kernel_built_against_another_torch_is_refused_saying_so(tmp_path):
    cpp_torch_or_skip()
    import warpforge.torch as wtorch

    pythonpath = os.pathsep.join(os.path.dirname(p) for p in warpforge.__path__)
    del wtorch
    out = run_fallback(pythonpath, tmp_path, prologue='torch.__version__ = "0.0.1"')
    assert "was built against torch" in out and "this is torch 0.0.1: rebuild the package" in out
