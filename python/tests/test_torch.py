"""torch.ops.warpforge: the operators on CPU tensors (the simulator) and,
on a GPU, on CUDA tensors: values against the reference, the fake
implementations against the real outputs, torch.library.opcheck,
torch.compile(fullgraph=True) and CUDA graph capture."""

import numpy as np
import pytest

import warpforge
from conftest import affine_kernel, have, torch_cuda_or_skip, torch_or_skip, uniform

pytestmark = pytest.mark.skipif(not have("torch"), reason="torch is not installed")

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def device_or_skip(device):
    torch = torch_cuda_or_skip() if device == "cuda" else torch_or_skip()
    import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)

    return torch


def problem(rng, torch, device, fmt="mxfp8", m=64, n=32, k=128, l=1):
    x = torch.from_numpy(uniform(rng, m, k, l)).to(device)
    y = torch.from_numpy(uniform(rng, n, k, l)).to(device)
    a, sfa = warpforge.quantize(x, fmt)
    b, sfb = warpforge.quantize(y, fmt)
    return a, b, sfa, sfb


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt,vec", [("mxfp8", 32), ("nvfp4", 16)])
def test_the_operator_matches_the_reference(rng, device, fmt, vec):
    torch = device_or_skip(device)
    a, b, sfa, sfb = problem(rng, torch, device, fmt)
    assert a.device.type == device
    if fmt == "mxfp8":
        assert a.dtype == torch.float8_e4m3fn and sfa.dtype == torch.float8_e8m0fnu
    c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16, sf_vec_size=vec)
    assert c.device.type == device and c.dtype == torch.bfloat16 and c.stride() == (32, 1, 64 * 32)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    torch.testing.assert_close(c.float().cpu(), ref.cpu(), atol=0.01, rtol=0.01)
    assert amax.item() == pytest.approx(ref_amax, rel=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_the_operator_gives_the_bits_of_the_class_api(rng, device):
    torch = device_or_skip(device)
    a, b, sfa, sfb = problem(rng, torch, device)
    c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb)
    c_class = torch.full_like(c, float("nan"))
    amax_class = torch.zeros_like(amax)
    op = warpforge.GemmAmax(a, b, sfa, sfb, c_class, amax_class)
    assert op.check_support()
    op.execute(a, b, sfa, sfb, c_class, amax_class)
    assert torch.equal(c, c_class) and torch.equal(amax, amax_class)


@pytest.mark.parametrize("device", DEVICES)
def test_the_fake_agrees_with_the_cpp_layout(device):
    torch = device_or_skip(device)
    from warpforge.torch import _c_layout

    for c_major in ("m", "n"):
        for name, packed in (("f32", False), ("e2m1", True)):
            shape, strides = warpforge._warpforge.gemm_amax_c_layout(72, 48, 3, c_major, name)
            assert _c_layout(72, 48, 3, c_major, packed) == (tuple(shape), tuple(strides))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(rng, device):
    torch = device_or_skip(device)
    # Every check, on the integer forms the cuDNN frontend also reads: MXFP4
    # codes packed in uint8, e8m0 scales as int8.
    a, b, sfa, sfb = problem(rng, torch, device, fmt="mxfp4", m=32, n=32, k=64)
    a, b, sfa, sfb = a.view(torch.uint8), b.view(torch.uint8), sfa.view(torch.int8), sfb.view(torch.int8)
    torch.library.opcheck(torch.ops.warpforge.gemm_amax.default, (a, b, sfa, sfb), {"c_dtype": torch.bfloat16})
    # The float8 forms: every check but test_schema, whose SchemaCheckMode
    # compares inputs with torch.allclose, which torch has no float8 kernels for.
    a, b, sfa, sfb = problem(rng, torch, device, m=32, n=32, k=64)
    torch.library.opcheck(torch.ops.warpforge.gemm_amax.default, (a, b, sfa, sfb), {"c_dtype": torch.bfloat16},
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))
    x = torch.from_numpy(uniform(rng, 32, 64)).to(device).bfloat16()
    y = torch.from_numpy(uniform(rng, 64, 16)).to(device).bfloat16()
    torch.library.opcheck(torch.ops.warpforge.gemm.default, (x, y), {"out_dtype": torch.float32})


