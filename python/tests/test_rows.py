"""The row ops from Python: warpforge.rms_norm / layer_norm on NumPy, torch
(torch.ops.warpforge.norm with autograd, fakes, opcheck; warpforge.nn's
modules against torch.nn's) and JAX (custom_vjp through the FFI), against
fp64 references; CPU tensors run on the simulator, CUDA ones (marked gpu)
also under torch.compile(fullgraph=True) and in a CUDA graph."""

import numpy as np
import pytest

import warpforge
from conftest import cpp_torch_or_skip, have, recording_mode, torch_cuda_or_skip, torch_or_skip

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


def test_torch_compile_traces_the_backward(rng):
    # AOTAutograd traces a backward with fake tensors outside Dynamo, where
    # the backward must reach the operator, not the kernel. (The GPU case
    # below is the one that failed on that; on CPU tensors this one passed
    # either way: it checks the compiled gradient's bits.) aot_eager: the
    # same AOTAutograd trace without Inductor's generated C++, which a CPU
    # run compiles with g++ (about 11 CPU-s on a cold Inductor cache).
    torch = torch_on("cpu")
    import warpforge.nn

    norm = warpforge.nn.RMSNorm(256, eps=1e-6, dtype=torch.float32)
    x = torch.tensor(rng.standard_normal((8, 256)), dtype=torch.float32, requires_grad=True)
    torch.compile(lambda x: (norm(x) * 2).sum(), fullgraph=True, backend="aot_eager")(x).backward()
    compiled = x.grad.clone()
    x.grad = None
    (norm(x) * 2).sum().backward()
    torch.testing.assert_close(compiled, x.grad, atol=0, rtol=0)


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


@pytest.mark.parametrize("device", DEVICES)
def test_torch_softmax_swiglu_and_their_gradients(rng, device):
    torch = torch_on(device)
    import warpforge.nn

    x = torch.tensor(rng.standard_normal((5, 3, 130)) * 3, dtype=torch.float32, device=device, requires_grad=True)
    y = warpforge.nn.Softmax(dim=-1)(x)
    x64 = x.detach().cpu().double().requires_grad_()
    ref = torch.softmax(x64, -1)
    assert_close(y.detach().cpu().double().numpy(), ref.detach().numpy(), "float32")
    g = torch.tensor(rng.standard_normal((5, 3, 130)), device=device)
    (y * g).sum().backward()
    (ref * g.cpu().double()).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), x64.grad.numpy(), atol=1e-6, rtol=1e-4)

    for interleaved in (False, True):
        both = torch.tensor(rng.standard_normal((4, 96)) * 2, dtype=torch.bfloat16, device=device, requires_grad=True)
        out = warpforge.nn.SwiGLU(interleaved=interleaved)(both)
        b64 = both.detach().cpu().double().requires_grad_()
        gate, up = (b64[:, 0::2], b64[:, 1::2]) if interleaved else b64.chunk(2, -1)
        want = torch.nn.functional.silu(gate) * up
        assert_close(out.detach().cpu().double().numpy(), want.detach().numpy(), "bfloat16")
        out.float().sum().backward()
        want.sum().backward()
        assert_close(both.grad.cpu().double().numpy(), b64.grad.numpy(), "bfloat16")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction,smoothing", [("mean", 0.0), ("sum", 0.1), ("none", 0.05)])
