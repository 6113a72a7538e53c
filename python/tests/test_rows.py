"""The row ops from Python: warpforge.rms_norm / layer_norm on NumPy, torch
(torch.ops.warpforge.norm with autograd, fakes, opcheck; warpforge.nn's
modules against torch.nn's) and JAX (custom_vjp through the FFI), against
fp64 references; CPU tensors run on the simulator, CUDA ones (marked gpu)
also under torch.compile(fullgraph=True) and in a CUDA graph."""

import numpy as np
import pytest

import warpforge
from conftest import have, torch_cuda_or_skip, torch_or_skip

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def torch_on(device):
    torch = torch_cuda_or_skip() if device == "cuda" else torch_or_skip()
    import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)

    return torch


def norm_reference(kind, x, weight=None, bias=None, eps=1e-6):
    """fp64: (x - mean) / sqrt(var + eps) · weight + bias (rms: mean 0)."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(-1, keepdims=True) if kind == "layer" else 0.0
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return y


# Bounds (as python/../tests/ops/row_ops_support.hpp): half an ulp of the
# output's dtype relative to the value, plus 2^-16 of the row's scale.
_ULP = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def assert_close(got, want, dtype_name, scale=None):
    got = np.asarray(got, dtype=np.float64)
    scale = np.abs(want).max(axis=-1, keepdims=True) if scale is None else scale
    bound = _ULP[dtype_name] * np.abs(want) + 2.0**-16 * scale + 1e-30
    bad = np.abs(got - want) > bound
    assert not bad.any(), f"{bad.sum()} of {bad.size} outside the bound; first at {np.argwhere(bad)[0]}"


@pytest.mark.parametrize("kind", ["rms", "layer"])
def test_numpy_runs_on_the_simulator(rng, kind):
    x = rng.standard_normal((6, 200)).astype(np.float32)
    w = (rng.random(200) + 0.5).astype(np.float32)
    b = rng.standard_normal(200).astype(np.float32)
    if kind == "rms":
        y = warpforge.rms_norm(x, w, eps=1e-6)
        assert_close(y, norm_reference("rms", x, w, eps=1e-6), "float32")
    else:
        y, h = warpforge.layer_norm(x, w, b, eps=1e-5, residual=x)
        np.testing.assert_array_equal(h, x + x)
        assert_close(y, norm_reference("layer", x + x, w, b, eps=1e-5), "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind,dtype", [("rms", "bfloat16"), ("layer", "float16"), ("rms", "float32")])
def test_torch_norm_values_and_gradients(rng, device, kind, dtype):
    torch = torch_on(device)
    dt = getattr(torch, dtype)
    x64 = rng.standard_normal((7, 3, 96))
    r64 = rng.standard_normal((7, 3, 96))
    w64, b64 = rng.random(96) + 0.5, rng.standard_normal(96)
    x = torch.tensor(x64, dtype=dt, device=device, requires_grad=True)
    r = torch.tensor(r64, dtype=dt, device=device, requires_grad=True)
    w = torch.tensor(w64, dtype=dt, device=device, requires_grad=True)
    b = torch.tensor(b64, dtype=dt, device=device, requires_grad=True) if kind == "layer" else None
    if kind == "rms":
        y, h = warpforge.rms_norm(x, w, eps=1e-5, residual=r)
    else:
        y, h = warpforge.layer_norm(x, w, b, eps=1e-5, residual=r)
    assert y.dtype == dt and y.shape == x.shape and h.dtype == dt
    hx = (x.detach() + r.detach()).double()  # h rounded to dt, as the kernel reads it
    hx = hx.to(dt).double()
    np.testing.assert_array_equal(h.detach().cpu().double().numpy(), hx.cpu().numpy())
    # The reference in fp64 through torch's autograd.
    h64 = hx.cpu().clone().requires_grad_()
    w_ref = w.detach().cpu().double().requires_grad_()
    b_ref = None if b is None else b.detach().cpu().double().requires_grad_()
    if kind == "rms":
        ref = torch.nn.functional.rms_norm(h64, (96,), w_ref, 1e-5)
    else:
        ref = torch.nn.functional.layer_norm(h64, (96,), w_ref, b_ref, 1e-5)
    assert_close(y.detach().cpu().double().numpy(), ref.detach().numpy(), dtype)
    g = torch.tensor(rng.standard_normal((7, 3, 96)), dtype=dt, device=device)
    (y.float() * g.float()).sum().backward()
    (ref * g.cpu().double()).sum().backward()
    assert_close(x.grad.cpu().double().numpy(), h64.grad.numpy(), dtype)
    assert torch.equal(x.grad, r.grad)  # the same gradient reaches both
    # dweight sums 21 rows: bound it by 2^-16 of the sum of magnitudes as well.
    assert_close(w.grad.cpu().double().numpy(), w_ref.grad.numpy(), dtype, scale=np.abs(w_ref.grad.numpy()).max() * 21)
    if b is not None:
        assert_close(b.grad.cpu().double().numpy(), b_ref.grad.numpy(), dtype, scale=np.abs(b_ref.grad.numpy()).max() * 21)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(rng, device):
    torch = torch_on(device)
    x = torch.tensor(rng.standard_normal((4, 64)), dtype=torch.bfloat16, device=device)
    w = torch.tensor(rng.random(64) + 0.5, dtype=torch.bfloat16, device=device)
    b = torch.tensor(rng.standard_normal(64), dtype=torch.float32, device=device)
    torch.library.opcheck(torch.ops.warpforge.norm.default, (x, x, w, b, "layer", 1e-5))
    torch.library.opcheck(torch.ops.warpforge.norm.default, (x, None, None, None, "rms", 1e-6))
    y, _, mean, rstd = torch.ops.warpforge.norm(x, None, w, None, "layer", 1e-5)
    torch.library.opcheck(torch.ops.warpforge.norm_backward.default,
                          (y, x, w, mean, rstd, None, "layer", 1e-5, True, torch.float32))


def test_nn_modules_take_torchs_arguments(rng):
    torch = torch_on("cpu")
    import warpforge.nn

    for ours, theirs in ((warpforge.nn.RMSNorm((4, 16), eps=1e-5), torch.nn.RMSNorm((4, 16), eps=1e-5)),
                         (warpforge.nn.LayerNorm(64, bias=False), torch.nn.LayerNorm(64, bias=False)),
                         (warpforge.nn.LayerNorm(64, elementwise_affine=False),
                          torch.nn.LayerNorm(64, elementwise_affine=False))):
        assert ours.state_dict().keys() == theirs.state_dict().keys()
        ours.load_state_dict(theirs.state_dict())
        shape = (3,) + tuple(theirs.normalized_shape)
        x = torch.tensor(rng.standard_normal(shape), dtype=torch.float32)
        torch.testing.assert_close(ours(x), theirs(x), atol=1e-5, rtol=1e-5)
    # eps None takes the input dtype's epsilon, as torch.nn.RMSNorm does.
    x = torch.tensor(rng.standard_normal((2, 32)) * 1e-3, dtype=torch.float32)
    torch.testing.assert_close(warpforge.nn.RMSNorm(32)(x), torch.nn.RMSNorm(32)(x), atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="does not match"):
        warpforge.nn.RMSNorm(16)(x)


def test_refusals_arrive_as_ops_errors(rng):
    torch = torch_on("cpu")
    x = torch.zeros((2, 8), dtype=torch.int32)
    with pytest.raises(warpforge.OpsError, match="x is i32: accepted f32, f16, bf16"):
        torch.ops.warpforge.norm(x, None, None, None, "rms", 1e-6)
    with pytest.raises(warpforge.OpsError, match="norm kind 'batch'"):
        torch.ops.warpforge.norm(x.float(), None, None, None, "batch", 1e-6)


@pytest.mark.skipif(not have("jax"), reason="jax is not installed")
@pytest.mark.parametrize("kind", ["rms", "layer"])
def test_jax_custom_vjp(rng, kind):
    import jax
    import jax.numpy as jnp

    import warpforge.jax as wjax

    x = jnp.asarray(rng.standard_normal((5, 3, 80)), dtype=jnp.float32)
    w = jnp.asarray(rng.random(80) + 0.5, dtype=jnp.float32)
    b = jnp.asarray(rng.standard_normal(80), dtype=jnp.float32)

    def ours(x, w, b):
        return wjax.rms_norm(x, w, 1e-5) if kind == "rms" else wjax.layer_norm(x, w, b, 1e-5)

    def reference(x, w, b):
        mean = x.mean(-1, keepdims=True) if kind == "layer" else 0.0
        y = (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * w
        return y + b if kind == "layer" else y

    y = jax.jit(ours)(x, w, b)
    assert_close(np.asarray(y), norm_reference(kind, np.asarray(x), np.asarray(w), np.asarray(b) if kind == "layer"
                                               else None, 1e-5), "float32")
    loss = lambda f: lambda *a: (f(*a) * jnp.arange(80.0)).sum()  # noqa: E731
    got = jax.grad(loss(ours), argnums=(0, 1, 2))(x, w, b)
    want = jax.grad(loss(reference), argnums=(0, 1, 2))(x, w, b)
    for g, r in zip(got[:2] if kind == "rms" else got, want[:2] if kind == "rms" else want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-4, atol=1e-4 * float(jnp.abs(r).max()))
    y, h = jax.jit(lambda x, r: wjax.rms_norm(x, w, residual=r))(x, x)
    np.testing.assert_array_equal(np.asarray(h), np.asarray(x + x))


@pytest.mark.gpu
def test_torch_compile_fullgraph_and_cuda_graph(rng):
    torch = torch_on("cuda")
    import warpforge.nn

    norm = warpforge.nn.RMSNorm(1024, eps=1e-6, device="cuda", dtype=torch.bfloat16)
    x = torch.tensor(rng.standard_normal((64, 1024)), dtype=torch.bfloat16, device="cuda")
    compiled = torch.compile(lambda x: norm(x) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(x), norm(x) * 2, atol=0, rtol=0)
    # Captured once (after a warm-up that compiles the kernel), replayed on new data.
    static_x = x.clone()
    norm(static_x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = norm(static_x)
    static_x.copy_(x * 3)
    graph.replay()
    torch.testing.assert_close(static_y, norm(x * 3), atol=0, rtol=0)
