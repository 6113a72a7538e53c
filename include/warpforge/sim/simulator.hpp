// The CPU simulator behind Device::sim(): a runtime::DeviceBackend that runs
// the PTX IR warp-accurately on the host (see sim_backend.hpp).
//
// What it executes (anything else refuses the kernel that uses it at that
// kernel's first launch, naming the kernel, the instruction and its line in
// ptx::emit(module); the module's other kernels still run):
//   integer   mov (incl. vector pack/unpack and symbol addresses), add, sub,
//             mul/mad .lo/.hi/.wide, div, rem, abs, neg, min, max, and, or,
//             xor, not, cnot, shl, shr, lop3, prmt (default mode), bfe, bfi,
//             popc, clz, brev
//   compare   setp (every comparison, .and/.or/.xor, p|q pairs, f16x2/bf16x2),
//             selp
//   float     add, sub, mul, fma/mad, div, min, max, abs, neg, rcp, sqrt,
//             rsqrt, ex2, lg2, sin, cos, tanh on f32/f64/f16/bf16/f16x2/bf16x2
//             with .rn/.rz/.rm/.rp, .ftz, .sat
//   convert   cvt between integer widths and f64/f32/f16/bf16/tf32/e4m3/e5m2,
//             .rni-style integral rounding, .sat/.satfinite/.relu, packed
//             {f16,bf16,e4m3,e5m2}x2 forms; cvta (to and from generic)
//   memory    ld/st global/shared/local/param/const/generic, .v2/.v4, cache
//             hints ignored; atom/red add/min/max/exch/cas/and/or/xor/inc/dec;
//             cp.async ca/cg (4/8/16 bytes, src-size) with commit_group,
//             wait_group, wait_all, and cp.async.mbarrier.arrive[.noinc]
//   mbarrier  init, arrive (also on another CTA of the cluster through a
//             shared::cluster address), arrive.expect_tx, expect_tx,
//             complete_tx, test_wait and try_wait (by state or .parity;
//             try_wait blocks until the phase completes, so spinning threads
//             let the others run and a phase that never completes is a
//             reported deadlock)
//   TMA       cp.async.bulk.tensor.{1d..5d} .tile loads global ->
//             shared::cluster completing on an mbarrier (.multicast::cluster
//             with a CTA mask) and stores shared::cta -> global (.bulk_group),
//             with the simulator's tensor maps (runtime/tensor_map.hpp):
//             swizzles, element strides, out-of-bounds zero fill; loads land
//             at issue, stores read shared memory when wait_group retires
//             them (or the thread exits), and the reduce-add stores of f32
//             maps (cp.reduce.async.bulk.tensor ... .add) likewise;
//             cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
//             (non-tensor) likewise; cp.async.bulk.shared::cluster from
//             shared::cta; cp.async.bulk.commit_group / wait_group[.read];
//             prefetch (no-op). Other cp.async.bulk forms (global sources,
//             im2col, other reductions) are refused
//   wgmma     fence, commit_group, wait_group, mma_async m64nNk16 (f16/bf16 ->
//             f32, f16 -> f16) and m64nNk32 (e4m3/e5m2 -> f32/f16), N = 8..256,
//             B from a shared-memory descriptor (K- or MN-major, no swizzle
//             or 32/64/128B, base offset 0), A likewise or from four
//             registers per thread, issued by all 128 threads of a
//             warpgroup, reading shared memory and A's registers when
//             wait_group retires them; an instruction touching an
//             accumulator or A register still in flight is refused; .sp is
//             refused
//   tcgen05   (sm_100a; .cta_group::1) tensor-memory alloc, dealloc and
//             relinquish_alloc_permit, mma with M = 128 of kinds f16, tf32,
//             f8f6f4 and the block-scaled mxf8f6f4, mxf4, mxf4nvf4, cp,
//             shift, ld/st in the 32x32b, 16x64b, 16x128b and 16x256b
//             shapes, commit, wait and fence, as the PTX ISA's text
//             describes them (src/sim/tcgen05.cpp); .cta_group::2, .ws,
//             .sp, 16x32bx2 and pack/unpack are refused
//   cluster   clusters of up to 8 CTAs run together: mapa (shared::cluster and
//             generic), ld/st/atom .shared::cluster on any CTA of the cluster,
//             barrier.cluster.arrive/.wait, the cluster special registers
//   sync      bar.sync/bar.arrive/barrier[.cta] (16 named barriers, thread
//             counts), bar.warp.sync, membar/fence (fence.proxy.async,
//             fence.mbarrier_init), nanosleep (no-op), setmaxnreg (checked:
//             a warpgroup collective, 24..256 in steps of 8; no effect),
//             griddepcontrol.wait/.launch_dependents (no-ops: a stream's
//             grids run one after another)
//   warp      shfl.sync (up/down/bfly/idx, clamp and segment mask), vote.sync,
//             redux.sync, elect.sync, activemask
//   matrix    mma.sync m16n8k8/m16n8k16 (f16/bf16 -> f32, f16 -> f16),
//             m16n8k32 (e4m3/e5m2 -> f32 or f16); wmma.load/mma/store
//             m16n16k16, m32n8k16, m8n32k16 (f16 -> f16 or f32, bf16 ->
//             f32) and m16n16k8 (tf32 -> f32); ldmatrix/stmatrix m8n8
//             x1/x2/x4 [.trans]
//   control   bra (guarded, .uni), ret/exit, trap; every special register of
//             the grid, warp, clock and cluster (1-CTA clusters without a
//             cluster launch); generic addresses of kernel parameters
//             (cvta.param)
//   calls     call of the module's .func functions with .param arguments and
//             return values declared in the body (nvcc's calling sequence),
//             recursion to 24 calls deep (an error past it); printf through
//             vprintf, formatted on the host (SimOptions::printf_output).
//             Indirect calls, .extern functions, textures and surfaces
//             (tex, tld4, txq, suld, sust, suq) are refused
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::sim {

struct SimOptions {
  // The GPU the simulator stands for: the target it reports (which kernels
  // the ops choose) and that GPU's compute capability and shared memory
  // limits. It executes every instruction it knows whatever the target.
  ptx::Target target = ptx::Target::sm_90a;
  // Host threads that run CTAs in parallel; 0 means one per hardware thread.
  unsigned worker_threads = 0;
  // The SM count the device reports (persistent kernels size their grids by
  // it); 0 means one per hardware thread.
  int sm_count = 0;
  // The watchdog: a launch that runs more thread-instructions (one
  // instruction of one thread) than max_thread_instructions, or longer than
  // time_limit_seconds, stops with a SimError naming the kernel, the PTX
  // line and enclosing loop of each warp of the cluster that tripped it, and
  // these settings. 0 takes the environment's WARPFORGE_SIM_MAX_INSTRUCTIONS
  // and WARPFORGE_SIM_TIME_LIMIT (seconds), else the defaults: 2^40
  // thread-instructions (hours of simulation) and 1800 s.
  std::uint64_t max_thread_instructions = 0;
  double time_limit_seconds = 0;
  // The bytes of host memory the device's allocations may hold together; 0:
  // whatever the host has available. Buffer refuses beyond it.
  std::size_t memory_bytes = 0;
  // A launch running longer than progress_after_seconds shows its progress
  // on stderr when stderr is a terminal, redrawn four times a second: blocks
  // (or clusters) done of all, time elapsed, thread-instructions run and
  // their rate, and once a block has finished, the total its average
  // extrapolates to and the time left; false keeps it quiet there too.
  bool progress = true;
  double progress_after_seconds = 2.0;
  // Reports a race on shared memory (two warps' accesses of a byte, one a
  // write, that no barrier or mbarrier wait orders) as a fault of the second
  // access, naming both instructions (src/sim/shared_races.hpp says what it
  // sees); launches with clusters are not checked. Costs time on every
  // shared-memory access.
  bool check_shared_races = false;
  // Where device printf output goes: each warp's printf, formatted on the
  // host, one call per thread in lane order (as a GPU prints a warp's
  // lines). Empty: the host's stdout.
  std::function<void(std::string_view)> printf_output;
};

std::shared_ptr<runtime::DeviceBackend> make_backend(SimOptions options = {});

// Host memory that kernels reach through addresses they read from memory (a
// table of pointers the host wrote into a tensor): `handler` is called with
// an address range outside every allocation and mapping of the simulator
// `device`, before the access is reported, and may map the host memory
// holding it at its own address (runtime::DeviceBackend::map_host_in_place)
// and return true to have the access tried again. Calls are serialized and
// come from the threads that run kernels; an empty function removes it.
// RuntimeError when `device` is not a simulator.
void set_host_memory_handler(const runtime::Device& device, std::function<bool(std::uint64_t, std::size_t)> handler);

}  // namespace warpforge::sim
