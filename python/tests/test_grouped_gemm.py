"""warpforge.grouped_mm (ops::GroupedGemm) from Python: NumPy arrays on the
simulator against a float64 reference; torch.ops.warpforge.grouped_mm on
CPU tensors (the simulator) and on a GPU: values, autograd against torch's
own, the fake implementation, opcheck, torch.compile and CUDA graph capture;
packed block-scaled weights; warpforge.jax.ragged_dot against
jax.lax.ragged_dot, with its gradients, under jax.jit."""

import numpy as np
import pytest

import warpforge
from conftest import cpp_torch_or_skip, have, torch_cuda_or_skip, torch_or_skip

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def bf16(rng, *shape):
    import ml_dtypes

    return rng.standard_normal(shape).astype(np.float32).astype(ml_dtypes.bfloat16)


def ends(*sizes):
    return np.cumsum(sizes).astype(np.int32)


def bound(a, b, offs, k):
    """|D - exact| allowed: f32 accumulation of exact products, bf16 rounding of D."""
    magnitude = warpforge.grouped.reference(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)), offs)
    return k * 2.0**-23 * magnitude + 2.0**-8 * np.abs(warpforge.grouped.reference(a, b, offs)) + 1e-30


def test_numpy_ragged_m_with_empty_groups_and_a_tail(rng):
    a, b = bf16(rng, 90, 72), bf16(rng, 4, 72, 40)
    offs = ends(0, 1, 80, 0)  # 9 rows past the last end: zeros
    d = warpforge.grouped_mm(a, b, offs)
    assert d.shape == (90, 40) and d.dtype == a.dtype
    want = warpforge.grouped.reference(a, b, offs)
    assert np.all(np.abs(d.astype(np.float64) - want) <= bound(a, b, offs, 72))
    assert np.all(d[81:].astype(np.float32) == 0)


def test_numpy_ragged_k_is_the_weights_gradient(rng):
    x, dy = bf16(rng, 50, 24), bf16(rng, 50, 16)
    offs = ends(20, 0, 30)
    d = warpforge.grouped_mm(x.T, dy, offs, out_dtype="f32")
    assert d.shape == (3, 24, 16)
    want = warpforge.grouped.reference(x.T, dy, offs)
    np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-5)
    assert np.all(d[1] == 0)


def test_bias_is_refused():
    with pytest.raises(warpforge.OpsError, match="bias"):
        warpforge.grouped_mm(np.zeros((2, 8), np.float16), np.zeros((1, 8, 8), np.float16), ends(2), bias=1)


@pytest.mark.parametrize("fmt", ["mxfp4", "nvfp4", "mxfp8"])
def test_numpy_packed_weights(rng, fmt):
    w = rng.standard_normal((3, 296, 40)).astype(np.float32)
    packed, values = warpforge.quantize_weights(w, fmt)
    assert packed.shape == (3, 296, 40)
    a = bf16(rng, 9, 296)
    offs = ends(2, 0, 6)
    d = warpforge.grouped_mm(a, packed, offs, out_dtype="f32")
    want = warpforge.grouped.reference(a, values, offs)
    magnitude = warpforge.grouped.reference(np.abs(a.astype(np.float64)), np.abs(values), offs)
    assert np.all(np.abs(d - want) <= 296 * 2.0**-23 * magnitude + 1e-30)
    assert np.all(d[8:] == 0)


def test_numpy_both_quantized_with_amax(rng):
    w = rng.standard_normal((2, 256, 24)).astype(np.float32)
    packed, values = warpforge.quantize_weights(w, "mxfp8")
    x = rng.uniform(-2, 2, (6, 256)).astype(np.float32)
    a_codes, a_scales = warpforge.quantize(x, "mxfp8")
    # A's exact values: the same quantization, read back as one group's K x M "weights".
    a_values = warpforge.quantize_weights(np.ascontiguousarray(x.T[None]), "mxfp8")[1][0].T
    offs = ends(4, 2)
    d, amax = warpforge.grouped_mm_amax(a_codes[:, :, 0], a_scales, packed, offs, out_dtype="f32")
    want = warpforge.grouped.reference(a_values, values, offs)
    magnitude = warpforge.grouped.reference(np.abs(a_values), np.abs(values), offs)
    assert np.all(np.abs(d - want) <= 256 * 2.0**-23 * magnitude + 1e-30)
    assert float(amax[0]) == pytest.approx(float(np.abs(want).max()), rel=1e-5)


def torch_device(device):
    torch = torch_cuda_or_skip() if device == "cuda" else torch_or_skip()
    import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)

    return torch


