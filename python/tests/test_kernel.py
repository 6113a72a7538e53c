"""Kernels from Python: one call per PTX instruction (checked on the PTX
text), the value-returning forms, runtime loops run on the simulator, and
the refusals (operands, sources, launch arguments), each naming the value."""

import gc

import numpy as np
import pytest

import warpforge


def statements(k):
    body = k.ptx().split("{", 1)[1].rsplit("}", 1)[0]
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith(".reg")]


def test_one_call_one_instruction():
    k = warpforge.Kernel("ops", "sm_80")
    u, s = k.reg("u32"), k.reg("s32")
    _ = u >> 1
    _ = s * 3
    _ = 4 + u
    _ = u < 4
    _ = s.eq(0)
    assert statements(k) == ["shr.u32 %r2, %r0, 1;", "mul.lo.s32 %r3, %r1, 3;", "add.u32 %r4, %r0, 4;",
                             "setp.lt.u32 %p0, %r0, 4;", "setp.eq.s32 %p1, %r1, 0;", "ret;"]


def test_value_returning_forms():
    k = warpforge.Kernel("values", "sm_80")
    f, g, s = k.reg("f32"), k.reg("f32"), k.reg("s32")
    p = k.pred()
    q = k.div(f, g)
    lo = k.min(s, 7)
    pick = k.selp(f, warpforge.f32(1.0), p)
    assert (q.type, lo.type, pick.type) == ("f32", "s32", "f32")
    k.max(s, s, 9)  # the destination-first form is still there
    assert statements(k) == ["div.rn.f32 %f2, %f0, %f1;", "min.s32 %r1, %r0, 7;",
                             "selp.f32 %f3, %f0, 0f3F800000, %p0;", "max.s32 %r0, %r0, 9;", "ret;"]


def test_handles_keep_their_kernel_alive():
    k = warpforge.Kernel("alive", "sm_80")
    r = k.reg("u32", "x")
    del k
    gc.collect()
    assert r.name == "%x"


def test_a_runtime_loop_on_the_simulator():
    # out[i] = sum over j < n of j, for each thread i: a for_range loop.
    k = warpforge.Kernel("sums", "sm_80")
    out, n = k.param_ptr("out", 4), k.param("u32", "n")
    i = k.sreg("tid.x")
    total = k.mov("u32", 0)
    k.for_range(0, n, 1, lambda j: k.add(total, total, j))
    off = k.reg("u64")
    k.mul_wide(off, i, 4)
    k.st("global", "u32", out + off, total)
    result = np.zeros(32, dtype=np.uint32)
    warpforge.Module(k, warpforge.Device.sim()).launch(1, 32, result, 10)
    assert (result == 45).all()


def test_generic_loads_and_stores_on_the_simulator():
    # out[i] = 3 * in[i] through generic addresses (the global pointers made
    # generic with cvta): "generic" writes ld/st without a state-space word.
    k = warpforge.Kernel("generic_copy", "sm_80")
    src, out = k.param_ptr("src", 4), k.param_ptr("out", 4)
    gsrc, gout = k.reg("u64"), k.reg("u64")
    k.cvta_from("global", gsrc, src)
    k.cvta_from("global", gout, out)
    off = k.reg("u64")
    k.mul_wide(off, k.sreg("tid.x"), 4)
    v = k.reg("u32")
    k.ld("generic", "u32", v, gsrc + off)
    k.mul(v, v, 3)
    k.st("generic", "u32", gout + off, v)
    text = statements(k)
    assert any(line.startswith("ld.u32 ") for line in text), text
    assert any(line.startswith("st.u32 ") for line in text), text
    data = np.arange(7, 7 + 32, dtype=np.uint32)
    result = np.full(32, 0xDEADBEEF, dtype=np.uint32)  # poisoned
    warpforge.Module(k, warpforge.Device.sim()).launch(1, 32, data, result)
    assert (result == 3 * data).all()
    with pytest.raises(warpforge.DslError, match="'gobal' is not a state space .* generic"):
        k.ld("gobal", "u32", v, gsrc)
    with pytest.raises(warpforge.DslError, match="generic"):
        k.cvta_to("generic", gsrc, gout)


