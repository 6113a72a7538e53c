// The CPU simulator behind Device::sim(): a runtime::DeviceBackend that runs
// the PTX IR warp-accurately on the host (see sim_backend.hpp).
//
// What it executes (anything else is refused at load(), naming the
// instruction and its line in ptx::emit(module)):
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
//   mbarrier  init, arrive, arrive.expect_tx, expect_tx, complete_tx,
//             test_wait and try_wait (by state or .parity)
//   sync      bar.sync/bar.arrive/barrier[.cta] (16 named barriers, thread
//             counts), bar.warp.sync, membar/fence, nanosleep and setmaxnreg
//             (no-ops)
//   warp      shfl.sync (up/down/bfly/idx, clamp and segment mask), vote.sync,
//             redux.sync, elect.sync, activemask
//   matrix    mma.sync m16n8k8/m16n8k16 (f16/bf16 -> f32, f16 -> f16),
//             m16n8k32 (e4m3/e5m2 -> f32 or f16); ldmatrix/stmatrix
//             m8n8 x1/x2/x4 [.trans]
//   control   bra (guarded, .uni), ret/exit; every special register of the
//             grid, warp, clock and cluster (1-CTA clusters without a cluster
//             launch)
#pragma once

#include <memory>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::sim {

struct SimOptions {
  // Host threads that run CTAs in parallel; 0 means one per hardware thread.
  unsigned worker_threads = 0;
};

std::shared_ptr<runtime::DeviceBackend> make_backend(SimOptions options = {});

}  // namespace warpforge::sim