@pytest.mark.parametrize("device", DEVICES)
def test_torch_forward_and_autograd_against_torch(rng, device):
    torch = torch_device(device)
    offs = torch.tensor(ends(3, 0, 25, 12), device=device)
    a = torch.randn(40, 48, device=device).bfloat16().requires_grad_()
    b = torch.randn(4, 48, 24, device=device).bfloat16().requires_grad_()
    d = warpforge.grouped_mm(a, b, offs)
    # torch's own, group by group, in float64
    a64, b64 = a.detach().double(), b.detach().double()
    bounds = [0] + offs.tolist()
    want = torch.cat([a64[lo:hi] @ b64[g] for g, (lo, hi) in enumerate(zip(bounds, bounds[1:]))])
    torch.testing.assert_close(d.double(), want, atol=0.05, rtol=0.01)
    grad = torch.randn_like(d)
    d.backward(grad)
    g64 = grad.double()
    want_a = torch.cat([g64[lo:hi] @ b64[g].T for g, (lo, hi) in enumerate(zip(bounds, bounds[1:]))])
    want_b = torch.stack([a64[lo:hi].T @ g64[lo:hi] for lo, hi in zip(bounds, bounds[1:])])
    torch.testing.assert_close(a.grad.double(), want_a, atol=0.05, rtol=0.01)
    torch.testing.assert_close(b.grad.double(), want_b, atol=0.05, rtol=0.01)
    assert torch.all(b.grad[1] == 0)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_weights_gradient_keeps_k_contiguous_b_layout(rng, device):
    # torch._grouped_mm's weights (G, K, N) with K contiguous: dB comes out in
    # B's strides (no transposing copy into .grad), with the right values.
    torch = torch_device(device)
    offs = torch.tensor(ends(9, 0, 20, 11), device=device)
    a = torch.randn(40, 48, device=device).bfloat16()
    b = torch.randn(4, 24, 48, device=device).bfloat16().transpose(1, 2).requires_grad_()
    assert b.stride(1) == 1
    d = warpforge.grouped_mm(a, b, offs)
    grad = torch.randn_like(d)
    d.backward(grad)
    assert b.grad.stride() == b.stride()
    a64, b64, g64 = a.double(), b.detach().double(), grad.double()
    bounds = [0] + offs.tolist()
    want_b = torch.stack([a64[lo:hi].T @ g64[lo:hi] for lo, hi in zip(bounds, bounds[1:])])
    torch.testing.assert_close(b.grad.double(), want_b, atol=0.05, rtol=0.01)
    assert torch.all(b.grad[1] == 0)


def test_torch_grouped_mm_is_the_cpp_kernel_where_built(rng):
    # Built with torch: torch.ops.warpforge.grouped_mm's kernels and autograd
    # are _warpforge_torch's (no Python in a call), with the bits of the
    # Python implementation, forward and both gradients.
    torch = cpp_torch_or_skip()
    from warpforge import grouped_torch

    assert grouped_torch.CPP_KERNEL
    offs = torch.tensor(ends(3, 0, 25, 12))
    a = torch.randn(40, 48).bfloat16().requires_grad_()
    b = torch.randn(4, 24, 48).bfloat16().transpose(1, 2).requires_grad_()
    d = torch.ops.warpforge.grouped_mm(a, b, offs)
    assert torch.equal(d, grouped_torch._grouped_mm(a.detach(), b.detach(), offs))
    grad = torch.randn_like(d)
    d.backward(grad)

    class Context:
        saved_tensors = (a.detach(), b.detach(), offs)
        needs_input_grad = (True, True, False, False)

    grad_a, grad_b, _, _ = grouped_torch._backward(Context(), grad)
    assert torch.equal(a.grad, grad_a) and torch.equal(b.grad, grad_b) and b.grad.stride() == b.stride()


@pytest.mark.parametrize("device", DEVICES)
def test_torch_opcheck(rng, device):
    torch = torch_device(device)
    offs = torch.tensor(ends(5, 11), device=device)
    a = torch.randn(16, 32, device=device).bfloat16()
    b = torch.randn(2, 32, 16, device=device).bfloat16()
    torch.library.opcheck(torch.ops.warpforge.grouped_mm.default, (a, b, offs), {"out_dtype": torch.float32},
                          test_utils=("test_schema", "test_faketensor", "test_autograd_registration"))
    packed, _ = warpforge.quantize_weights(torch.randn(2, 256, 16), "mxfp4")
    codes, scales = packed.codes.view(torch.uint8).to(device), packed.scales.view(torch.uint8).to(device)
    torch.library.opcheck(torch.ops.warpforge.grouped_mm_packed.default,
                          (a.new_zeros(16, 256), codes, scales, offs, 16, "mxfp4"),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["mxfp4", "nvfp4", "mxfp8"])
