"""warpforge.attention and attention_decode from Python: torch (CPU tensors on
the simulator; CUDA tensors on a GPU), NumPy (the simulator) and JAX (the XLA
FFI, in jax.jit, with jax.grad), against an fp64 reference; the torch
operators' fakes, opcheck, torch.compile(fullgraph=True) and CUDA graph
capture; the arguments scaled_dot_product_attention takes that warpforge
refuses. The C++ tests (tests/ops/attention_*) hold every case to the error
bound of attention_reference.hpp; here O is held to its leading terms
(2·(4u·Σ_j P_ij|v_j| + u·|O|), u = 2^-8 for bf16) and the gradients, whose
bound needs the magnitudes of dS, to a relative norm of 4u (a wiring or
stride error moves them by O(1))."""

import numpy as np
import pytest

import warpforge
from conftest import cpp_torch_or_skip, have, recording_mode, torch_cuda_or_skip, torch_or_skip

U_BF16 = 2.0 ** -8
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def torch_on(device):
    return torch_cuda_or_skip() if device == "cuda" else torch_or_skip()


def reference(q, k, v, d_o=None, scale=None, left=-1, right=-1, top_left=True):
    """fp64 O, lse, the bound's P·|V| and (with d_o) dq, dk, dv of dense
    (batch, heads, seq, d) arrays; grouped-query heads by repetition."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    sq, sk, d = q.shape[2], k.shape[2], q.shape[3]
    scale = 1 / np.sqrt(d) if scale is None else scale
    i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
    diag = i + (0 if top_left else sk - sq)
    seen = np.ones((sq, sk), bool)
    if right >= 0:
        seen &= j <= diag + right
    if left >= 0:
        seen &= j >= diag - left
    s = np.where(seen, scale * q @ np.swapaxes(k, -1, -2), -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    p = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    o = p @ v
    lse = np.where(total[..., 0] > 0, m[..., 0] + np.log(np.where(total > 0, total, 1))[..., 0], -np.inf)
    r = dict(o=o, lse=lse, pv=p @ np.abs(v))
    if d_o is not None:
        d_o = np.asarray(d_o, np.float64)
        dp = d_o @ np.swapaxes(v, -1, -2)
        ds = p * (dp - (d_o * o).sum(-1, keepdims=True))
        dk = scale * np.swapaxes(ds, -1, -2) @ q
        dv = np.swapaxes(p, -1, -2) @ d_o
        shape = (q.shape[0], k.shape[1] // group, group, sk, d)
        r.update(dq=scale * ds @ k, dk=dk.reshape(shape).sum(2), dv=dv.reshape(shape).sum(2))
    return r


def assert_o_within_bound(got, want):
    bound = 2 * (4 * U_BF16 * want["pv"] + U_BF16 * np.abs(want["o"]))
    err = np.abs(np.asarray(got, np.float64) - want["o"])
    assert np.all(err <= bound), f"worst {np.max(err / np.maximum(bound, 1e-300)):.3g} of the bound"


def assert_close_norm(got, want, what):
    got = np.asarray(got, np.float64)
    assert np.linalg.norm(got - want) <= 4 * U_BF16 * np.linalg.norm(want), what


def torch_inputs(torch, shape_q, shape_kv, seed=0, device="cpu", requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    make = lambda shape: torch.randn(shape, generator=g).to(torch.bfloat16).to(device)  # noqa: E731
    q, k, v = make(shape_q), make(shape_kv), make(shape_kv)
    for x in (q, k, v):
        x.requires_grad_(requires_grad)
    return q, k, v


def as_np(t):
    return t.detach().float().cpu().numpy()


# ---- torch on the simulator ----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [
    dict(is_causal=True),
    dict(window=(5, 3)),
    dict(is_causal=True, alignment="bottom_right"),
    dict(is_causal=True, enable_gqa=True, heads_kv=1),
    dict(scale=0.3),
])
def test_torch_forward_and_backward_match_fp64(case, device):
    torch = torch_on(device)
    case = dict(case)
    heads_kv = case.pop("heads_kv", 2)
    q, k, v = torch_inputs(torch, (1, 2, 37, 64), (1, heads_kv, 45, 64), device=device, requires_grad=True)
    out = warpforge.attention(q, k, v, **case)
    assert out.shape == q.shape and out.dtype == torch.bfloat16 and out.device.type == device
    d_o = torch.randn(out.shape, generator=torch.Generator().manual_seed(9)).to(torch.bfloat16).to(device)
    out.backward(d_o)
    window = case.get("window", (-1, -1))
    right = 0 if case.get("is_causal") else window[1]
    want = reference(as_np(q), as_np(k), as_np(v), as_np(d_o), case.get("scale"), window[0], right,
                     case.get("alignment", "top_left") == "top_left")
    assert_o_within_bound(as_np(out), want)
    for name, x in (("dq", q), ("dk", k), ("dv", v)):
        assert_close_norm(as_np(x.grad), want[name], name)


def test_torch_sequence_major_views_and_lse():
    torch = torch_or_skip()
    # (batch, seq, heads, d) memory passed as its (batch, heads, seq, d) view.
    q, k, v = (x.transpose(1, 2) for x in torch_inputs(torch, (2, 33, 2, 64), (2, 50, 2, 64)))
    out, lse = warpforge.attention(q, k, v, return_lse=True)
    assert lse.shape == (2, 2, 33) and lse.dtype == torch.float32
    # O in q's layout, as the fake kernel's torch.empty_like(q) says (the
    # C++ kernel takes it from the allocator itself), lse contiguous.
    assert out.stride() == torch.empty_like(q).stride() and lse.is_contiguous()
    through = torch.ops.warpforge.attention_forward(q, k, v, None, None, 0, 0, None, -1, -1, True)
    assert through[0].stride() == out.stride() and torch.equal(through[0], out)
    want = reference(as_np(q), as_np(k), as_np(v))
    assert_o_within_bound(as_np(out), want)
    np.testing.assert_allclose(lse.numpy(), want["lse"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_varlen(device):
    torch = torch_on(device)
    cu_q = torch.tensor([0, 5, 35], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 9, 39], dtype=torch.int32, device=device)
    q, k, v = torch_inputs(torch, (35, 2, 64), (39, 2, 64), device=device)
    out = warpforge.attention(q, k, v, is_causal=True, alignment="bottom_right", cu_seqlens_q=cu_q,
                              cu_seqlens_k=cu_k, max_seqlen_q=30, max_seqlen_k=30)
    for b in range(2):
        rows_q, rows_k = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        part = lambda x, rows: as_np(x[rows]).transpose(1, 0, 2)[None]  # noqa: E731
        want = reference(part(q, rows_q), part(k, rows_k), part(v, rows_k), right=0, top_left=False)
        assert_o_within_bound(as_np(out[rows_q]).transpose(1, 0, 2)[None], want)


@pytest.mark.parametrize("kwargs, message", [
    (dict(attn_mask="mask"), "attn_mask"),
    (dict(dropout_p=0.1), "dropout_p = 0.1"),
    (dict(heads_kv=1), "enable_gqa=True"),
    (dict(is_causal=True, window=(4, 2)), "causal means right = 0"),
    (dict(head_dim=96), "head_dim = 96; attention takes 64, 128 or 256"),
])
def test_refusals_name_the_value(kwargs, message):
    torch = torch_or_skip()
    kwargs = dict(kwargs)
    heads_kv, d = kwargs.pop("heads_kv", 2), kwargs.pop("head_dim", 64)
    q, k, v = torch_inputs(torch, (1, 2, 16, d), (1, heads_kv, 16, d))
    if kwargs.get("attn_mask") == "mask":
        kwargs["attn_mask"] = torch.ones(16, 16, dtype=torch.bool)
    with pytest.raises(warpforge.OpsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        warpforge.attention(q, k, v, **kwargs)


def test_torch_operators_pass_opcheck_and_compile():
    torch = torch_or_skip()
    import warpforge.torch  # noqa: F401

    q, k, v = torch_inputs(torch, (1, 2, 24, 64), (1, 2, 24, 64), requires_grad=True)
    args = (q, k, v, None, None, 0, 0, None, -1, 0, True)
    torch.library.opcheck(torch.ops.warpforge.attention_forward, args,
                          test_utils=("test_schema", "test_faketensor", "test_autograd_registration"))
    out, lse = torch.ops.warpforge.attention_forward(*args)
    d_o = torch.randn_like(out)
    torch.library.opcheck(torch.ops.warpforge.attention_backward,
                          (d_o, q.detach(), k.detach(), v.detach(), out.detach(), lse, None, None, 0, 0, None, -1, 0,
                           True), test_utils=("test_schema", "test_faketensor"))

    def step(q, k, v):
        return warpforge.attention(q, k, v, is_causal=True).float().square().sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    loss = compiled(q, k, v)
    loss.backward()
    eager_q = q.detach().clone().requires_grad_()
    step(eager_q, k.detach(), v.detach()).backward()
    assert torch.equal(q.grad, eager_q.grad)


def test_torch_deterministic_backward_gives_the_same_bits():
    torch = torch_or_skip()
    grads = []
    for _ in range(2):
        q, k, v = torch_inputs(torch, (1, 2, 40, 64), (1, 1, 70, 64), requires_grad=True)
        warpforge.attention(q, k, v, enable_gqa=True, deterministic=True).float().sum().backward()
        grads.append([x.grad.clone() for x in (q, k, v)])
    for a, b in zip(*grads):
        assert torch.equal(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_decode_over_pages_matches_fp64(device):
    torch = torch_on(device)
    g = torch.Generator().manual_seed(3)
    batch, heads_q, heads_kv, tokens, d, page = 2, 4, 2, 2, 64, 16
    lens = [40, 23]
    pages = torch.randperm(8, generator=g).to(torch.int32)
    table = pages.reshape(2, 4)
    k_cache = torch.randn(8, page, heads_kv, d, generator=g).to(torch.bfloat16)
    v_cache = torch.randn(8, page, heads_kv, d, generator=g).to(torch.bfloat16)
    q = torch.randn(batch, heads_q, tokens, d, generator=g).to(torch.bfloat16)
    out, lse = warpforge.attention_decode(*(x.to(device) for x in (q, k_cache, v_cache, table,
                                                                   torch.tensor(lens, dtype=torch.int32))),
                                          return_lse=True)
    out, lse = out.cpu(), lse.cpu()
    for b in range(batch):
        keys = torch.cat([k_cache[int(table[b, j // page]), j % page][None] for j in range(lens[b])])
        vals = torch.cat([v_cache[int(table[b, j // page]), j % page][None] for j in range(lens[b])])
        want = reference(as_np(q[b:b + 1]), as_np(keys.transpose(0, 1)[None]), as_np(vals.transpose(0, 1)[None]),
                         right=0, top_left=False)
        assert_o_within_bound(as_np(out[b:b + 1]), want)
        np.testing.assert_allclose(lse[b].numpy(), want["lse"][0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_forward_and_backward_second_call_do_not_build_the_ops_again(device, monkeypatch):
    torch = torch_on(device)
    from warpforge import _warpforge

    made = []
    make = _warpforge.attention_op
    monkeypatch.setattr(_warpforge, "attention_op", lambda *a: made.append(a[4]) or make(*a))
    results = []
    for seed in range(3):  # new tensors each call: the same description
        g = torch.Generator().manual_seed(seed)
        q, k, v = (torch.randn(1, 2, 24, 64, generator=g).to(torch.bfloat16).to(device).requires_grad_()
                   for _ in range(3))
        out = warpforge.attention(q, k, v, window=(5, 3))
        out.float().sum().backward()
        results.append((out.detach().cpu(), q.grad.cpu()))
    assert made.count(False) <= 1 and made.count(True) <= 1  # 0 when an earlier test built them
    assert not torch.equal(results[0][0], results[1][0]) and not torch.equal(results[0][1], results[1][1])


@pytest.mark.parametrize("device", DEVICES)
def test_torch_forward_is_the_cpp_kernel_where_built(device):
    # Built with torch: attention_forward's kernels and autograd and
    # attention_backward's kernels are _warpforge_torch's (no Python in a
    # call), with the Python kernels' bits:
    # (b, s, h, d) inputs passed transposed (no copy: O keeps their layout),
    # grouped-query heads with a window, and a varlen batch; the gradients
    # are attention_backward's on the saved tensors (deterministic: the same
    # bits on a GPU too).
    torch = cpp_torch_or_skip() if device == "cpu" else torch_cuda_or_skip()
    from warpforge import torch_attention as ta

    assert ta.CPP_FORWARD and ta.CPP_BACKWARD
    q, k, v = (x.transpose(1, 2).requires_grad_() for x in torch_inputs(torch, (1, 40, 4, 64), (1, 56, 2, 64),
                                                                         seed=5, device=device))
    out, lse = warpforge.attention(q, k, v, window=(9, 0), enable_gqa=True, return_lse=True, deterministic=True)
    want = ta._forward(q.detach(), k.detach(), v.detach(), None, None, 0, 0, None, 9, 0, True)
    assert torch.equal(out, want[0]) and torch.equal(lse, want[1]) and out.stride() == q.stride()
    d_o = torch.randn_like(out)
    out.backward(d_o)
    grads = ta._backward(d_o, q.detach(), k.detach(), v.detach(), out.detach(), lse, None, None, 0, 0, None, 9, 0,
                         True, deterministic=True)
    assert all(torch.equal(x.grad, g) for x, g in zip((q, k, v), grads))
    cu = torch.tensor([0, 17, 40], dtype=torch.int32, device=device)
    q, k, v = torch_inputs(torch, (40, 2, 128), (40, 2, 128), seed=6, device=device)
    out, lse = warpforge.attention(q, k, v, is_causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=23,
                                   max_seqlen_k=23, return_lse=True)
    want = ta._forward(q, k, v, cu, cu, 23, 23, None, -1, 0, True)
    assert torch.equal(out, want[0]) and torch.equal(lse, want[1]) and lse.shape == (2, 40)


def test_torch_forwards_direct_call_is_the_operator_where_torch_need_not_see_it():
    # warpforge.attention's eager call runs the operator's autograd kernel
    # from C++ (_warpforge_torch.attention_forward, no torch.ops): the
    # operator's bits; a dispatch mode sees the operator (NotImplemented there).
    torch = cpp_torch_or_skip()
    from warpforge import torch_attention as ta

    q, k, v = torch_inputs(torch, (1, 2, 24, 64), (1, 2, 24, 64), seed=9, device="cpu")
    args = (q, k, v, None, None, 0, 0, None, -1, 0, True, False, "auto")
    direct = ta._CPP_FORWARD(*args)
    through = torch.ops.warpforge.attention_forward.default(*args)
    assert torch.equal(direct[0], through[0]) and torch.equal(direct[1], through[1])
    with recording_mode("dispatch") as operators:
        assert ta._CPP_FORWARD(*args) is NotImplemented
        out = warpforge.attention(q, k, v, is_causal=True)
    assert "warpforge.attention_forward.default" in operators.seen, operators.seen
    assert torch.equal(out, direct[0])


@pytest.mark.parametrize("device", DEVICES)
def test_torch_decode_second_call_does_not_build_the_op_again(device, monkeypatch):
    torch = torch_on(device)
    from warpforge import _warpforge, torch_attention

    made = []
    make = _warpforge.attention_decode_op
    monkeypatch.setattr(_warpforge, "attention_decode_op", lambda *a: made.append(1) or make(*a))
    monkeypatch.setattr(torch_attention, "_CPP_DECODE", None)  # the Python kernel's cache (the C++ call's: below)
    g = torch.Generator().manual_seed(5)
    k_cache, v_cache = (torch.randn(2, 16, 1, 64, generator=g).to(torch.bfloat16).to(device) for _ in range(2))
    table = torch.tensor([[1, 0]], dtype=torch.int32).to(device)
    lens = torch.tensor([29], dtype=torch.int32).to(device)
    outs = []
    for _ in range(3):  # new q, o, lse and workspace each call: the same description
        q = torch.randn(1, 2, 1, 64, generator=g).to(torch.bfloat16).to(device)
        outs.append((q, warpforge.attention_decode(q, k_cache, v_cache, table, lens, window_left=7)))
    assert len(made) <= 1  # 0 when an earlier test built this description
    assert any(k[-2] == 0 and k[-3] == 7 for k in torch_attention._DECODE)  # (.., window_left, splits, with_lse)
    # each call computed its own q's rows (the addresses are the call's)
    again = warpforge.attention_decode(outs[0][0], k_cache, v_cache, table, lens, window_left=7)
    assert torch.equal(again.cpu(), outs[0][1].cpu())
    assert not torch.equal(outs[0][1].cpu(), outs[1][1].cpu())


def decode_inputs(torch, device, seed=6, batch=1, heads_q=4, heads_kv=2, page=16, pages=4, lens=(37,)):
    """A small paged decode problem (one query token), pages in a shuffled order."""
    g = torch.Generator().manual_seed(seed)
    k_cache, v_cache = (torch.randn(batch * pages, page, heads_kv, 64, generator=g).to(torch.bfloat16).to(device)
                        for _ in range(2))
    table = torch.randperm(batch * pages, generator=g).to(torch.int32).reshape(batch, pages).to(device)
    q = torch.randn(batch, heads_q, 1, 64, generator=g).to(torch.bfloat16).to(device)
    return q, k_cache, v_cache, table, torch.tensor(lens, dtype=torch.int32).to(device)


def test_torch_decode_operator_passes_opcheck_and_compile():
    torch = torch_or_skip()
    import warpforge.torch  # noqa: F401

    x = decode_inputs(torch, "cpu")
    torch.library.opcheck(torch.ops.warpforge.attention_decode, x,
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"))
    compiled = torch.compile(lambda *a: warpforge.attention_decode(*a).float() * 2, fullgraph=True,
                             backend="aot_eager")
    assert torch.equal(compiled(*x), warpforge.attention_decode(*x).float() * 2)


def test_torch_decode_direct_path_gives_the_operators_bits_and_modes_see_the_operator():
    """Plain eager tensors skip torch's dispatcher (its host cost); the
    result is the operator's, and a dispatch mode still sees the operator."""
    torch = torch_or_skip()
    from torch.utils._python_dispatch import TorchDispatchMode

    x = decode_inputs(torch, "cpu", seed=8)
    direct = warpforge.attention_decode(*x, return_lse=True)
    through = torch.ops.warpforge.attention_decode(*x)
    assert torch.equal(direct[0], through[0]) and torch.equal(direct[1], through[1])

    class Seen(TorchDispatchMode):
        ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Seen.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen():
        moded = warpforge.attention_decode(*x)
    assert "warpforge.attention_decode.default" in Seen.ops
    assert torch.equal(moded, direct[0])


