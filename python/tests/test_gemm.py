"""warpforge.gemm and warpforge.Gemm on NumPy arrays (the simulator)
against a float64 NumPy reference of the same bf16 inputs."""

import ml_dtypes
import numpy as np
import pytest

import warpforge
from conftest import uniform


def bf16(rng, *shape):
    return uniform(rng, *shape).astype(ml_dtypes.bfloat16)


def reference(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def test_gemm_rows_and_columns(rng):
    a = bf16(rng, 40, 24)
    b = np.asfortranarray(bf16(rng, 24, 56))  # column-major B: its strides say so
    d = warpforge.gemm(a, b, out_dtype=np.float32)
    assert d.dtype == np.float32 and d.shape == (40, 56)
    np.testing.assert_allclose(d, reference(a, b), atol=1e-3, rtol=1e-3)


def test_gemm_defaults_to_a_dtype_and_takes_c(rng):
    a, b = bf16(rng, 2, 16, 32), bf16(rng, 2, 32, 24)
    c = bf16(rng, 2, 16, 24)  # C of D's dtype
    d = warpforge.gemm(a, b, c, alpha=2.0, beta=-1.0)
    assert d.dtype == ml_dtypes.bfloat16 and d.shape == (2, 16, 24)
    expected = 2 * reference(a, b) - c.astype(np.float64)
    np.testing.assert_allclose(d.astype(np.float32), expected, atol=0.05, rtol=0.01)


def test_the_class_refuses_with_every_reason(rng):
    a = bf16(rng, 16, 32)
    b = bf16(rng, 16, 8)  # K mismatch
    d = np.zeros((16, 8), dtype=np.int32)
    support = warpforge.Gemm(a, b, d).check_support()
    assert not support
    assert len(support.reasons) >= 2, support.reasons
    assert any("K" in r for r in support.reasons)
    assert any("i32" in r for r in support.reasons)


def test_an_operand_of_another_rank_is_refused_naming_it(rng):
    # D's shape cannot come from a vector: the op refuses A or B by its rank.
    with pytest.raises(warpforge.OpsError, match=r"A bf16\[32\] strides \[1\] has rank 1"):
        warpforge.gemm(bf16(rng, 32), bf16(rng, 32, 8))
    with pytest.raises(warpforge.OpsError, match=r"B bf16\[2, 2, 32, 8\] .* has rank 4"):
        warpforge.gemm(bf16(rng, 16, 32), bf16(rng, 2, 2, 32, 8))
