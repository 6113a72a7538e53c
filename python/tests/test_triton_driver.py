"""warpforge.triton's driver: what a launch passes to the kernel (scalars of
each type, constexprs, num_warps), autotuning, Triton's shared-memory limit
of each target, faults named by the Triton source line, program id and
lane, shared-memory races, the refusals of arguments the simulator cannot
place, and WARPFORGE_TRITON for test suites run unchanged."""

import inspect
import os
import pathlib
import re
import sys
import textwrap

import pytest

from conftest import have, run_python

pytestmark = pytest.mark.skipif(not (have("torch") and have("triton")), reason="torch and triton are not installed")

if have("torch") and have("triton"):
    import torch
    import triton
    import triton.language as tl

    import warpforge
    import warpforge.triton as wt

    @triton.jit
    def scalars_kernel(ints, floats, a, b, c, d):
        tl.store(ints, a)
        tl.store(ints + 1, b)
        tl.store(ints + 2, c.to(tl.int64))
        tl.store(floats, d)

    @triton.jit
    def block_shape_kernel(out, SCALE: tl.constexpr):
        # %ntid.x: the threads of the block the launcher chose for num_warps
        threads = tl.inline_asm_elementwise("mov.u32 $0, %ntid.x;", "=r,r", [tl.arange(0, 64)], dtype=tl.int32,
                                            is_pure=True, pack=1)
        tl.store(out + tl.program_id(0), tl.max(threads, axis=0) * SCALE)

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 128}, num_warps=4)],
                     key=["n"])
    @triton.jit
    def autotuned_scale(x, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offsets, tl.load(x + offsets, mask=offsets < n) * 3, mask=offsets < n)

    @triton.jit
    def unmasked_store(x, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x + offsets, mask=offsets < n)
        tl.store(out + offsets, x * 2)  # the tail of the last block is past the end of `out`

    @triton.jit
    def block_sum(x, out, BLOCK: tl.constexpr):
        tl.store(out, tl.sum(tl.load(x + tl.arange(0, BLOCK)), axis=0))  # warps meet in shared memory

    @triton.jit
    def transpose_tile(x, y, R: tl.constexpr, C: tl.constexpr):
        r = tl.arange(0, R)
        c = tl.arange(0, C)
        tl.store(y + c[:, None] * R + r[None, :], tl.trans(tl.load(x + r[:, None] * C + c[None, :])))

def line_of(fn, text):
    """file:line of the first line of fn's source containing `text`."""
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    for i, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(fn.fn)}:{first + i}"
    raise AssertionError(f"'{text}' not in {fn}")


@pytest.fixture(params=["sm_80", "sm_90a"])
def target(request):
    wt.use_simulator(request.param)
    yield request.param
    wt.reset()


def test_scalars_of_each_type_reach_the_kernel(target):
    ints = torch.full((3, ), -1, dtype=torch.int64)
    floats = torch.full((1, ), float("nan"), dtype=torch.float32)
    # i32 (negative), i64 (past 2^31), i1 (a bool) and fp32
    scalars_kernel[(1, )](ints, floats, -123456, 3 * 2**40 + 5, True, 2.75)
    assert ints.tolist() == [-123456, 3 * 2**40 + 5, 1]
    assert floats.item() == 2.75


@pytest.mark.parametrize("num_warps", [1, 2, 8])
def test_num_warps_and_constexprs_shape_the_launch(target, num_warps):
    out = torch.full((3, ), -1, dtype=torch.int32)
    block_shape_kernel[(3, )](out, SCALE=5, num_warps=num_warps)
    assert out.tolist() == [32 * num_warps * 5] * 3


@pytest.mark.parametrize("autotune", ["all", "first"])
def test_autotuned_kernel_runs_its_configurations(autotune):
    wt.use_simulator("sm_90a", autotune=autotune)
    try:
        x = torch.rand(1000)
        out = torch.full_like(x, float("nan"))
        autotuned_scale.cache.clear()
        autotuned_scale[lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )](x, out, 1000)
        assert torch.equal(out, x * 3)
        timings = autotuned_scale.configs_timings
        assert len(timings) == 2
        if autotune == "all":  # each configuration ran: a time was measured for it
            assert all(t[0] > 0 for t in timings.values())
        else:
            assert autotuned_scale.best_config.kwargs["BLOCK"] == 64
    finally:
        wt.reset()


