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


@pytest.mark.parametrize("cluster_m", [1, 2])
def test_warp_specialized_gemm_on_the_simulator(cluster_m):
    """Two tiles along M and two along N, two k-blocks, a cluster pair or
    not; D poisoned, fresh inputs, against an fp32 reference."""
    ex = example("warp_specialized_gemm")
    import ml_dtypes

    rng = np.random.default_rng(cluster_m)
    l, m, n, kk = 1, 256, 512, 128
    a = (0.1 * rng.standard_normal((l, m, kk))).astype(ml_dtypes.bfloat16)
    bt = (0.1 * rng.standard_normal((l, n, kk))).astype(ml_dtypes.bfloat16)
    d = np.full((l, m, n), np.nan, dtype=ml_dtypes.bfloat16)
    design = ex.Gemm(cluster_m=cluster_m)
    ex.launch(design, warpforge.Module(design.build(), warpforge.Device.sim()), a, bt, d, alpha=0.5)
    reference = 0.5 * np.einsum("lmk,lnk->lmn", a.astype(np.float32), bt.astype(np.float32))
    np.testing.assert_allclose(d.astype(np.float32), reference, atol=2e-2, rtol=2e-2)


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
