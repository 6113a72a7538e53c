"""warpforge.tile and warpforge.layout: the warp-specialized template's
pieces and the layout algebra from Python, and the refusals a design
written in Python meets (the GEMM built on them is tested in
test_examples.py, on the simulator and against the C++ kernel's bits)."""

import pytest

import warpforge
from warpforge import layout, tile


def test_a_layout_maps_coordinates_colexicographically():
    l = layout.parse("(4,8):(8,1)")
    assert l.size() == 32 and repr(l) == "(4,8):(8,1)"
    assert [l(i) for i in range(32)] == [(i % 4) * 8 + i // 4 for i in range(32)]
    with pytest.raises(warpforge.LayoutError):
        layout.parse("(4,8):(8")


def test_the_128_byte_swizzle_moves_16_byte_chunks_by_the_row():
    s = layout.smem_swizzle(layout.SmemSwizzle.b128, 1)  # on byte offsets
    assert repr(s) == repr(layout.Swizzle(3, 4, 3))
    for row in range(8):
        for chunk in range(8):
            assert s(row * 128 + chunk * 16 + 5) == row * 128 + (chunk ^ row) * 16 + 5


def test_the_shared_layout_carves_aligned_regions():
    smem = tile.SharedLayout()
    assert smem.ring(3000, 2) == 0
    assert smem.buffer(100) == 6000  # after the ring, 16-byte aligned
    assert smem.mbarriers(3) == 6104  # 8-byte aligned, after the buffer
    assert smem.used == 6128 and smem.launch_bytes == 6128 + tile.SharedLayout.kBaseAlignment


class Partial(tile.Design):
    """A design that gives its configuration and parameters only."""

    def __init__(self, consumer_registers=232):
        self.kernel = warpforge.Kernel("partial", "sm_90a")
        self.stages, self.consumer_registers = 2, consumer_registers

    def config(self):
        smem = tile.SharedLayout()
        smem.ring(1024, self.stages)
        c = tile.WarpSpecializedConfig()
        c.stages, c.stage_bytes, c.consumer_registers = self.stages, 1024, self.consumer_registers
        c.full_barriers, c.empty_barriers = smem.mbarriers(self.stages), smem.mbarriers(self.stages)
        return c

    def params(self, ws):
        self.n = self.kernel.param("u32", "n")


def test_a_configuration_out_of_its_rule_is_refused_naming_it():
    with pytest.raises(warpforge.TileError, match=r"'partial': setmaxnreg 230; 0 \(none\) or a multiple of 8"):
        Partial(consumer_registers=230).build()


def test_a_design_without_its_steps_is_refused_naming_the_step():
    with pytest.raises(warpforge.TileError, match="design Partial has no work_source step"):
        Partial().build()


def test_a_work_source_of_the_wrong_shape_is_refused():
    class WrongSource(Partial):
        def work_source(self, ws):
            return tile.TileSchedulerOptions(), self.n

    with pytest.raises(warpforge.TileError, match=r"work_source returns \(TileSchedulerOptions, M, N, K, L\), got 2"):
        WrongSource().build()
