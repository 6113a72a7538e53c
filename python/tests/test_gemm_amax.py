"""warpforge.gemm_amax and warpforge.GemmAmax on NumPy arrays (the
simulator), checked against a decode of the quantized inputs done here with
ml_dtypes and against the C++ reference, in the cuDNN frontend's reference
form: U(-2, 2) inputs, atol = rtol = 0.01 for f32/bf16 C."""

import ml_dtypes
import numpy as np
import pytest

import warpforge
from conftest import uniform

FP4_CODES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)


def decode(data, scales, vec):
    """(rows, K, L) values of quantized data, decoded here, independently of
    warpforge: FP4 nibbles by their table, scales read from the 6-D 128x4 view."""
    if data.dtype == np.uint8:  # packed FP4, the lower K in the low nibble
        codes = np.stack([data & 0xF, data >> 4], axis=2).reshape(data.shape[0], -1, data.shape[2])
        values = FP4_CODES[codes]
    else:
        values = data.astype(np.float32)
    rows, k, batches = values.shape
    s = scales.astype(np.float32)
    r, kk, l = np.meshgrid(np.arange(rows), np.arange(k) // vec, np.arange(batches), indexing="ij")
    return values * s[r % 32, (r // 32) % 4, r // 128, kk % 4, kk // 4, l]


def problem(rng, fmt, m, n, k, l):
    a, sfa = warpforge.quantize(uniform(rng, m, k, l), fmt)
    b, sfb = warpforge.quantize(uniform(rng, n, k, l), fmt)
    return a, b, sfa, sfb


FORMATS = [("mxfp8", 32), ("mxfp4", 32), ("nvfp4", 16)]


@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_quantize_keeps_the_values(rng, fmt, vec):
    x = uniform(rng, 40, 64, 2)
    data, scales = warpforge.quantize(x, fmt)
    assert data.shape == ((40, 64, 2) if fmt == "mxfp8" else (40, 32, 2))
    assert data.strides[1] == 1  # k-major
    assert scales.shape == (32, 4, 1, 4, 64 // vec // 4 or 1, 2)
    # FP8 keeps 3 mantissa bits, FP4 one: relative steps of 1/16 and 1/4 (plus the block's small values).
    tolerance = 2.0 ** -4 if fmt == "mxfp8" else 0.25
    np.testing.assert_allclose(decode(data, scales, vec), x, rtol=tolerance, atol=0.25)


@pytest.mark.parametrize("fmt,vec", FORMATS)
def test_gemm_amax_matches_the_decoded_product(rng, fmt, vec):
    m, n, k, l = 64, 48, 128, 2
    a, b, sfa, sfb = problem(rng, fmt, m, n, k, l)
    c, amax = warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (m, n, l)
    assert c.strides == (n * 4, 4, m * n * 4)  # n-major, as the cuDNN frontend allocates it
    expected = np.einsum("mkl,nkl->mnl", decode(a, sfa, vec).astype(np.float64), decode(b, sfb, vec))
    np.testing.assert_allclose(c, expected, atol=0.01, rtol=0.01)
    assert amax.shape == (1, 1, 1)
    assert amax[0, 0, 0] == pytest.approx(np.abs(expected).max(), rel=1e-5)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    np.testing.assert_allclose(c, ref, atol=0.01, rtol=0.01)
    assert amax[0, 0, 0] == pytest.approx(ref_amax, rel=1e-6)


def test_m_major_bf16_c(rng):
    m, n, k, l = 40, 32, 64, 1
    a, b, sfa, sfb = problem(rng, "mxfp8", m, n, k, l)
    c, amax = warpforge.gemm_amax(a, b, sfa, sfb, c_major="m", c_dtype=ml_dtypes.bfloat16)
    assert c.dtype == ml_dtypes.bfloat16 and c.strides == (2, 2 * m, 2 * m * n)
    ref, _ = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    np.testing.assert_allclose(c.astype(np.float32), ref, atol=0.01, rtol=0.01)


def test_fp4_c_is_packed_bytes(rng):
    m, n, k, l = 32, 32, 64, 1
    a, b, sfa, sfb = problem(rng, "nvfp4", m, n, k, l)
    c, _ = warpforge.gemm_amax(a, b, sfa, sfb, c_dtype="e2m1", sf_vec_size=16)
    assert c.dtype == np.uint8 and c.shape == (m, n // 2, l)
    ref, _ = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=16)
    values = FP4_CODES[np.stack([c & 0xF, c >> 4], axis=2).reshape(m, n, l)]
    # The reference through the same rounding: FP4 steps are at most 2 (between 4 and 6), saturating at 6.
    np.testing.assert_allclose(values, np.clip(ref, -6, 6), atol=1.0, rtol=0.0)
    assert np.abs(values).max() > 0


def test_the_class_checks_compiles_and_accumulates_amax(rng):
    m, n, k, l = 64, 32, 64, 1
    a, b, sfa, sfb = problem(rng, "mxfp8", m, n, k, l)
    c = np.full((m, n, l), np.nan, dtype=np.float32)  # poisoned
    amax = np.zeros((1, 1, 1), dtype=np.float32)
    op = warpforge.GemmAmax(a, b, sfa, sfb, c, amax)
    support = op.check_support()
    assert support, str(support)
    assert op.kernel_name in ("swapped", "sm80")
    op.compile()
    op.execute(a, b, sfa, sfb, c, amax)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    np.testing.assert_allclose(c, ref, atol=0.01, rtol=0.01)
    assert amax[0, 0, 0] == pytest.approx(ref_amax, rel=1e-6)
    # A running maximum: a larger initial value stays.
    amax[...] = 1e6
    op.execute(a, b, sfa, sfb, c, amax)
    assert amax[0, 0, 0] == 1e6


def test_check_support_gives_every_reason(rng):
    a, b, sfa, sfb = problem(rng, "mxfp8", 32, 32, 64, 1)
    c = np.zeros((32, 32, 1), dtype=np.float32)
    amax = np.zeros((2,), dtype=np.float32)
    op = warpforge.GemmAmax(a, b, sfa, sfb, c, amax, sf_vec_size=16)
    support = op.check_support()
    assert not support
    text = "\n".join(support.reasons)
    assert "e4m3 data with sf_vec_size 16" in text
    assert "amax is f32[2]" in text
    with pytest.raises(warpforge.OpsError, match="sf_vec_size 16"):
        op.compile()


def test_a_mismatched_execute_is_refused_before_the_launch(rng):
    a, b, sfa, sfb = problem(rng, "mxfp8", 32, 32, 64, 1)
    c = np.full((32, 32, 1), np.nan, dtype=np.float32)
    amax = np.zeros((1, 1, 1), dtype=np.float32)
    op = warpforge.GemmAmax(a, b, sfa, sfb, c, amax)
    other_c = np.full((32, 16, 1), np.nan, dtype=np.float32)
    with pytest.raises(warpforge.OpsError):
        op.execute(a, b, sfa, sfb, other_c, amax)
    assert np.isnan(other_c).all()


def test_refusals_name_the_value(rng):
    a, b, sfa, sfb = problem(rng, "mxfp8", 32, 32, 64, 1)
    with pytest.raises(warpforge.OpsError, match="c_major must be 'm' or 'n', got 'k'"):
        warpforge.gemm_amax(a, b, sfa, sfb, c_major="k")
    with pytest.raises(warpforge.OpsError, match="e4m3 A/B with e4m3 C"):
        warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=ml_dtypes.float8_e4m3fn)


def test_precision_and_kernel_choices(rng):
    a, b, sfa, sfb = problem(rng, "mxfp8", 32, 32, 64, 1)
    ref, _ = warpforge.reference.gemm_amax(a, b, sfa, sfb)
    c, _ = warpforge.gemm_amax(a, b, sfa, sfb, kernel="sm80")
    np.testing.assert_allclose(c, ref, atol=0.01, rtol=0.01)
    c = np.zeros((32, 32, 1), dtype=np.float32)
    amax = np.zeros((1, 1, 1), dtype=np.float32)
    assert warpforge.GemmAmax(a, b, sfa, sfb, c, amax, kernel="sm80").kernel_name == "sm80"
    with pytest.raises(warpforge.OpsError, match="precision 'approximate': accepted exact"):
        warpforge.gemm_amax(a, b, sfa, sfb, precision="approximate")
    with pytest.raises(warpforge.OpsError, match="kernel 'sm100': accepted auto, stream, skinny, prepass, swapped, sm90a, sm80, sm100a"):
        warpforge.gemm_amax(a, b, sfa, sfb, kernel="sm100")