def test_refusals_name_the_value():
    k = warpforge.Kernel("bad", "sm_80")
    r = k.reg("f32")
    with pytest.raises(warpforge.DslError, match="write the immediate's width"):
        k.add(r, r, 1.5)
    with pytest.raises(warpforge.DslError, match="'f31' is not a PTX type"):
        k.reg("f31")
    with pytest.raises(warpforge.DslError, match="both sources are integer literals"):
        k.div(7, 2)
    with pytest.raises(warpforge.TargetError, match="stmatrix"):
        k.stmatrix(warpforge.at(k.reg("u32")), k.regs("b32", 1))
    with pytest.raises(warpforge.DslError, match="target 'sm_75'"):
        warpforge.Kernel("old", "sm_75")


def test_launch_arguments_are_checked_against_the_parameters():
    k = warpforge.Kernel("args", "sm_80")
    k.param_ptr("x", 4)
    k.param("u32", "n")
    m = warpforge.Module(k, warpforge.Device.sim())
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(warpforge.RuntimeError, match="takes 2 arguments, got 1"):
        m.launch(1, 32, x)
    with pytest.raises(warpforge.RuntimeError, match="'x'"):
        m.launch(1, 32, 5, 4)  # an integer where the pointer goes
    with pytest.raises(warpforge.RuntimeError, match="argument 1 .*'n'.*str"):
        m.launch(1, 32, x, "4")
    with pytest.raises(warpforge.RuntimeError, match="1 to 3 dimensions"):
        m.launch((1, 1, 1, 1), 32, x, 4)


def test_a_tma_copy_through_an_mbarrier_on_the_simulator():
    # One TMA load of a 32 x 8 f32 box at (x, y) = (4, 6) of a 20 x 40 matrix
    # into shared memory, completing on an mbarrier, then copied out 16 bytes a thread.
    box_bytes = 32 * 8 * 4
    k = warpforge.Kernel("tma_copy", "sm_90a")
    tensor_map = k.param_bytes("map", 128, 64)
    out = k.param_ptr("out", 16)
    tile, bar = k.shared("tile", box_bytes, 128), k.shared("bar", 8, 8)
    tid = k.sreg("tid.x")
    leader = tid.eq(0)

    def init():
        k.mbarrier_init(bar, 1)
        k.fence_mbarrier_init()

    k.if_then(leader, init)
    k.bar_sync()
    map_address = k.param_generic_address(tensor_map)

    def load():
        k.mbarrier_arrive_expect_tx(bar, box_bytes)
        k.tma_load(tile, map_address, [4, 6], bar)

    k.if_then(leader, load)
    k.mbarrier_wait_parity(bar, 0)
    chunk = k.regs("b32", 4)
    k.ld("shared", "b32", chunk, k.address_of(tile) + (tid << 4))
    offset = k.reg("u64")
    k.mul_wide(offset, tid, 16)
    k.st("global", "b32", out + offset, chunk)

    x = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)
    got = np.full((8, 32), np.nan, dtype=np.float32)
    sim = warpforge.Device.sim()
    module = warpforge.Module(k, sim)
    module.launch(1, 64, warpforge.tensor_map(x, [32, 8]), got)
    np.testing.assert_array_equal(got, x[6:14, 4:36])
    with pytest.raises(warpforge.RuntimeError, match="stride 1"):
        warpforge.tensor_map(np.zeros((8, 8), np.float32)[:, ::2], [4, 4])


def test_a_scope_shadows_a_name_and_ends_with_its_block():
    # out[i] = 5: the inner %x (7) shadows the outer one only inside the braces.
    k = warpforge.Kernel("scoped", "sm_80")
    out = k.param_ptr("out", 4)
    x = k.reg("u32", "x")
    k.mov(x, 5)
    k.scope(lambda: k.mov(k.reg("u32", "x"), 7))
    off = k.reg("u64")
    k.mul_wide(off, k.sreg("tid.x"), 4)
    k.st("global", "u32", out + off, x)
    body = statements(k)
    assert "{" in body and "}" in body and body.index("mov.u32 %x, 7;") > body.index("{")
    xs = np.full(32, 0xDEAD, dtype=np.uint32)
    warpforge.Module(k, warpforge.Device.sim()).launch((1,), (32,), xs)
    assert (xs == 5).all()