def test_shared_memory_beyond_the_targets_limit_is_refused(target):
    # The transpose goes through shared memory: a 256x256 f32 tile takes
    # 256 KiB, more than a block gets on an A100 (163 KiB) or an H100 (227
    # KiB); Triton refuses it against the limit of the target the driver
    # stands for.
    limit = {"sm_80": 166912, "sm_90a": 232448}[target]
    x = torch.zeros((256, 256))
    with pytest.raises(triton.runtime.errors.OutOfResources, match=f"shared memory.*Required: 262144.*{limit}"):
        transpose_tile[(1, )](x, torch.empty_like(x), R=256, C=256, num_warps=8)
    tile = torch.rand((128, 256))  # 128 KiB: within both
    out = torch.empty((256, 128))
    transpose_tile[(1, )](tile, out, R=128, C=256, num_warps=8)
    assert torch.equal(out, tile.T)


def test_out_of_bounds_store_names_source_line_program_and_lane(target):
    n = 1000  # the last of 4 programs of 256 elements stores 24 past the end
    x = torch.rand(n)
    out = torch.zeros(n)
    with pytest.raises(wt.KernelFault) as caught:
        unmasked_store[(triton.cdiv(n, 256), )](x, out, n, BLOCK=256)
    fault = caught.value
    assert fault.source.startswith(line_of(unmasked_store, "tl.store(out + offsets") + ":"), fault.source
    assert fault.source_text == "tl.store(out + offsets, x * 2)  # the tail of the last block is past the end of `out`"
    assert fault.program_id == (3, 0, 0)
    assert 0 <= fault.thread < 128 and (fault.warp, fault.lane) == divmod(fault.thread, 32)
    assert "store of" in fault.detail and "outside every allocation" in fault.detail
    assert fault.kernel == "unmasked_store"
    message = str(fault)
    assert message.startswith(f"Triton kernel 'unmasked_store' at {fault.source}, program_id (3, 0, 0), thread "
                              f"{fault.thread} (warp {fault.warp}, lane {fault.lane}): store of")
    assert isinstance(fault, warpforge.SimError)
    assert torch.all(out[:768] == 2 * x[:768])  # the programs before it stored


# Newer LLVM writes an inlined operation's call position into its .loc
# (`inlined_at`); Triton 3.6's writes `.loc 2 293 36` alone, the call
# positions then only in the DWARF .debug_info. Both must lead to the line
# of the kernel.
LINE_INFORMATION = {
    "as_written": lambda ptx: ptx,
    "debug_information_alone": lambda ptx: re.sub(r"^(\s*\.loc\s+\d+\s+\d+\s+\d+),[^\n]*inlined_at[^\n]*$", r"\1",
                                                  ptx, flags=re.M),
}


@pytest.mark.parametrize("line_information", LINE_INFORMATION)
def test_shared_memory_race_is_reported_with_both_accesses(tmp_path, line_information):
    # block_sum's warps add their partial sums through shared memory, a
    # barrier between the writes and the reads. Its PTX without that barrier
    # (as a compiler bug or a hand edit would leave it), given to Triton as
    # an override of the compiled PTX, races.
    wt.use_simulator("sm_80")
    try:
        x = torch.rand(1024)
        out = torch.empty(1)
        compiled = block_sum[(1, )](x, out, BLOCK=1024)
        assert torch.allclose(out, x.sum())
        ptx, barriers = re.subn(r"^\s*bar\.sync\s+0;\s*$", "", compiled.asm["ptx"], flags=re.M)
        assert barriers >= 1
        ptx = LINE_INFORMATION[line_information](ptx)
        assert "inlined_at" not in ptx or line_information == "as_written"
        racy = tmp_path / "block_sum.ptx"
        racy.write_text(ptx)
        with pytest.raises(wt.KernelFault, match="shared-memory race") as caught:
            block_sum[(1, )](x, out, BLOCK=1024, ir_override=str(racy))
        fault = caught.value
        assert fault.source.startswith(line_of(block_sum, "tl.sum(") + ":")
        assert fault.inlined and "standard.py" in fault.inlined  # inside tl.sum's implementation
        assert re.search(r"by warp \d+, and a (read|write) of it by warp \d+ at PTX line \d+ \((@!?%\w+ )?(ld|st)\.shared",
                         fault.detail), fault.detail
    finally:
        wt.reset()


def test_numpy_memory_through_torch_from_numpy(target):
    import numpy as np

    x = np.arange(1000, dtype=np.float32)
    out = np.full(1000, np.nan, dtype=np.float32)
    autotuned_scale[lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )](torch.from_numpy(x), torch.from_numpy(out),
                                                                       1000)
    assert np.array_equal(out, x * 3)


