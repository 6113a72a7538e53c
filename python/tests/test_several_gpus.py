"""Two GPUs in one process (skipped, saying so, with fewer): warpforge ops
on either GPU from torch and JAX, whichever device is torch's current one,
and from one host thread per GPU at once. An op must leave the caller's
current device as it was (the CUDA runtime takes the current context as
the current device), give the same bits on both GPUs (the same kernel on
the same model), and run from several threads at once."""

import threading

import numpy as np
import pytest

import warpforge
from conftest import have, torch_cuda_or_skip

pytestmark = pytest.mark.gpu


def two_gpus():
    torch = torch_cuda_or_skip()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs two CUDA GPUs; torch sees {torch.cuda.device_count()}")
    import warpforge.torch  # noqa: F401 (registers torch.ops.warpforge)

    return torch


def problem(torch, device, seed, m=300, n=264, k=1024):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(m, k, 1, generator=gen) * 4 - 2).to(device)
    y = (torch.rand(n, k, 1, generator=gen) * 4 - 2).to(device)
    return (*warpforge.quantize(x, "mxfp8"), *warpforge.quantize(y, "mxfp8"))


def gemm_amax(torch, a, sfa, b, sfb):
    return torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)


def test_an_op_on_the_other_gpu_leaves_the_current_device():
    torch = two_gpus()
    for current, other in ((0, 1), (1, 0)):
        with torch.cuda.device(current):
            c, amax = gemm_amax(torch, *problem(torch, f"cuda:{other}", seed=1))
            torch.cuda.synchronize(other)
            assert c.device.index == other and amax.device.index == other
            assert torch.cuda.current_device() == current
            assert torch.empty(1, device="cuda").device.index == current


def test_both_gpus_give_the_same_bits():
    torch = two_gpus()
    results = [gemm_amax(torch, *problem(torch, f"cuda:{g}", seed=2)) for g in (0, 1)]
    c0, amax0 = (t.cpu() for t in results[0])
    c1, amax1 = (t.cpu() for t in results[1])
    assert torch.equal(c0, c1) and torch.equal(amax0, amax1) and amax0.item() > 1


def test_one_thread_per_gpu_at_once():
    torch = two_gpus()
    inputs = {(g, s): problem(torch, f"cuda:{g}", seed=10 + s) for g in (0, 1) for s in range(3)}
    serial = {key: tuple(t.cpu() for t in gemm_amax(torch, *args)) for key, args in inputs.items()}
    concurrent, errors = {}, []

    def work(gpu):
        try:
            torch.cuda.set_device(gpu)
            for _ in range(5):
                for s in range(3):
                    out = gemm_amax(torch, *inputs[(gpu, s)])
                    torch.cuda.synchronize(gpu)
                    concurrent.setdefault((gpu, s), []).append(tuple(t.cpu() for t in out))
        except Exception as e:  # reported below, with its thread
            errors.append(f"GPU {gpu}: {e!r}")

    threads = [threading.Thread(target=work, args=(g,)) for g in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for key, runs in concurrent.items():
        assert len(runs) == 5
        for c, amax in runs:
            assert torch.equal(c, serial[key][0]) and torch.equal(amax, serial[key][1]), key


def test_jax_jit_splits_over_two_gpus():
    """partitioned_gemm_amax under jax.jit over two GPUs: the column split
    is the one-GPU op bit for bit, the row split within the f32 bound."""
    if not have("jax"):
        pytest.skip("JAX is not installed")
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    from warpforge import jax as wjax
    from warpforge import jax_sharding

    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if len(gpus) < 2:
        pytest.skip(f"needs two GPUs visible to JAX; it sees {len(gpus)}")
    mesh = jax.make_mesh((2,), ("tp",), devices=gpus[:2], axis_types=(AxisType.Auto,))
    rng = np.random.default_rng(5)
    m, n, k = 256, 512, 1024
    a, sfa = warpforge.quantize(rng.uniform(-2, 2, (m, k, 1)).astype(np.float32), "mxfp8")
    b, sfb = warpforge.quantize(rng.uniform(-2, 2, (n, k, 1)).astype(np.float32), "mxfp8")
    one_c, one_amax = (np.asarray(t) for t in wjax.gemm_amax(*(jax.device_put(t, gpus[0]) for t in (a, b, sfa, sfb))))
    op = jax.jit(jax_sharding.partitioned_gemm_amax)

    def put(x, spec):
        return jax.device_put(x, NamedSharding(mesh, spec))

    c, amax = op(put(a, P()), put(b, P("tp")), put(sfa, P()), put(sfb, P(None, None, "tp")))
    assert len(c.sharding.device_set) == 2
    np.testing.assert_array_equal(np.asarray(c), one_c)
    np.testing.assert_array_equal(np.asarray(amax), one_amax)
    ks = P(None, None, None, None, "tp")
    c, amax = op(put(a, P(None, "tp")), put(b, P(None, "tp")), put(sfa, ks), put(sfb, ks))
    terms = warpforge.reference.gemm_amax(np.abs(a.astype(np.float32)).astype(a.dtype),
                                          np.abs(b.astype(np.float32)).astype(b.dtype), sfa, sfb)[0]
    u = 2.0**-24
    bound = 2 * (k - 1) * u / (1 - (k - 1) * u) * terms * (1 + u)
    assert (np.abs(np.asarray(c) - one_c) <= bound).all()
    assert np.asarray(amax).item() == np.abs(np.asarray(c)).max()