def test_torch_cross_entropy_matches_pytorch(rng, device, reduction, smoothing):
    torch = torch_on(device)
    import warpforge.nn

    logits = torch.tensor(rng.standard_normal((7, 500)) * 2, dtype=torch.float32, device=device, requires_grad=True)
    labels = torch.tensor(rng.integers(0, 500, 7), device=device)
    labels[3] = -100
    loss = warpforge.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=smoothing)(logits, labels)
    ref_logits = logits.detach().cpu().double().requires_grad_()
    ref = torch.nn.functional.cross_entropy(ref_logits, labels.cpu(), reduction=reduction, label_smoothing=smoothing)
    np.testing.assert_allclose(loss.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    weights = torch.arange(1.0, 8.0, device=device) if reduction == "none" else torch.tensor(3.0, device=device)
    (loss * weights).sum().backward()
    (ref * weights.cpu().double()).sum().backward()
    np.testing.assert_allclose(logits.grad.cpu().numpy(), ref_logits.grad.numpy(), atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_of_the_other_row_ops(rng, device):
    torch = torch_on(device)
    x = torch.tensor(rng.standard_normal((4, 128)), dtype=torch.bfloat16, device=device)
    labels = torch.tensor(rng.integers(0, 128, 4), device=device)
    torch.library.opcheck(torch.ops.warpforge.softmax.default, (x,))
    torch.library.opcheck(torch.ops.warpforge.swiglu.default, (x, x, None))
    torch.library.opcheck(torch.ops.warpforge.swiglu.default, (None, None, x))
    torch.library.opcheck(torch.ops.warpforge.cross_entropy.default, (x.float(), labels, "mean", -100, 0.1, True))
    torch.library.opcheck(torch.ops.warpforge.rms_norm_quantize.default, (x.float(), None, None, "mxfp8", 1e-6, True),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.parametrize("fmt", ["mxfp8", "mxfp4", "nvfp4"])
def test_rms_norm_quantize_is_quantize_of_the_norm(rng, fmt):
    # NumPy on the simulator: quantizing rms_norm's f32 output gives the fused op's bytes.
    x = rng.standard_normal((3, 256)).astype(np.float32)
    w = (rng.random(256) + 0.5).astype(np.float32)
    data, scales = warpforge.rms_norm_quantize(x, w, eps=1e-6, format=fmt)
    want_data, want_scales = warpforge.quantize(warpforge.rms_norm(x, w, eps=1e-6), fmt)
    np.testing.assert_array_equal(np.asarray(data).view(np.uint8).reshape(-1), np.asarray(want_data).view(np.uint8).reshape(-1))
    np.testing.assert_array_equal(np.asarray(scales).view(np.uint8).reshape(-1),
                                  np.asarray(want_scales).view(np.uint8).transpose(5, 2, 4, 0, 1, 3).reshape(-1))


@pytest.mark.skipif(not have("jax"), reason="jax is not installed")
def test_jax_softmax_swiglu_cross_entropy(rng):
    import jax
    import jax.numpy as jnp

    import warpforge.jax as wjax

    x = jnp.asarray(rng.standard_normal((4, 200)) * 2, dtype=jnp.float32)
    np.testing.assert_allclose(np.asarray(jax.jit(wjax.softmax)(x)), np.asarray(jax.nn.softmax(x)), rtol=1e-5,
                               atol=1e-7)
    w = jnp.arange(200.0)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda z: (wjax.softmax(z) * w).sum())(x)),
                               np.asarray(jax.grad(lambda z: (jax.nn.softmax(z) * w).sum())(x)), rtol=1e-4, atol=1e-4)
    gate, up = x[:, :100], x[:, 100:]
    got = jax.grad(lambda g, u: (wjax.swiglu(g, u) * w[:100]).sum(), argnums=(0, 1))(gate, up)
    want = jax.grad(lambda g, u: (jax.nn.silu(g) * u * w[:100]).sum(), argnums=(0, 1))(gate, up)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
    labels = jnp.asarray([3, -100, 150, 7])

    def reference(z):  # PyTorch's cross-entropy with label smoothing and an ignore index, in JAX
        valid = labels != -100
        logp = jax.nn.log_softmax(z)
        picked = jnp.take_along_axis(logp, jnp.where(valid, labels, 0)[:, None], axis=1)[:, 0]
        per_row = -(0.9 * picked + 0.1 * logp.mean(-1))
        return jnp.where(valid, per_row, 0.0).sum() / valid.sum()

    loss = jax.jit(lambda z: wjax.cross_entropy(z, labels, label_smoothing=0.1))(x)
    np.testing.assert_allclose(float(loss), float(reference(x)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda z: 2 * wjax.cross_entropy(z, labels, label_smoothing=0.1))(x)),
                               np.asarray(jax.grad(lambda z: 2 * reference(z))(x)), rtol=1e-4, atol=1e-6)


@pytest.mark.gpu
def test_cross_entropy_at_32768_by_128k_needs_no_more_than_the_logits_and_their_gradient(rng):
    # 8 GiB of bf16 logits: the loss and backward allocate their gradient
    # (8 GiB) and a few bytes more (the loss, the op's kilobytes of workspace).
    torch = torch_on("cuda")
    import warpforge.nn

    rows, vocab = 32768, 131072
    logits = torch.randn(rows, vocab, dtype=torch.bfloat16, device="cuda").requires_grad_()
    labels = torch.randint(0, vocab, (rows,), device="cuda")
    loss_fn = warpforge.nn.CrossEntropyLoss()
    loss_fn(logits[:4], labels[:4]).backward()  # compiles (on a small description) and warms the allocator
    logits.grad = None
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = loss_fn(logits, labels)
    loss.backward()
    torch.cuda.synchronize()
    gradient = logits.numel() * logits.element_size()
    assert torch.cuda.max_memory_allocated() - before <= gradient + (64 << 20), \
        f"peak {torch.cuda.max_memory_allocated() - before} bytes beyond the logits; their gradient is {gradient}"
    # The loss itself against PyTorch's (its bf16 log_softmax: 2^-8 relative).
    with torch.no_grad():
        reference = torch.nn.functional.cross_entropy(logits, labels)
    assert abs(float(loss) - float(reference)) <= 2**-7 * abs(float(reference))