@pytest.mark.gpu
def test_torch_compile_fullgraph(rng):
    torch = device_or_skip("cuda")
    a, b, sfa, sfb = problem(rng, torch, "cuda")

    @torch.compile(fullgraph=True)
    def f(a, b, sfa, sfb):
        c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
        return c.float() * 2, amax

    c2, amax = f(a, b, sfa, sfb)
    c, amax_eager = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
    assert torch.equal(c2, c.float() * 2) and torch.equal(amax, amax_eager)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "fmt,m,n,k,kernel",
    [
        ("mxfp8", 64, 32, 128, "swapped"),
        ("nvfp4", 16, 1024, 8192, "skinny"),
        ("mxfp8", 16, 1024, 8192, "swapped"),
        ("mxfp8", 128, 1024, 2048, "swapped"),
    ],
)
def test_cuda_graph_capture_and_replay(rng, fmt, m, n, k, kernel):
    # This also shows the work goes on torch's current stream: a launch on the
    # legacy stream during the capture is an error, and one on any other stream
    # is not captured, so the replay would leave the poisoned C. At K = 8192
    # both kernels split K through their workspace: replayed twice,
    # its counters must be back at zero after each replay. The swapped kernel
    # is launched to overlap its pre-pass: a programmatic edge in the graph;
    # at 128 x 1024 x 2048 its 4 splits form a cluster.
    torch = device_or_skip("cuda")
    a, b, sfa, sfb = problem(rng, torch, "cuda", fmt=fmt, m=m, n=n, k=k)
    vec = 16 if fmt == "nvfp4" else 32
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)  # compile outside the capture
    torch.cuda.synchronize()
    c0, amax0 = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    op = warpforge.GemmAmax(a, b, sfa, sfb, c0, amax0, sf_vec_size=vec)
    assert op.kernel_name == kernel and op.workspace_bytes > 0, op.describe()
    if k == 8192:
        assert "through the workspace" in op.describe(), op.describe()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    ref, ref_amax = warpforge.reference.gemm_amax(a, b, sfa, sfb, sf_vec_size=vec)
    for _ in range(2):
        c.fill_(float("nan"))
        amax.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(c.cpu(), ref.cpu(), atol=0.01, rtol=0.01)
        assert amax.item() == pytest.approx(ref_amax, rel=1e-6)


@pytest.mark.gpu
def test_a_cuda_tensor_of_the_wrong_dtype_is_refused_before_the_launch(rng):
    torch = device_or_skip("cuda")
    a, b, sfa, sfb = problem(rng, torch, "cuda")
    with pytest.raises(warpforge.OpsError, match="A dtype f32"):
        torch.ops.warpforge.gemm_amax(a.float(), b, sfa, sfb)


@pytest.mark.gpu
def test_cupy_arrays_run_on_the_gpu(rng):
    torch = device_or_skip("cuda")
    if not have("cupy"):
        pytest.skip("CuPy is not installed")
    import cupy

    x = cupy.asarray(uniform(rng, 32, 64)).astype(np.float16)
    y = cupy.asarray(uniform(rng, 64, 16)).astype(np.float16)
    d = warpforge.gemm(x, y, out_dtype=np.float32)
    assert isinstance(d, cupy.ndarray)
    expected = x.get().astype(np.float64) @ y.get().astype(np.float64)
    np.testing.assert_allclose(d.get(), expected, atol=1e-3, rtol=1e-3)
    del torch


@pytest.mark.gpu
def test_the_host_overhead_benchmark_runs(capsys):
    device_or_skip("cuda")
    from warpforge import bench

    assert bench.main(["--calls", "20", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "torch.ops.warpforge.gemm_amax (cached op)" in out and "torch.mm" in out


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["bf16", "nvfp4"])
def test_the_throughput_benchmark_runs_and_plots(capsys, tmp_path, fmt):
    device_or_skip("cuda")
    from warpforge import bench

    argv = ["--throughput", "--format", fmt, "--shapes", "16x1024x2048,256x512x1024", "--reps", "20"]
    if have("matplotlib"):
        argv += ["--plot", str(tmp_path / "run.svg"), "--peak-tflops", "990"]
    assert bench.main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 16 x") or
            line.startswith("| 256 x")]
    assert len(rows) == 2
    for row in rows:
        ours, peer, ratio = (float(cell) for cell in row.strip("|").split("|")[1:])
        # The TFLOP/s cells are rounded to 0.1, the ratio to 0.001.
        assert ours > 0 and peer > 0 and abs(ratio - ours / peer) <= 0.05 / peer * (1 + ours / peer) + 0.001
    if have("matplotlib"):
        assert (tmp_path / "run.svg").read_text().startswith("<?xml")


@pytest.mark.parametrize("device", DEVICES)
def test_a_dsl_kernel_as_an_operator(device):
    torch = device_or_skip(device)
    import warpforge.torch as wtorch

    k = affine_kernel()
    affine = wtorch.kernel(f"affine_{device}", k, 1, 256, [((256,), torch.float32)])
    xs = torch.arange(256, dtype=torch.float32, device=device)
    expected = (2 * xs + 1) * 3
    assert torch.equal(affine([xs]) * 3, expected)
    if device == "cuda":
        compiled = torch.compile(lambda t: affine([t]) * 3, fullgraph=True)
        assert torch.equal(compiled(xs), expected)