def test_torch_decode_cpp_direct_call_runs_each_calls_tensors():
    """The C++ direct call (warpforge._warpforge_torch.attention_decode:
    one op a description, kept) on each call's own tensors: the operator's
    bits for each of three q, and no lse where none is asked for."""
    torch = torch_or_skip()
    from warpforge import torch_attention

    if not torch_attention._CPP_DECODE:
        pytest.skip("warpforge._warpforge_torch was not built")
    x = decode_inputs(torch, "cpu", seed=9)
    for seed in (1, 2, 3):
        q = torch.randn(x[0].shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)
        direct = torch_attention._CPP_DECODE(q, *x[1:], None, True, -1, 0, True)
        through = torch.ops.warpforge.attention_decode(q, *x[1:])
        assert torch.equal(direct[0], through[0]) and torch.equal(direct[1], through[1])
    out, lse = torch_attention._CPP_DECODE(q, *x[1:], None, True, -1, 0, False)
    assert lse is None and torch.equal(out, through[0])
    # Where torch must see the operator (a mode, a tensor subclass, a tensor
    # missing) the direct call declines: NotImplemented, the caller's cue.
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Passing():
        assert torch_attention._CPP_DECODE(q, *x[1:], None, True, -1, 0, False) is NotImplemented
    class Subclass(torch.Tensor):
        pass

    assert torch_attention._CPP_DECODE(q.as_subclass(Subclass), *x[1:], None, True, -1, 0, False) is NotImplemented
    assert torch_attention._CPP_DECODE(None, *x[1:], None, True, -1, 0, False) is NotImplemented


