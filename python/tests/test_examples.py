"""The Python examples (examples/python) run on the simulator with NumPy,
and on a GPU with torch tensors where there is one: the m16n8k8 demo, the
single-warp bf16 GEMM at REFERENCE.md's five shapes, the RMSNorm and
softmax row kernels, and the warp-specialized GEMM written on the template."""

import importlib.util
import pathlib

import numpy as np
import pytest

import warpforge
from conftest import torch_cuda_or_skip

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mma_demo_on_the_simulator():
    d, expected = example("mma_m16n8k8").run(device=warpforge.Device.sim())
    np.testing.assert_array_equal(d, expected)


@pytest.mark.parametrize("shape", example("bf16_gemm").SHAPES)
def test_bf16_gemm_on_the_simulator(shape):
    ex = example("bf16_gemm")
    module = warpforge.Module(ex.build_kernel(), warpforge.Device.sim())
    d, reference = ex.run(*shape, module, np.random.default_rng(sum(shape)))
    np.testing.assert_allclose(d, reference, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("config", list(example("warp_specialized_gemm").CONFIGS))
def test_warp_specialized_gemm_on_the_simulator(config):
    """The GEMM written in Python on the template: edge tiles along M and N
    (200 = 128 + 72 rows, 312 = 256 + 56 columns), a partial last k-block
    (K = 136), each configuration, rows that cancel; D poisoned with NaN,
    against an fp64 reference, then bit for bit against ops::Gemm's C++
    kernel of the same design and configuration on the same inputs."""
    import ml_dtypes

    ex = example("warp_specialized_gemm")
    rng = np.random.default_rng(len(config) + 40)
    m, n, kk = 200, 312, 136
    a = rng.uniform(-2, 2, (1, m, kk)).astype(ml_dtypes.bfloat16)
    bt = rng.uniform(-2, 2, (1, n, kk)).astype(ml_dtypes.bfloat16)
    half = kk // 2  # rows 1, 8, ... of D sum terms that cancel to 0 exactly
    bt[0, :, half:] = bt[0, :, :half]
    a[0, 1::7, half:] = -a[0, 1::7, :half]
    d = np.full((1, m, n), np.nan, dtype=ml_dtypes.bfloat16)
    design = ex.Gemm(**ex.CONFIGS[config])
    ex.launcher(design, warpforge.Module(design.build(), warpforge.Device.sim()), a, bt, d, alpha=0.5)()
    reference = 0.5 * np.einsum("lmk,lnk->lmn", a.astype(np.float64), bt.astype(np.float64))
    np.testing.assert_allclose(d.astype(np.float64), reference, atol=2e-2, rtol=1e-2)

    d_cpp = np.full((m, n), np.nan, dtype=ml_dtypes.bfloat16)
    b = np.asfortranarray(bt[0].T)  # B (K, N) column-major: Bᵀ's rows
    op = warpforge.Gemm(a[0], b, d_cpp, alpha=0.5, kernel="sm90a", config=config)
    op.execute(a[0], b, d_cpp)
    assert (op.kernel_name, op.config) == ("sm90a", config)
    np.testing.assert_array_equal(d[0].view(np.uint16), d_cpp.view(np.uint16))


@pytest.mark.gpu
def test_the_examples_on_the_gpu_with_torch():
    torch = torch_cuda_or_skip()
    d, expected = example("mma_m16n8k8").run(lambda x: torch.from_numpy(x).cuda(), warpforge.Device.cuda(0))
    np.testing.assert_array_equal(d, expected)
    import sys

    saved = sys.argv
    sys.argv = ["bf16_gemm.py", "--torch"]
    try:
        assert example("bf16_gemm").main() == 0
    finally:
        sys.argv = saved


@pytest.mark.gpu
def test_warp_specialized_gemm_on_the_gpu_with_torch(monkeypatch):
    torch = torch_cuda_or_skip()
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("the warp-specialized GEMM needs an sm_90a GPU (H100, H200)")
    monkeypatch.setattr("sys.argv", ["warp_specialized_gemm.py", "--torch"])
    assert example("warp_specialized_gemm").main() == 0


@pytest.mark.parametrize("name", ["rms_norm", "softmax"])
def test_row_kernels_in_the_python_dsl_on_the_simulator(monkeypatch, name):
    monkeypatch.syspath_prepend(str(EXAMPLES))  # their shared row_reduction.py
    ex = example(name)
    rng = np.random.default_rng(7)
    for rows, n in ex.SHAPES:
        y, reference = ex.run(rows, n, warpforge.Device.sim(), rng)
        assert ex.close(y, reference), f"{name} {rows}x{n}: max |y - ref| = {np.abs(y - reference).max()}"


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["rms_norm", "softmax"])
def test_row_kernels_in_the_python_dsl_on_the_gpu(monkeypatch, name):
    # Checks on the GPU, then prints its timing against the C++ op (the
    # speed itself is recorded by scripts/gpu-membound.sh, not asserted here).
    torch_cuda_or_skip()
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setattr("sys.argv", [f"{name}.py", "--torch"])
    assert example(name).main() == 0
