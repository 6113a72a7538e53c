"""torch.ops.warpforge.gemm's C++ kernel (warpforge._warpforge_torch) on CPU
tensors, the simulator: values against a float64 reference (row- and
column-major operands, batched, C with beta, f32 out_dtype), its cache of
compiled ops keyed by description, alpha and beta, its refusals as the
warpforge exceptions of the Python implementation, D's shape as the fake
kernel's, torch.library.opcheck, and warpforge.gemm routing torch tensors
through it. The Python implementation that runs where the kernel was not
built is checked by test_torch_cpp_kernel.py (one fresh interpreter for
every op's)."""

import types

import numpy as np
import pytest

import warpforge
from conftest import cpp_torch_or_skip, have, recording_mode, torch_cuda_or_skip, uniform

pytestmark = pytest.mark.skipif(not have("torch"), reason="torch is not installed")


def bf16(torch, rng, *shape):
    return torch.from_numpy(uniform(rng, *shape)).bfloat16()


def reference(torch, a, b, c=None, alpha=1.0, beta=0.0):
    d = alpha * torch.matmul(a.double(), b.double())
    return d if c is None else d + beta * c.double()


def test_results_against_a_float64_reference(rng):
    torch = cpp_torch_or_skip()
    op = torch.ops.warpforge.gemm
    a = bf16(torch, rng, 40, 24)
    b = bf16(torch, rng, 56, 24).t()  # column-major B: its strides say so
    d = op(a, b, out_dtype=torch.float32)
    assert d.dtype == torch.float32 and d.shape == (40, 56) and d.stride() == (56, 1)
    torch.testing.assert_close(d.double(), reference(torch, a, b), atol=1e-3, rtol=1e-3)
    d = op(a, b)  # D of A's dtype by default
    assert d.dtype == torch.bfloat16
    torch.testing.assert_close(d.double(), reference(torch, a, b), atol=0.05, rtol=0.01)


def test_batched_with_c_and_beta(rng):
    torch = cpp_torch_or_skip()
    a, b = bf16(torch, rng, 3, 16, 32), bf16(torch, rng, 32, 24)  # B shared by the batches
    c = torch.from_numpy(uniform(rng, 3, 16, 24))
    d = torch.ops.warpforge.gemm(a, b, c, alpha=2.0, beta=-1.0, out_dtype=torch.float32)
    assert d.shape == (3, 16, 24) and d.stride() == (16 * 24, 24, 1)
    torch.testing.assert_close(d.double(), reference(torch, a, b, c, 2.0, -1.0), atol=1e-3, rtol=1e-3)
    # B batched, A not: D takes B's batch.
    b3 = bf16(torch, rng, 2, 32, 8)
    d = torch.ops.warpforge.gemm(a[0], b3, out_dtype=torch.float32)
    assert d.shape == (2, 16, 8)
    torch.testing.assert_close(d.double(), reference(torch, a[0], b3), atol=1e-3, rtol=1e-3)


def test_the_python_implementation_gives_the_same_bits(rng):
    torch = cpp_torch_or_skip()
    from warpforge.torch import _gemm

    a, b = bf16(torch, rng, 2, 24, 40), bf16(torch, rng, 2, 40, 16)
    c = bf16(torch, rng, 2, 24, 16)
    for kwargs in ({}, {"out_dtype": torch.float32}, {"alpha": 0.5}):
        assert torch.equal(torch.ops.warpforge.gemm(a, b, **kwargs), _gemm(a, b, **kwargs))
    assert torch.equal(torch.ops.warpforge.gemm(a, b, c, 1.5, 2.0), _gemm(a, b, c, 1.5, 2.0))


def test_each_description_and_alpha_gets_its_own_op(rng):
    # Calls alternating between shapes, layouts, an A that starts 2 bytes into
    # its storage (another base alignment) and alphas that differ past six
    # decimal digits: each against the reference, so that an op cached for
    # another description would show.
    torch = cpp_torch_or_skip()
    a, b = bf16(torch, rng, 32, 64), bf16(torch, rng, 64, 16)
    tall = bf16(torch, rng, 96, 64)
    storage = torch.empty(a.numel() + 1, dtype=torch.bfloat16)
    shifted = storage[1:].view(a.shape)
    shifted.copy_(a)
    assert shifted.data_ptr() % 4 == 2
    cases = [(a, b, 1.0), (tall, b, 1.0), (shifted, b, 1.0), (a.t().contiguous().t(), b, 1.0),
             (a, b, 1e-7), (a, b, 3e-7), (a, b, 1.0), (tall, b, 1.0)]
    for x, y, alpha in cases:
        d = torch.ops.warpforge.gemm(x, y, alpha=alpha, out_dtype=torch.float32)
        torch.testing.assert_close(d.double(), reference(torch, x, y, alpha=alpha), atol=1e-3 * alpha,
                                   rtol=1e-3)


