"""Hopper kernels from Python as designs of the warp-specialized template
(the C++ tile/warp_specialized.hpp): the template owns the skeleton (thread
roles and their setmaxnreg split, the mbarrier pipeline and its stage walk,
the persistent loop over the tile scheduler, clusters and multicast masks);
a design written in Python gives its configuration and its steps, which the
template calls while it builds the kernel, each emitting into the design's
warpforge.Kernel:

    class MyGemm(warpforge.tile.Design):
        def __init__(self):
            self.kernel = warpforge.Kernel("my_gemm", "sm_90a")
        def config(self): ...            # a WarpSpecializedConfig
        def params(self, ws): ...        # the kernel's parameters
        def work_source(self, ws): ...   # (TileSchedulerOptions, M, N, K, L)
        def load(self, step): ...        # TMA loads of one stage (producer)
        def compute(self, step): ...     # wgmma on one stage; returns its commit groups
        def finish(self, item): ...      # the tile's epilogue

    MyGemm().build()                     # the kernel, its PTX in .ptx()

examples/python/warp_specialized_gemm.py is a whole GEMM written this way.
The pieces a design works with come along: TileSchedulerOptions,
SharedLayout (the shared-memory carve-up), named barriers, warpgroup MMA
k-blocks and descriptors (tile.warpgroup), swizzled chunks, and the layout
algebra (warpforge.layout)."""

from . import _warpforge

_tile = _warpforge.tile

ConsumerSchedule = _tile.ConsumerSchedule
SharedLayout = _tile.SharedLayout
TileSchedulerOptions = _tile.TileSchedulerOptions
WarpSpecializedConfig = _tile.WarpSpecializedConfig
swizzled_chunk = _tile.swizzled_chunk
warpgroup = _tile.warpgroup


class Design:
    """A design of the warp-specialized template. Give `kernel` (a
    warpforge.Kernel for sm_90a) and config, params, work_source, load,
    compute and finish; the other steps are optional. Each step receives the
    template (a WarpSpecialized: smem_base(), tid(), warpgroup(), leader(),
    row_multicast(), column_multicast(), warpgroup_barriers(threads),
    scheduler()) or the step's item and pipeline state."""

    kernel = None

    def _missing(self, step):
        raise _warpforge.TileError(
            f"design {type(self).__name__} has no {step} step: a design gives config, params, "
            "work_source, load, compute and finish")

    def config(self):
        self._missing("config")

    def params(self, ws):
        self._missing("params")

    def work_source(self, ws):
        self._missing("work_source")

    def load(self, step):
        self._missing("load")

    def compute(self, step):
        self._missing("compute")

    def finish(self, item):
        self._missing("finish")

    def prologue(self, ws):
        """Every thread, after the shared-memory base and %tid.x."""

    def initialize(self, ws):
        """Thread 0, before the pipeline's barriers are initialised."""

    def load_item(self, item):
        """The producer, once per item before its k-blocks."""

    def consumer_setup(self, ws):
        """The consumers, after setmaxnreg: accumulators, descriptors."""

    def consumer_teardown(self, ws):
        """The consumers, after their last item."""

    def build(self):
        """Builds the kernel into self.kernel and returns it."""
        _tile.build_warp_specialized(self)
        return self.kernel