def ops_made(rows, monkeypatch):
    """A function giving how many norm, norm_backward and softmax ops the
    torch operators have made since this call: the C++ kernels' counts
    (warpforge._warpforge_torch.row_ops_made()), else the Python kernels'
    calls of their factories (their caches emptied)."""
    names = ("norm", "norm_backward", "softmax")
    if rows.CPP_KERNELS:
        from warpforge import _warpforge_torch

        start = _warpforge_torch.row_ops_made()
        return lambda: [_warpforge_torch.row_ops_made()[n] - start[n] for n in names]
    built = []
    for name in names:
        factory = getattr(rows._warpforge, name + "_op")
        monkeypatch.setattr(rows._warpforge, name + "_op",
                            lambda views, options, _f=factory, _n=name: built.append(_n) or _f(views, options))
    for cache in ("_NORMS", "_NORM_BACKWARDS", "_SOFTMAXES"):
        monkeypatch.setattr(rows, cache, {})
    return lambda: [built.count(n) for n in names]


@pytest.mark.parametrize("device", DEVICES)
def test_a_second_call_of_the_same_shapes_does_not_compile_again(rng, device, monkeypatch):
    """The torch operators build (check_support, compile) an op once per
    problem key (shapes, strides, dtypes, alignment up to 16 bytes, options);
    later calls of that key only run it: one op per key, forward and
    backward, and one more of each for a new shape."""
    torch = torch_on(device)
    import warpforge.torch_rows as rows

    made = ops_made(rows, monkeypatch)

    def step(rows_count):  # (hidden 72: a description no other test makes)
        x = torch.tensor(rng.standard_normal((rows_count, 72)), dtype=torch.float32, device=device).requires_grad_()
        w = torch.tensor(rng.random(72) + 0.5, dtype=torch.float32, device=device).requires_grad_()
        y = rows.rms_norm(x, w, 1e-6)
        y.backward(torch.ones_like(y))
        rows.softmax(x.detach())
        return x, w, y

    x, w, y = step(3)
    assert made() == [1, 1, 1]
    for _ in range(2):
        x, w, y = step(3)  # new data, same key
    assert made() == [1, 1, 1]
    assert torch.isfinite(y).all() and x.grad is not None and w.grad is not None
    step(5)  # a new shape: one more op of each
    assert made() == [2, 2, 2]


