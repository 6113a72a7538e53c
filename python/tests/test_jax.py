"""warpforge.jax: gemm_amax and gemm through the XLA FFI, eagerly and
inside jax.jit. CPU arrays run on the simulator (so this runs without a
GPU where JAX is installed); on a GPU machine the same tests run on CUDA
arrays when JAX's default backend is the GPU."""

import numpy as np
import pytest

import warpforge
from conftest import affine_kernel, have, uniform

pytestmark = pytest.mark.skipif(not have("jax"), reason="JAX is not installed")


@pytest.fixture(scope="module")
def wjax():
    if not hasattr(warpforge._warpforge, "jax_ffi_targets"):
        pytest.skip("this build of warpforge has no JAX FFI handlers (JAX was absent when it was built)")
    from warpforge import jax as wjax_module

    return wjax_module


def test_gemm_amax_under_jit_matches_numpy(rng, wjax):
    import jax
    import jax.numpy as jnp

    m, n, k, l = 64, 32, 128, 2
    x, y = uniform(rng, m, k, l), uniform(rng, n, k, l)
    a, sfa = warpforge.quantize(x, "mxfp8")
    b, sfb = warpforge.quantize(y, "mxfp8")
    expected_c, expected_amax = warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=np.float32)
    ja, jb, jsfa, jsfb = (jnp.asarray(t) for t in (a, b, sfa, sfb))
    c, amax = jax.jit(wjax.gemm_amax, static_argnames=("c_major", "c_dtype"))(ja, jb, jsfa, jsfb)
    assert c.shape == (m, n, l) and c.dtype == jnp.float32 and amax.shape == (1, 1, 1)
    # The same kernel as the NumPy call where JAX runs on the CPU (the
    # simulator); the GPU's own accumulation where it runs on a GPU.
    np.testing.assert_allclose(np.asarray(c), expected_c, atol=0.01, rtol=0.01)
    assert float(amax[0, 0, 0]) == pytest.approx(float(expected_amax[0, 0, 0]), rel=1e-5)


def test_jax_arrays_go_through_the_ffi_from_the_one_call_api(rng, wjax):
    import jax.numpy as jnp

    a, sfa = warpforge.quantize(uniform(rng, 32, 64, 1), "nvfp4")
    b, sfb = warpforge.quantize(uniform(rng, 32, 64, 1), "nvfp4")
    c, amax = warpforge.gemm_amax(*(jnp.asarray(t) for t in (a, b, sfa, sfb)), c_major="m",
                                  c_dtype=jnp.bfloat16, sf_vec_size=16)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=16)
    assert c.dtype == jnp.bfloat16 and c.shape == (32, 32, 1)
    np.testing.assert_allclose(np.asarray(c, dtype=np.float32), ref, atol=0.01, rtol=0.01)
    assert float(amax[0, 0, 0]) == pytest.approx(ref_amax, rel=1e-6)


def test_gemm_under_jit(rng, wjax):
    import jax
    import jax.numpy as jnp

    a = jnp.asarray(uniform(rng, 32, 48), dtype=jnp.bfloat16)
    b = jnp.asarray(uniform(rng, 48, 16), dtype=jnp.bfloat16)
    c = jnp.asarray(uniform(rng, 32, 16))
    d = jax.jit(lambda a, b, c: wjax.gemm(a, b, c, alpha=0.5, beta=2.0, out_dtype=jnp.float32))(a, b, c)
    expected = 0.5 * np.asarray(a, np.float64) @ np.asarray(b, np.float64) + 2.0 * np.asarray(c)
    np.testing.assert_allclose(np.asarray(d), expected, atol=1e-3, rtol=1e-3)


def test_a_refusal_reaches_the_caller_with_the_cpp_message(rng, wjax):
    import jax.numpy as jnp

    import jax

    a, sfa = warpforge.quantize(uniform(rng, 32, 64, 1), "mxfp8")
    # XLA runs a GPU call asynchronously: its refusal arrives with the result.
    with pytest.raises(Exception, match="e4m3 data with sf_vec_size 16"):
        jax.block_until_ready(wjax.gemm_amax(*(jnp.asarray(t) for t in (a, a, sfa, sfa)), sf_vec_size=16))


def test_a_dsl_kernel_inside_jit(wjax):
    import jax
    import jax.numpy as jnp

    k = affine_kernel()
    affine = wjax.kernel(k, 1, 256, jax.ShapeDtypeStruct((256,), jnp.float32))
    xs = jnp.arange(256, dtype=jnp.float32)
    ys = jax.jit(lambda t: affine(t) * 3)(xs)
    np.testing.assert_array_equal(np.asarray(ys), (2 * np.arange(256, dtype=np.float32) + 1) * 3)
    with pytest.raises(Exception, match="takes 2"):
        wjax.kernel(k, 1, 256, (jax.ShapeDtypeStruct((256,), jnp.float32),) * 2)(xs)