@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_decode():
    """The splits' workspace is torch's in the graph's pool under capture
    (the one an eager call keeps for the stream is not the graph's)."""
    torch = torch_cuda_or_skip()
    q, k_cache, v_cache, table, lens = decode_inputs(torch, "cuda", batch=2, pages=64, lens=(1000, 517))
    eager = warpforge.attention_decode(q, k_cache, v_cache, table, lens, splits=8)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        warpforge.attention_decode(q, k_cache, v_cache, table, lens, splits=8)  # compiles before capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = warpforge.attention_decode(q, k_cache, v_cache, table, lens, splits=8)
    q.copy_(torch.randn_like(q))
    graph.replay()
    eager_new = warpforge.attention_decode(q, k_cache, v_cache, table, lens, splits=8)  # shares no workspace
    torch.cuda.synchronize()
    assert torch.equal(captured, eager_new) and not torch.equal(captured, eager)


# ---- NumPy (the simulator) and JAX ---------------------------------------------------------

def test_numpy_runs_on_the_simulator():
    if not have("ml_dtypes"):
        pytest.skip("ml_dtypes is not installed")
    import ml_dtypes

    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal(s).astype(ml_dtypes.bfloat16) for s in ((1, 2, 20, 64), (1, 2, 30, 64),
                                                                            (1, 2, 30, 64)))
    out = warpforge.attention(q, k, v, is_causal=True)
    assert isinstance(out, np.ndarray) and out.dtype == ml_dtypes.bfloat16
    assert_o_within_bound(out.astype(np.float64), reference(q, k, v, right=0))