def test_d_has_the_fake_kernels_shape(rng):
    # The C++ kernel computes D's shape itself; the fake kernel takes
    # warpforge.ops.gemm_out_shape's: the two must agree.
    torch = cpp_torch_or_skip()
    from warpforge.ops import gemm_out_shape

    x = torch.from_numpy(uniform(rng, 2 * 8 * 16)).bfloat16()
    for a_shape, b_shape in (((8, 16), (16, 4)), ((2, 8, 16), (16, 4)), ((8, 16), (2, 16, 4)),
                             ((2, 8, 16), (2, 16, 4))):
        a = x[:int(np.prod(a_shape))].view(a_shape)
        b = x[:int(np.prod(b_shape))].view(b_shape)
        d = torch.ops.warpforge.gemm(a, b)
        assert tuple(d.shape) == gemm_out_shape(a_shape, b_shape)
        with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
            fake = torch.ops.warpforge.gemm(mode.from_tensor(a), mode.from_tensor(b))
        assert fake.shape == d.shape and fake.stride() == d.stride() and fake.dtype == d.dtype


def test_refusals_are_the_python_implementations(rng):
    # Each refusal by both kernels: the same warpforge exception, the same words.
    torch = cpp_torch_or_skip()
    from warpforge.torch import _gemm

    a, b = bf16(torch, rng, 16, 32), bf16(torch, rng, 32, 8)
    cases = [
        ((a.float(), b), {}, warpforge.OpsError, "A is f32; A and B must be bf16 or f16"),
        ((a, b.half()), {}, warpforge.OpsError, "A is bf16 but B is f16"),
        ((a, bf16(torch, rng, 16, 8)), {}, warpforge.OpsError, "A has K = 32 but B has K = 16"),
        ((a, b), {"out_dtype": torch.float64}, warpforge.OpsError, "D is f64; D must be f32, bf16 or f16"),
        ((a, b), {"beta": 1.0}, warpforge.OpsError, "beta = 1.000000 but no C was given"),
        ((a, b, bf16(torch, rng, 16, 4)), {"beta": 1.0}, warpforge.OpsError, "C must have D's"),
        ((a[0], b), {}, warpforge.OpsError, r"A bf16\[32\] strides \[1\] has rank 1"),
        ((bf16(torch, rng, 2, 2, 16, 32), b), {}, warpforge.OpsError, "has rank 4"),
        ((bf16(torch, rng, 3, 16, 32), bf16(torch, rng, 2, 32, 8)), {}, warpforge.OpsError,
         "B has L = 2 batches but D has L = 3"),
        ((a, b), {"out_dtype": torch.complex64}, warpforge.RuntimeError, "has no warpforge dtype"),
    ]
    for args, kwargs, error, words in cases:
        for kernel in (torch.ops.warpforge.gemm, _gemm):
            with pytest.raises(error, match=words):
                kernel(*args, **kwargs)
    # A refusal caches nothing: the same description then runs.
    d = torch.ops.warpforge.gemm(a, b, out_dtype=torch.float32)
    torch.testing.assert_close(d.double(), reference(torch, a, b), atol=1e-3, rtol=1e-3)


def test_opcheck_with_c(rng):
    torch = cpp_torch_or_skip()
    a, b = bf16(torch, rng, 2, 16, 32), bf16(torch, rng, 32, 24)
    c = torch.from_numpy(uniform(rng, 2, 16, 24))
    torch.library.opcheck(torch.ops.warpforge.gemm.default, (a, b, c, 2.0, 0.5), {"out_dtype": torch.float32})


def test_warpforge_gemm_routes_torch_tensors_through_the_operator(rng, monkeypatch):
    # The Python path would run on the simulator too: take it away, and
    # warpforge.gemm on torch tensors still runs (through the C++ kernel).
    torch = cpp_torch_or_skip()
    from warpforge import ops

    a, b = bf16(torch, rng, 24, 40), bf16(torch, rng, 40, 8)
    expected = torch.ops.warpforge.gemm(a, b, out_dtype=torch.float32)
    monkeypatch.setattr(ops, "to_tensor", None)
    d = warpforge.gemm(a, b, out_dtype=torch.float32)
    assert torch.equal(d, expected)
    torch.testing.assert_close(d.double(), reference(torch, a, b), atol=1e-3, rtol=1e-3)
    # An explicit stream, or an out_dtype that is no torch dtype, takes the
    # Python path (which then needs to_tensor).
    with pytest.raises(TypeError):
        warpforge.gemm(a, b, out_dtype=np.float32)
    monkeypatch.undo()
    assert torch.equal(warpforge.gemm(a, b, out_dtype=np.float32), expected)