def test_the_cpp_kernels_give_the_python_implementations_bits(rng):
    """Built with torch, torch.ops.warpforge's row ops run C++ kernels and
    autograd (python/src/torch/row_kernels.inc): outputs and gradients bit
    for bit those of the Python kernels and autograd that a build without
    _warpforge_torch registers (run here through their autograd.Function),
    on contiguous, transposed and row-strided inputs; so do the direct calls
    that the public functions make (_warpforge_torch.norm, ...), which leave
    the outputs a call does not make (the operator's empty ones) None."""
    torch = cpp_torch_or_skip()
    import warpforge.torch_rows as rows

    assert rows.CPP_KERNELS
    ops = torch.ops.warpforge

    def t(*shape, scale=1.0, dtype=torch.bfloat16):
        return torch.tensor(rng.standard_normal(shape) * scale, dtype=dtype)

    w = torch.tensor(rng.random(80) + 0.5, dtype=torch.bfloat16)
    cases = [  # (operator, its Python autograd.Function, arguments, the outputs a loss reads)
        (ops.norm, rows._EAGER_NORM, (t(5, 2, 80), t(5, 2, 80), w, t(80, dtype=torch.float32), "layer", 1e-5), (0, 1)),
        (ops.norm, rows._EAGER_NORM, (t(6, 80), None, w, None, "rms", 1e-6), (0,)),
        (ops.norm, rows._EAGER_NORM, (t(80, 6).t(), None, None, None, "rms", 1e-6), (0,)),
        (ops.norm, rows._EAGER_NORM, (t(6, 160)[:, :80], None, w, None, "rms", 1e-6), (0,)),
        (ops.softmax, rows._EAGER_SOFTMAX, (t(3, 2, 130, scale=3.0),), (0,)),
        (ops.swiglu, rows._EAGER_SWIGLU, (t(4, 96, scale=2.0), t(4, 96), None), (0,)),
        (ops.swiglu, rows._EAGER_SWIGLU, (None, None, t(4, 192, scale=2.0)), (0,)),
        (ops.cross_entropy, rows._EAGER_CROSS_ENTROPY,
         (t(7, 300, scale=2.0, dtype=torch.float32), torch.tensor(rng.integers(0, 300, 7)), "mean", 2, 0.1, True), (0,)),
    ]
    for op, eager, args, read in cases:
        results = []
        direct = getattr(rows._DIRECT, op._qualified_op_name.split("::")[1])  # the eager calls' C++ entry
        for call in (op, direct, eager.apply):
            leaves = [a.detach().requires_grad_() if isinstance(a, torch.Tensor) and a.is_floating_point()
                      else a for a in args]
            outs = call(*leaves)
            outs = outs if isinstance(outs, tuple) else (outs,)
            weights = torch.Generator().manual_seed(1)
            loss = sum((outs[i].float() * torch.randn(outs[i].shape, generator=weights)).sum() for i in read)
            loss.backward()
            results.append([None if o is None else o.detach() for o in outs] +
                           [leaf.grad for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad])
        for ours, direct_call, python in zip(*results):
            assert torch.equal(ours, python), f"{op}: {ours} != {python}"
            if direct_call is None:  # an output the call does not make: the operator's is empty
                assert python.numel() == 0, f"{op}'s direct call made no {python}"
            else:
                assert torch.equal(direct_call, python), f"{op}'s direct call: {direct_call} != {python}"


def test_a_direct_call_goes_through_the_operator_where_torch_must_see_it(rng):
    """rms_norm's eager call skips torch.ops (_warpforge_torch.norm) only on
    plain tensors and a plain thread: a tensor subclass, a torch function
    mode, a dispatch mode and the profiler each see the operators, forward
    and backward (the direct entry returns NotImplemented there)."""
    torch = cpp_torch_or_skip()
    import warpforge.torch_rows as rows

    x = torch.tensor(rng.standard_normal((4, 64)), dtype=torch.float32)
    w = torch.tensor(rng.random(64) + 0.5, dtype=torch.float32)
    args = (x, None, w, None, "rms", 1e-6)
    y = rows._DIRECT.norm(*args)[0]
    assert torch.equal(y, torch.ops.warpforge.norm(*args)[0])

    class Sub(torch.Tensor):
        pass

    assert rows._DIRECT.norm(x.as_subclass(Sub), None, w, None, "rms", 1e-6) is NotImplemented
    assert type(rows.rms_norm(x.as_subclass(Sub), w)) is Sub

    with recording_mode("function") as functions:
        assert rows._DIRECT.norm(*args) is NotImplemented
        assert torch.equal(rows.rms_norm(x, w), y)
    assert any("warpforge.norm" in f for f in functions.seen), functions.seen
    xg = x.clone().requires_grad_()
    with recording_mode("dispatch") as operators:
        assert rows._DIRECT.norm(*args) is NotImplemented
        rows.rms_norm(xg, w).backward(torch.ones_like(x))
    assert any("warpforge.norm." in f for f in operators.seen), operators.seen
    assert any("warpforge.norm_backward." in f for f in operators.seen), operators.seen
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        rows.rms_norm(xg, w).backward(torch.ones_like(x))
    names = {e.name for e in profile.events()}
    assert {"warpforge::norm", "warpforge::norm_backward"} <= names, names


def test_cross_entropy_without_its_gradient(rng):
    # Logits without requires_grad: the loss alone (no gradient computed or
    # allocated); differentiating a call made with gradient=False refuses.
    torch = torch_on("cpu")
    import warpforge.torch_rows as rows

    logits = torch.tensor(rng.standard_normal((5, 200)) * 2, dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 200, 5))
    loss = rows.cross_entropy(logits, labels)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits, labels), atol=1e-5, rtol=1e-5)
    loss, grad = torch.ops.warpforge.cross_entropy(logits.requires_grad_(), labels, "mean", -100, 0.0, False)
    assert grad.numel() == 0
    with pytest.raises(warpforge.OpsError, match="without its gradient"):
        loss.backward()