def test_jax_forward_and_grad_in_jit():
    if not have("jax"):
        pytest.skip("JAX is not installed")
    import jax
    import jax.numpy as jnp

    import warpforge.jax as wjax

    keys = jax.random.split(jax.random.PRNGKey(5), 4)
    q = jax.random.normal(keys[0], (1, 2, 30, 64)).astype(jnp.bfloat16)
    k, v = (jax.random.normal(x, (1, 1, 30, 64)).astype(jnp.bfloat16) for x in keys[1:3])
    d_o = jax.random.normal(keys[3], (1, 2, 30, 64)).astype(jnp.bfloat16)
    f = jax.jit(lambda q, k, v: wjax.attention(q, k, v, is_causal=True, enable_gqa=True))
    out = f(q, k, v)
    want = reference(*(np.asarray(x, np.float64) for x in (q, k, v, d_o)), right=0)
    assert_o_within_bound(np.asarray(out, np.float64), want)
    loss = lambda q, k, v: jnp.sum(f(q, k, v).astype(jnp.float32) * d_o.astype(jnp.float32))  # noqa: E731
    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(q, k, v)
    for name, g in zip(("dq", "dk", "dv"), grads):
        assert_close_norm(np.asarray(g, np.float64), want[name], name)


# ---- a GPU ------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_forward_and_backward():
    torch = torch_cuda_or_skip()
    q, k, v = torch_inputs(torch, (2, 4, 256, 128), (2, 4, 256, 128), device="cuda", requires_grad=True)

    def step():
        out = warpforge.attention(q, k, v, is_causal=True)
        out.float().square().sum().backward()
        return out

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        step()  # compiles the kernels and warms the allocator before capture
    torch.cuda.current_stream().wait_stream(stream)
    for x in (q, k, v):
        x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    graph.replay()
    torch.cuda.synchronize()
    want = reference(as_np(q), as_np(k), as_np(v), right=0)
    assert_o_within_bound(as_np(captured), want)