def test_warpforge_gemms_direct_call_is_the_operator_where_torch_need_not_see_it(rng):
    # warpforge.gemm on plain tensors calls the C++ kernel directly
    # (_warpforge_torch.gemm: no torch.ops): the operator's bits; it steps
    # aside (NotImplemented: the operator runs) for an operand autograd would
    # see, a tensor subclass and a dispatch mode, which then sees the operator.
    torch = cpp_torch_or_skip()
    import warpforge.torch as wtorch

    a, b = bf16(torch, rng, 24, 40), bf16(torch, rng, 40, 8)
    direct = wtorch._DIRECT_GEMM
    expected = torch.ops.warpforge.gemm(a, b, out_dtype=torch.float32)
    assert torch.equal(direct(a, b, None, 1.0, 0.0, torch.float32), expected)
    assert torch.equal(warpforge.gemm(a, b, out_dtype=torch.float32), expected)
    leaf = a.clone().requires_grad_()
    assert direct(leaf, b, None, 1.0, 0.0, None) is NotImplemented
    with torch.no_grad():
        assert torch.equal(direct(leaf, b, None, 1.0, 0.0, torch.float32), expected)

    class Sub(torch.Tensor):
        pass

    assert direct(a.as_subclass(Sub), b, None, 1.0, 0.0, None) is NotImplemented

    with recording_mode("dispatch") as operators:
        assert direct(a, b, None, 1.0, 0.0, None) is NotImplemented
        assert torch.equal(warpforge.gemm(a, b, out_dtype=torch.float32), expected)
    assert any(f.startswith("warpforge.gemm") for f in operators.seen), operators.seen


def test_back_to_back_timing_is_one_event_pair_over_the_calls():
    # A stand-in for torch.cuda whose events read a clock the calls advance:
    # back_to_back_ms must give the time per call of the timed calls alone
    # (not the warm-ups), and call each of `calls` in turn.
    from warpforge import bench

    clock = [0.0]
    ran = []

    class Event:
        def __init__(self, enable_timing):
            assert enable_timing

        def record(self):
            self.at = clock[0]

        def elapsed_time(self, other):
            return other.at - self.at

    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event, synchronize=lambda: None))

    def call(index, ms):
        def run():
            ran.append(index)
            clock[0] += ms
        return run

    ms = bench.back_to_back_ms(fake_torch, [call(0, 2.0), call(1, 4.0)], 10)
    assert ms == pytest.approx(3.0)  # five calls of 2 ms and five of 4, over ten
    assert ran == [0, 1, 0] + [0, 1] * 5


@pytest.mark.gpu
def test_the_sweep_table_has_the_back_to_back_columns(capsys):
    torch_cuda_or_skip()
    cpp_torch_or_skip()
    from warpforge import bench

    argv = ["--throughput", "--back-to-back", "--shapes", "16x1024x2048,256x512x1024", "--reps", "20"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "torch.ops.warpforge.gemm, bf16" in out
    rows = [line for line in out.splitlines() if line.startswith("| 16 x") or line.startswith("| 256 x")]
    assert len(rows) == 2
    for row in rows:
        ours, peer, ratio, ours_b2b, peer_b2b, ratio_b2b = (float(cell) for cell in row.strip("|").split("|")[1:])
        assert min(ours, peer, ours_b2b, peer_b2b) > 0
        assert abs(ratio - ours / peer) <= 0.05 / peer * (1 + ours / peer) + 0.001
        assert abs(ratio_b2b - ours_b2b / peer_b2b) <= 0.05 / peer_b2b * (1 + ours_b2b / peer_b2b) + 0.001


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1, 4096, 4096), (200, 136, 72)])
def test_cuda_graph_capture_and_replay_on_a_gpu(rng, m, n, k):
    # The work goes on torch's current stream: a launch on the legacy stream
    # during the capture is an error, and one on any other stream is not
    # captured, so the replay would leave the poisoned D.
    torch = torch_cuda_or_skip()
    cpp_torch_or_skip()
    a = torch.from_numpy(uniform(rng, m, k)).cuda().bfloat16()
    b = torch.from_numpy(uniform(rng, n, k)).cuda().bfloat16().t()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.ops.warpforge.gemm(a, b, out_dtype=torch.float32)  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = torch.ops.warpforge.gemm(a, b, out_dtype=torch.float32)
    expected = reference(torch, a.cpu(), b.cpu())
    for _ in range(2):
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(d.cpu().double(), expected, atol=2e-3, rtol=1e-3)
    # warpforge.gemm on CUDA tensors: the same operator, eagerly.
    torch.testing.assert_close(warpforge.gemm(a, b, out_dtype=torch.float32).cpu().double(), expected, atol=2e-3,
                               rtol=1e-3)


def test_the_sweep_summary_gives_the_back_to_back_mean_and_worst(capsys):
    from warpforge import bench

    rows = [{"shape": "16x8192x8192", "bytes": 1, "warpforge": 20.0, "cuBLAS bf16": 40.0, "warpforge b2b": 44.0,
             "cuBLAS bf16 b2b": 40.0},
            {"shape": "4096x8192x8192", "bytes": 1, "warpforge": 800.0, "cuBLAS bf16": 1000.0,
             "warpforge b2b": 900.0, "cuBLAS bf16 b2b": 1000.0}]
    bench.sweep_summary(rows, "warpforge", 3000.0, back_to_back=True)
    out = capsys.readouterr().out
    assert "Sweep llm, 2 shapes: ours / torch.mm geometric mean 0.632; worst 0.500 at 16x8192x8192." in out
    assert "Back to back, 2 shapes: ours / torch.mm geometric mean 0.995; worst 0.900 at 4096x8192x8192." in out