def test_arguments_the_simulator_cannot_place_are_refused(target):
    x = torch.rand(16)

    class Handle:  # a pointer argument to Triton (data_ptr, dtype) whose memory the simulator cannot know
        dtype = torch.float32

        def data_ptr(self):
            return x.data_ptr()

    with pytest.raises(wt.LaunchError, match="argument 'x': a Handle is not a pointer argument the simulator can "
                       "place; pass a CPU torch tensor"):
        autotuned_scale[(1, )](Handle(), x, 16)
    with pytest.raises(wt.LaunchError, match="argument 'out' is a tensor on meta; the simulator runs kernels on CPU"):
        autotuned_scale[(1, )](x, torch.empty(16, device="meta"), 16)


def test_bad_driver_settings_are_refused():
    with pytest.raises(wt.LaunchError, match="target 'sm_75' is not one the simulator's Triton driver compiles "
                       "for; accepted: sm_80, sm_90a"):
        wt.use_simulator("sm_75")
    with pytest.raises(wt.LaunchError, match="autotune='best': accepted all, first"):
        wt.use_simulator("sm_80", autotune="best")


def test_environment_variable_runs_an_unchanged_program_on_the_simulator(tmp_path):
    # The installed package registers the plugin through its entry point; a
    # dist-info folder on the path does the same for the build tree.
    info = tmp_path / "warpforge_triton_plugin-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: warpforge-triton-plugin\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[triton.backends]\nwarpforge = warpforge.triton.backend\n")
    program = textwrap.dedent("""
        import sys, torch
        if "--gpu" in sys.argv:  # Triton's CUDA driver is active where torch sees a GPU
            torch.cuda.is_available = lambda: True
        import triton, triton.language as tl

        @triton.jit
        def double(x, out, n, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(out + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)

        x = torch.arange(10, dtype=torch.float32)
        out = torch.zeros(10)
        double[(1,)](x, out, 10, BLOCK=16)
        assert torch.equal(out, 2 * x), out
        print(triton.runtime.driver.active.target)
    """)
    script = tmp_path / "program.py"  # Triton reads a kernel's source from its file
    script.write_text(program)
    env = dict(os.environ, WARPFORGE_TRITON="sm_80",
               PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    for gpu in ([], ["--gpu"]):  # with a GPU, Triton must still take the simulator, not refuse two drivers
        run = run_python([str(script)] + gpu, env=env)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "sm_80"
    env["WARPFORGE_TRITON"] = "sm_70"
    run = run_python([str(script)], env=env)
    assert run.returncode != 0 and "target 'sm_70' is not one the simulator's Triton driver compiles for" in run.stderr


def test_readme_section_runs(tmp_path):
    # The README's Triton section: its snippet, as a reader runs it (a file:
    # Triton reads kernels' sources).
    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    text = readme.read_text()
    section = text[text.index("\n## Triton kernels on the simulator\n"):]
    section = section[:section.index("\n## ", 1)]
    (snippet, ) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    script = tmp_path / "readme_triton.py"
    script.write_text(snippet)
    run = run_python([str(script)], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert run.returncode == 0, run.stderr


def test_benchmark_prints_both_timings_and_their_ratio(capsys):
    # `python -m warpforge.bench triton ...`, its main called in this
    # process (torch and Triton already imported; the interpreter's run is
    # still a child process of its own).
    from warpforge import bench

    assert bench.main(["triton", "--case", "vector_add", "--repeats", "1"]) == 0
    stdout = capsys.readouterr().out
    row = re.search(r"^\| vector_add \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (yes|no) \|$", stdout, flags=re.M)
    assert row, stdout
    simulator, interpreter, ratio = (float(row.group(i)) for i in (1, 2, 3))
    # The times are printed to 0.1 ms (a fast case's simulator time can be
    # under 1 ms), the ratio to 0.01, each from the unrounded times.
    assert simulator > 0 and interpreter > 0
    low, high = (interpreter - 0.05) / (simulator + 0.05), (interpreter + 0.05) / (simulator - 0.05)
    assert low - 0.005 <= ratio <= high + 0.005
    assert row.group(4) == "yes"  # an f32 addition: the interpreter's bytes are the GPU's
    assert re.search(r"^\| geometric mean of 1 \| \| \| [\d.]+ \| \|$", stdout, flags=re.M), stdout