@pytest.mark.gpu
def test_llama_layer_trains_a_step_under_compile_as_with_sdpa():
    """A Llama-class layer's attention (32 heads, 8 KV heads, head_dim 128,
    sequence 4k): one training step under torch.compile with warpforge's op
    in place of SDPA; the projections' gradients against SDPA's (bf16, and
    fp64 as the truth)."""
    torch = torch_cuda_or_skip()
    import torch.nn.functional as F

    torch.manual_seed(0)
    hidden, heads, kv_heads, d, seq = 4096, 32, 8, 128, 4096
    x = (0.5 * torch.randn(1, seq, hidden, device="cuda")).to(torch.bfloat16)
    weights = [torch.nn.Parameter((torch.randn(n * d, hidden, device="cuda") / hidden ** 0.5).to(torch.bfloat16))
               for n in (heads, kv_heads, kv_heads)]

    def layer(x, wq, wk, wv, attend):
        q = (x @ wq.t()).view(1, seq, heads, d).transpose(1, 2)
        k = (x @ wk.t()).view(1, seq, kv_heads, d).transpose(1, 2)
        v = (x @ wv.t()).view(1, seq, kv_heads, d).transpose(1, 2)
        return attend(q, k, v).transpose(1, 2).reshape(1, seq, heads * d)

    def grads(attend, dtype, compiled):
        ws = [w.detach().to(dtype).requires_grad_() for w in weights]
        step = lambda x, *w: layer(x, *w, attend).float().square().mean()  # noqa: E731
        (torch.compile(step, fullgraph=True) if compiled else step)(x.to(dtype), *ws).backward()
        return [w.grad.double() for w in ws]

    ours = grads(lambda q, k, v: warpforge.attention(q, k, v, is_causal=True, enable_gqa=True), torch.bfloat16, True)
    sdpa = grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                 torch.bfloat16, False)
    exact = grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                  torch.float64, False)
    # As close to the fp64 gradients as SDPA's own bf16 step (the
    # projections' bf16 products weigh in both), within twice its error.
    for name, g, s, e in zip(("wq", "wk", "wv"), ours, sdpa, exact):
        ours_error, sdpa_error = torch.linalg.norm(g - e), torch.linalg.norm(s - e)
        assert ours_error <= 2 * sdpa_error + U_BF16 * torch.linalg.norm(e), (name, float(ours_error), float(sdpa_error))


@pytest.mark.parametrize("device", DEVICES)
def test_the_example_swaps_sdpa_for_warpforge(device):
    torch_on(device)
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "attention.py"
    spec = importlib.util.spec_from_file_location("attention_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out_error, grad_error = example.run(device)
    assert out_error < 2 ** -8 and grad_error < 2 ** -6
