"""A pipelined, warp-specialized Hopper GEMM written in Python on the
warp-specialized template (warpforge.tile.Design; C++ tile/warp_specialized.hpp):
D = alpha·A·B for bf16 A (M, K) row-major, B given as Bᵀ (N, K) row-major
(K-major, as ops::Gemm's `nt` layout), bf16 D (M, N), batches L.

The template owns the skeleton: a producer warpgroup whose first thread
loads, two consumer warpgroups that share each 128-row tile (64 rows each),
their setmaxnreg split, the mbarrier pipeline of `stages` slots and its
walk, the persistent loop over the tile scheduler in grouped order, and,
with a cluster of two CTAs along M, the multicast of the B tile they share.
This design supplies the steps, as ops::Gemm's C++ design does
(src/ops/gemm/sm90a_kernel.cpp, whose kernel this one mirrors for the same
configuration): load (A's and B's tiles of a k-block by TMA), compute (four
k16 wgmma steps a k-block), finish (alpha·acc to bf16 through stmatrix into
128-byte-swizzled shared memory, stored by TMA).

    python examples/python/warp_specialized_gemm.py           # the simulator, a small problem
    python examples/python/warp_specialized_gemm.py --torch   # an H100/H200, torch tensors

The run checks D against an fp32 NumPy reference (inputs 0.1·N(0, 1) in
bf16, D poisoned with NaN first, atol = rtol = 2e-2 for bf16 D). For each of
CONFIGS, ptxas makes the same machine code of this kernel and of ops::Gemm's
(scripts/compare-python-gemm-ptx.sh), python/tests/test_examples.py checks
their outputs bit for bit on the simulator, and scripts/gpu-house-ir.sh
times both (an H200: 0.988-1.021x, docs/PERFORMANCE.md)."""

import sys

import ml_dtypes
import numpy as np

import warpforge
from warpforge import tile

ROW = 128  # bytes of one 128-byte-swizzled row: 64 bf16 of K
TILE_K = 64  # K per k-block (pipeline stage)
ATOM = 8 * ROW  # 8 rows: the swizzle pattern's repeat, the descriptors' SBO
THREADS = 3 * 128  # two consumer warpgroups, then the producer warpgroup

# ops::Gemm's sm90a configurations (as GemmConfig::describe() spells them)
# that this design builds, with the epilogue ops::Gemm gives each on an
# H100/H200: the whole tile, or 128-column chunks where a whole tile's buffer
# would leave four stages no room. The first is ops::Gemm's own choice for
# 4096³ and 8192³ on 132 SMs.
CONFIGS = {
    "128x256x64 s3 w2x1 c1x1": dict(tile_n=256, stages=3, epilogue_cols=0, cluster_m=1),
    "128x256x64 s4 w2x1 c1x1": dict(tile_n=256, stages=4, epilogue_cols=128, cluster_m=1),
    "128x256x64 s4 w2x1 c2x1": dict(tile_n=256, stages=4, epilogue_cols=128, cluster_m=2),
}