def test_torch_packed_weights_on_the_gpu(fmt):
    torch = torch_device("cuda")
    packed, values = warpforge.quantize_weights(torch.randn(8, 2880, 520), fmt)  # gpt-oss's K
    packed.codes, packed.scales = packed.codes.cuda(), packed.scales.cuda()
    a = torch.randn(20, 2880, device="cuda").bfloat16()
    offs = torch.tensor(ends(3, 0, 9, 1, 0, 2, 4, 0), device="cuda")  # 1 row past the last end
    d = warpforge.grouped_mm(a, packed, offs, out_dtype=torch.float32).cpu().numpy()
    a64, ends64 = a.float().cpu().numpy(), offs.cpu().numpy()
    want = warpforge.grouped.reference(a64, values, ends64)
    magnitude = warpforge.grouped.reference(np.abs(a64), np.abs(values), ends64)
    assert np.all(np.abs(d - want) <= 2880 * 2.0**-23 * magnitude + 1e-30)
    assert np.all(d[19] == 0)


@pytest.mark.gpu
def test_torch_compile_and_cuda_graph(rng):
    torch = torch_device("cuda")
    offs = torch.tensor(ends(30, 0, 70, 28), device="cuda")
    a = torch.randn(128, 256, device="cuda").bfloat16()
    b = torch.randn(4, 256, 128, device="cuda").bfloat16()
    eager = warpforge.grouped_mm(a, b, offs)
    compiled = torch.compile(lambda a, b, o: warpforge.grouped_mm(a, b, o).float() * 2, fullgraph=True)
    assert torch.equal(compiled(a, b, offs), eager.float() * 2)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = torch.ops.warpforge.grouped_mm(a, b, offs)
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d, eager)


def jax_or_skip():
    if not have("jax"):
        pytest.skip("JAX is not installed")
    import jax

    import warpforge.jax  # noqa: F401

    return jax


def test_jax_ragged_dot_and_its_gradients_under_jit(rng):
    jax = jax_or_skip()
    import jax.numpy as jnp

    import warpforge.jax as wjax

    lhs = jnp.asarray(bf16(rng, 30, 64))
    rhs = jnp.asarray(bf16(rng, 3, 64, 16))
    sizes = jnp.array([7, 0, 20], dtype=jnp.int32)  # 3 rows past the last: zeros

    def loss(f):
        return lambda l, r: jnp.sum(f(l, r, sizes, preferred_element_type=jnp.float32) ** 2)

    ours = jax.jit(lambda l, r: wjax.ragged_dot(l, r, sizes, preferred_element_type=jnp.float32))(lhs, rhs)
    theirs = jax.lax.ragged_dot(lhs.astype(jnp.float32), rhs.astype(jnp.float32), sizes)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
    assert np.all(np.asarray(ours)[27:] == 0)
    g_ours = jax.jit(jax.grad(loss(wjax.ragged_dot), argnums=(0, 1)))(lhs, rhs)
    g_theirs = jax.grad(loss(jax.lax.ragged_dot), argnums=(0, 1))(lhs.astype(jnp.float32), rhs.astype(jnp.float32))
    for o, t in zip(g_ours, g_theirs):
        np.testing.assert_allclose(np.asarray(o, dtype=np.float32), np.asarray(t), rtol=0.02, atol=0.5)


def moe_example():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "moe_layer.py"
    spec = importlib.util.spec_from_file_location("moe_layer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("weights", ["bf16", "mxfp4"])
def test_the_moe_example_matches_the_per_expert_loop_on_the_simulator(weights):
    torch_or_skip()
    out, want = moe_example().run(tokens=6, hidden=64, expert=32, experts=4, top_k=2, weights=weights)
    assert (out.double() - want).abs().max().item() <= 2.0**-6 * want.abs().max().item()


@pytest.mark.gpu
@pytest.mark.parametrize("weights", ["bf16", "mxfp4"])
def test_the_moe_example_compiled_in_a_cuda_graph(weights):
    torch_cuda_or_skip()
    out, want = moe_example().run(tokens=64, hidden=512, expert=256, experts=16, top_k=4, weights=weights,
                                  device="cuda", compile=True, graph=True)
    assert (out.double() - want).abs().max().item() <= 2.0**-6 * want.abs().max().item()