class Gemm(tile.Design):
    """tile_n columns by 128 rows a tile, `stages` pipeline slots, epilogue
    chunks of `epilogue_cols` columns (0: the whole tile), a cluster of
    cluster_m CTAs along M sharing (multicasting) the B tile."""

    def __init__(self, tile_n=256, stages=4, epilogue_cols=128, cluster_m=2, name=None):
        if tile_n % 64 or not 64 <= tile_n <= 256 or cluster_m not in (1, 2) or epilogue_cols % 64:
            raise ValueError(f"tile_n {tile_n}, cluster_m {cluster_m}, epilogue_cols {epilogue_cols}: "
                             "tile_n a multiple of 64 up to 256, cluster_m 1 or 2, epilogue_cols a "
                             "multiple of 64 (0: the whole tile)")
        self.tile_m, self.tile_n, self.stages, self.cluster_m = 128, tile_n, stages, cluster_m
        self.width = epilogue_cols or tile_n  # D columns per epilogue chunk
        self.kernel = warpforge.Kernel(name or f"gemm_sm90a_python_{tile_n}_s{stages}_c{cluster_m}", "sm_90a")
        smem = tile.SharedLayout()
        self.a_stage, self.b_stage = self.tile_m * TILE_K * 2, tile_n * TILE_K * 2
        self.a_ring = smem.ring(self.a_stage, stages)
        self.b_ring = smem.ring(self.b_stage, stages)
        self.per_consumer = 64 * self.width * 2  # a warpgroup's 64 rows of a chunk, bf16
        self.epilogue = smem.buffer(2 * self.per_consumer, tile.SharedLayout.kBaseAlignment)
        self.full, self.empty = smem.mbarriers(stages), smem.mbarriers(stages)
        self.shared_bytes = smem.launch_bytes

    def config(self):
        c = tile.WarpSpecializedConfig()
        c.consumers, c.schedule, c.stages = 2, tile.ConsumerSchedule.cooperative, self.stages
        c.full_barriers, c.empty_barriers = self.full, self.empty
        c.stage_bytes = self.tile_m * ROW + self.b_stage
        c.cluster_m = self.cluster_m
        return c

    def params(self, ws):
        k = self.kernel
        self.map_a_p, self.map_b_p, self.map_d_p = (k.param_bytes(n, 128, 64) for n in ("map_a", "map_b", "map_d"))
        self.m, self.n, self.kdim, self.l = (k.param("u32", n) for n in ("M", "N", "K", "L"))
        self.alpha = k.param("f32", "alpha")

    def prologue(self, ws):
        k = self.kernel
        self.ws, self.base, self.tid = ws, ws.smem_base(), ws.tid()
        self.epilogue_barriers = ws.warpgroup_barriers(128)
        self.map_a = k.param_generic_address(self.map_a_p)
        self.map_b = k.param_generic_address(self.map_b_p)
        self.map_d = k.param_generic_address(self.map_d_p)

    def initialize(self, ws):
        for m in (self.map_a, self.map_b, self.map_d):
            self.kernel.prefetch_tensormap(m)

    def work_source(self, ws):
        o = tile.TileSchedulerOptions()
        o.tile_m, o.tile_n, o.tile_k, o.cluster_m, o.group_rows = self.tile_m, self.tile_n, TILE_K, self.cluster_m, 16
        return o, self.m, self.n, self.kdim, self.l

    # --- the producer: A's and B's tiles of k-block kb into slot state.stage()
    def load(self, s):
        k, t, stage = self.kernel, s.item.tile, s.state.stage()
        kx = s.kb << 6
        sched = self.ws.scheduler()
        self.load_share(self.map_a, self.base + self.a_ring + stage * self.a_stage, t.m0, self.tile_m,
                        sched.rank_n(), 1, kx, t.batch, s.full, self.ws.row_multicast())
        self.load_share(self.map_b, self.base + self.b_ring + stage * self.b_stage, t.n0, self.tile_n,
                        sched.rank_m(), self.cluster_m, kx, t.batch, s.full, self.ws.column_multicast())

    def load_share(self, tensor_map, dst, row0, rows, part, parts, kx, batch, full, mask):
        """Part `part` of `parts` of a K-major tile (rows by 64 of K), multicast to `mask`'s CTAs."""
        first = part * (rows // parts)
        self.kernel.tma_load(warpforge.at(dst + first * ROW), tensor_map, [kx, row0 + first, batch],
                             warpforge.at(full), mask)

    # --- the consumers: 64 rows of the tile each, tile_n / 2 f32 accumulators
    def consumer_setup(self, ws):
        k = self.kernel
        self.cw, self.leader = ws.warpgroup(), ws.leader()
        self.acc = k.regs("f32", self.tile_n // 2, "acc")
        self.rows0 = self.cw * 64  # the warpgroup's first row in the tile
        a_smem = self.base + self.a_ring + self.rows0 * ROW
        # K-major tiles of 8-row atoms: SBO one atom, LBO unused (encoded 16), PTX ISA 9.7.15.5.1
        self.desc_a0 = tile.warpgroup.smem_descriptor(k, a_smem, 16, ATOM)
        self.desc_b0 = tile.warpgroup.smem_descriptor(k, self.base + self.b_ring, 16, ATOM)

    def compute(self, s):
        """One k-block: four k16 wgmma steps, 32 bytes along the K-major rows each."""
        k = self.kernel
        block = tile.warpgroup.KBlock()
        block.ab, block.k_steps, block.a_step, block.b_step = "bf16", TILE_K // 16, 32, 32
        a_offset, db = k.reg("u64"), k.reg("u64")
        k.cvt(a_offset, s.state.stage() * (self.a_stage >> 4))
        k.cvt(db, s.state.stage() * (self.b_stage >> 4))
        k.add(db, db, self.desc_b0)
        tile.warpgroup.mma_k_block(k, block, self.acc, a_offset + self.desc_a0, db, s.accumulate())
        return 1  # commit groups in flight

    def finish(self, item):
        """alpha·acc to bf16, four 8x8 matrices per stmatrix (the accumulator's
        fragment is stmatrix's, PTX ISA 9.7.14.5.16) into 128-byte-swizzled boxes
        of 64 rows (16-byte chunk c of row r at c ^ (r % 8)), stored by TMA; each
        chunk waits until the store before it has read the buffer."""
        k, t = self.kernel, item.tile
        epi = self.base + self.epilogue + self.cw * self.per_consumer
        chunk_barrier = self.epilogue_barriers.of(self.cw)
        lane = self.tid & 31
        warp_row = ((self.tid >> 5) & 3) * 16
        swizzle = warpforge.layout.smem_swizzle(warpforge.layout.SmemSwizzle.b128, 1)
        for col0 in range(0, self.tile_n, self.width):
            k.if_then(self.leader, lambda: k.bulk_wait_group_read(0))
            chunk_barrier.sync()
            row_in_matrix = lane & 7
            row_address = epi + (warp_row + ((lane >> 3) & 1) * 8 + row_in_matrix) * ROW
            group_of_lane = lane >> 4
            for j in range(col0 // 16, (col0 + self.width) // 16):
                packed = []
                for q in range(4):
                    i = 2 * (4 * j + q)
                    v0, v1 = k.reg("f32"), k.reg("f32")
                    k.mul(v0, self.acc[i], self.alpha)
                    k.mul(v1, self.acc[i + 1], self.alpha)
                    packed.append(k.reg("b32"))
                    k.cvt_pack("bf16x2", packed[-1], v1, v0)
                group = group_of_lane + (2 * j - col0 // 8)
                address = row_address + ((group >> 3) << 13) + tile.swizzled_chunk(k, swizzle, group, row_in_matrix)
                k.stmatrix(warpforge.at(address), packed)
            k.fence_proxy_async_shared()  # the TMA store reads what stmatrix wrote
            chunk_barrier.sync()

            def store():
                for bx in range(self.width // 64):
                    k.tma_store(self.map_d, [t.n0 + (col0 + bx * 64), t.m0 + self.rows0, t.batch],
                                warpforge.at(epi, bx * 64 * ROW))
                k.bulk_commit_group()

            k.if_then(self.leader, store)

    def consumer_teardown(self, ws):
        self.kernel.if_then(self.leader, lambda: self.kernel.bulk_wait_group(0))


def launcher(design, module, a, bt, d, alpha=1.0):
    """A function that runs D = alpha·A·B on module's device, on `stream` (a native
    handle or an object with .cuda_stream; else the null stream): a (L, M, K),
    bt = Bᵀ (L, N, K), d (L, M, N), any framework's tensors. The tensor maps are encoded and the grid sized once, as ops::Gemm caches them: a
    persistent grid of a cluster per unit (cluster_m tiles along M) up to the clusters
    resident at once, each launch allowed to start beside the stream's previous kernel
    (the template's griddepcontrol.wait orders its memory)."""
    l, m, kk = a.shape
    n = bt.shape[1]
    maps = [warpforge.tensor_map(a, [TILE_K, design.tile_m, 1], "b128"),
            warpforge.tensor_map(bt, [TILE_K, design.tile_n // design.cluster_m, 1], "b128"),
            warpforge.tensor_map(d, [64, 64, 1], "b128")]
    units = ceil_div(ceil_div(m, design.tile_m), design.cluster_m) * ceil_div(n, design.tile_n) * l
    resident = (module.device.sm_count if design.cluster_m == 1 else  # one CTA an SM: shared memory
                module.max_active_clusters(THREADS, (design.cluster_m,), design.shared_bytes))
    grid = min(units, max(resident, 1)) * design.cluster_m

    def run(stream=None):
        module.launch(grid, THREADS, *maps, m, n, kk, l, alpha, shared_bytes=design.shared_bytes,
                      cluster=(design.cluster_m,), stream=stream, overlap_previous=True)

    return run


def ceil_div(a, b):
    return -(-a // b)


def main():
    rng = np.random.default_rng(0)
    torch = None
    if "--torch" in sys.argv:
        import torch
    l, m, n, kk = (1, 256, 512, 256) if torch is None else (1, 4096, 4096, 4096)
    a = (0.1 * rng.standard_normal((l, m, kk))).astype(ml_dtypes.bfloat16)
    bt = (0.1 * rng.standard_normal((l, n, kk))).astype(ml_dtypes.bfloat16)
    reference = a.astype(np.float32) @ bt.astype(np.float32).transpose(0, 2, 1)
    design = Gemm()
    kernel = design.build()
    if torch is None:
        module = warpforge.Module(kernel, warpforge.Device.sim())
        d = np.full((l, m, n), np.nan, dtype=ml_dtypes.bfloat16)
        launcher(design, module, a, bt, d)()
        got = d.astype(np.float32)
    else:
        module = warpforge.Module(kernel)
        to = lambda x: torch.from_numpy(x.view(np.uint16).astype(np.int16)).view(torch.bfloat16).cuda()  # noqa: E731
        da = torch.full((l, m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        launcher(design, module, to(a), to(bt), da)()
        torch.cuda.synchronize()
        got = da.float().cpu().numpy()
    err = np.abs(got - reference) / np.maximum(np.abs(reference), 1.0)
    print(f"warp-specialized GEMM from Python, {l}x{m}x{n}x{kk}: max error {err.max():.3g}")
    return 0 if np.isfinite(got).all() and err.max() <= 2e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
