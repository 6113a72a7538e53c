// Runs the warps of one CTA. Each thread has its own PC; a warp issues the
// instruction at the smallest PC among its ready threads, for all ready
// threads at that PC. For structured code this reconverges divergent paths at
// their join point (the lanes that went ahead wait at the higher PC until the
// others catch up). Threads leave the ready set when they exit, wait at a CTA
// barrier, wait at a warp collective for the rest of its member mask, wait at
// a warpgroup collective (wgmma, setmaxnreg) for the other three warps of
// their warpgroup, or block in mbarrier.try_wait, barrier.cluster.wait or a
// tcgen05 .cta_group::2 allocation instruction.
// The CTAs of a cluster run interleaved, warp by warp.
#include <algorithm>
#include <bit>

#include "execute.hpp"
#include "launch_monitor.hpp"
#include "memory_access.hpp"
#include "operations.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

// Warps run this many instructions before the next warp gets a turn, so a
// warp spinning on a flag that another warp sets still lets that warp run.
constexpr int kQuantum = 4096;

std::string coords(const runtime::Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

runtime::Dim3 thread_coords(const Cta& cta, std::uint32_t linear) {
  const auto& b = cta.launch->config.block;
  return {linear % b.x, linear / b.x % b.y, linear / (b.x * b.y)};
}

std::string where(const Cta& cta, const Inst& inst) {
  const Kernel& k = cta.launch->kernel;
  const std::string source = inst.source ? " from " + k.sources[inst.source] : "";
  return "kernel '" + k.name + "', PTX line " + std::to_string(inst.line) + " (" + inst.text + ")" +
         source + ": block " + coords(cta.ctaid);
}

// "3-5,9" for the set bits of a lane mask
std::string lane_ranges(std::uint32_t mask) {
  std::string out;
  for (int l = 0; l < 32;) {
    if (!((mask >> l) & 1)) {
      ++l;
      continue;
    }
    int end = l;
    while (end + 1 < 32 && ((mask >> (end + 1)) & 1)) ++end;
    out +=
        (out.empty() ? "" : ",") + std::to_string(l) + (end > l ? "-" + std::to_string(end) : "");
    l = end + 1;
  }
  return out;
}

// "threads (0,0,0) (1,0,0) ... and 30 more"
std::string thread_list(const Cta& cta, const std::vector<std::uint32_t>& linear) {
  std::string out;
  for (std::size_t i = 0; i < linear.size() && i < 8; ++i)
    out += (i ? " " : "") + coords(thread_coords(cta, linear[i]));
  if (linear.size() > 8) out += " and " + std::to_string(linear.size() - 8) + " more";
  return out;
}

void release_barrier(Cta& cta, std::uint32_t id) {
  for (Warp& w : cta.warps) {
    bool released = false;
    for_lanes(w.exists, [&](int l) {
      if (w.state[l] == LaneState::at_barrier && w.barrier[l] == id) {
        w.state[l] = LaneState::ready;
        w.ready |= 1u << l;
        ++w.pc[l];
        released = true;
      }
    });
    if (released) note_acquire(w, &cta.barriers[id]);
  }
  note_new_object(cta.warps.front(), &cta.barriers[id]);  // the next phase starts from no arrivals
  cta.barriers[id].arrived = 0;
}

// bar.sync / bar.arrive a{, b} (PTX ISA 9.7.13.1): b threads (default: all of
// the CTA) must arrive at barrier a; bar.sync waits for them, bar.arrive
// does not.
void barrier(const Inst& inst, Warp& w, std::uint32_t mask, std::uint32_t active) {
  Cta& cta = *w.cta;
  for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
  if (!active) return;
  const int first = std::countr_zero(active);
  const auto id = static_cast<std::uint32_t>(read(w, inst.op0(0), first));
  const std::uint32_t expected =
      inst.ops.size() > 1 ? static_cast<std::uint32_t>(read(w, inst.op0(1), first)) : cta.threads;
  if (id >= cta.barriers.size())
    throw SimError("barrier " + std::to_string(id) + " does not exist (0-15)");
  if (expected == 0 || expected > cta.threads)
    throw SimError("barrier thread count " + std::to_string(expected) + " is not in 1.." +
                   std::to_string(cta.threads));
  Barrier& b = cta.barriers[id];
  if (b.arrived == 0) b.expected = expected;
  b.arrived += static_cast<std::uint32_t>(std::popcount(active));
  note_release(w, &b);
  for_lanes(active, [&](int l) {
    if (inst.op == Op::bar_sync) {
      w.state[l] = LaneState::at_barrier;
      w.barrier[l] = static_cast<std::uint8_t>(id);
    } else {
      ++w.pc[l];
    }
  });
  if (inst.op == Op::bar_sync) w.ready &= ~active;
  if (b.arrived >= b.expected) release_barrier(cta, id);
}

// Parks `lanes` (blocked in try_wait, barrier.cluster.wait or a
// tcgen05 .cta_group::2 allocation instruction) until wake()
// finds them done.
void block(Warp& w, std::uint32_t lanes, LaneState state) {
  for_lanes(lanes, [&](int l) { w.state[l] = state; });
  w.ready &= ~lanes;
  w.blocked |= lanes;
}

void collective(const Inst& inst, Warp& w, std::uint32_t mask, std::uint32_t active) {
  for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
  if (!active) return;
  const std::uint32_t pc = w.pc[std::countr_zero(active)];
  std::uint32_t waiting = 0;
  for_lanes(w.exists & ~w.ready, [&](int l) {
    if (w.state[l] == LaneState::at_collective && w.pc[l] == pc) waiting |= 1u << l;
  });
  const std::uint32_t arrived = active | waiting;
  const std::uint32_t members = collective_members(inst, w, std::countr_zero(active));
  if ((members & ~arrived) != 0) {  // wait for the rest of the member mask
    w.awaited_members = members;
    for_lanes(active, [&](int l) { w.state[l] = LaneState::at_collective; });
    w.ready &= ~active;
    return;
  }
  if (inst.op == Op::mma)
    exec_mma(inst, w);
  else if (inst.op == Op::wmma)
    exec_wmma(inst, w);
  else if (inst.op == Op::ldmatrix || inst.op == Op::stmatrix)
    exec_ldmatrix(inst, w, arrived);
  else if (inst.op == Op::tcgen05_sync) {
    if (!exec_tcgen05_sync(inst, w, arrived))
      return block(w, arrived, LaneState::at_peer_warp);  // until the peer CTA's warp comes
  } else if (inst.op != Op::bar_warp_sync) {
    exec_collective(inst, w, arrived);
  }
  for_lanes(arrived, [&](int l) {
    w.state[l] = LaneState::ready;
    ++w.pc[l];
  });
  w.ready |= arrived;
}

// A warpgroup is four consecutive warps, the first's index a multiple of 4
// (PTX ISA 9.7.15.2 "Warpgroup"); wgmma and setmaxnreg are .sync.aligned for
// all 128 of its threads. Each warp's lanes gather as at a warp collective;
// the instruction runs once every lane of the four warps waits at it.
void warpgroup_collective(const Inst& inst, Warp& w, std::uint32_t mask, std::uint32_t active) {
  Cta& cta = *w.cta;
  for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
  if (!active) return;
  const std::uint32_t first = w.index / 4 * 4;
  if (first + 4 > cta.warps.size() || cta.warps[first + 3].exists != 0xFFFFFFFFu)
    throw SimError("a warpgroup instruction needs all 128 threads of warpgroup " + std::to_string(first / 4) +
                   " (warps " + std::to_string(first) + "-" + std::to_string(first + 3) + "); the block has " +
                   std::to_string(cta.threads) + " threads");
  const std::uint32_t pc = w.pc[std::countr_zero(active)];
  for_lanes(active, [&](int l) { w.state[l] = LaneState::at_collective; });
  w.ready &= ~active;
  w.awaited_members = 0xFFFFFFFFu;
  for (std::uint32_t k = first; k < first + 4; ++k)
    for (int l = 0; l < 32; ++l)
      if (cta.warps[k].state[l] != LaneState::at_collective || cta.warps[k].pc[l] != pc) return;
  for (std::uint32_t k = first; k < first + 4; ++k) {
    Warp& member = cta.warps[k];
    if (inst.op == Op::wgmma) exec_wgmma(inst, member, static_cast<int>(k - first));
    for (int l = 0; l < 32; ++l) {
      member.state[l] = LaneState::ready;
      ++member.pc[l];
    }
    member.ready = member.exists;
  }
}

// barrier.cluster.arrive / .wait (PTX ISA 9.7.13.3): a phase completes when
// every non-exited thread of the cluster has arrived; a wait returns once the
// phase its thread arrived in has completed.
void complete_cluster_phase_if_done(Cluster& c) {
  if (c.arrived > 0 && c.arrived >= c.live_threads) {
    c.arrived = 0;
    ++c.phase;
  }
}

void cluster_arrive(Warp& w, std::uint32_t active) {
  Cluster& c = *w.cta->cluster;
  for_lanes(active, [&](int l) {
    if (w.cluster_arrival[l])
      throw AccessFault{l, "barrier.cluster.arrive again before a barrier.cluster.wait for the previous arrival"};
    w.cluster_arrival[l] = c.phase + 1;
  });
  c.arrived += static_cast<std::uint32_t>(std::popcount(active));
  complete_cluster_phase_if_done(c);
}

// The lanes of `lanes` whose cluster barrier phase has completed.
std::uint32_t cluster_phase_done(const Warp& w, std::uint32_t lanes) {
  std::uint32_t done = 0;
  for_lanes(lanes, [&](int l) {
    if (w.cta->cluster->phase >= w.cluster_arrival[l]) done |= 1u << l;
  });
  return done;
}

void cluster_wait(Warp& w, std::uint32_t mask, std::uint32_t active) {
  for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
  for_lanes(active, [&](int l) {
    if (!w.cluster_arrival[l])
      throw AccessFault{l, "barrier.cluster.wait without a barrier.cluster.arrive before it"};
  });
  const std::uint32_t done = cluster_phase_done(w, active);
  for_lanes(done, [&](int l) {
    w.cluster_arrival[l] = 0;
    ++w.pc[l];
  });
  block(w, active & ~done, LaneState::at_cluster_barrier);
}

void try_wait(const Inst& inst, Warp& w, std::uint32_t mask, std::uint32_t active) {
  for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
  const std::uint32_t done = mbarrier_wait(inst, w, active);
  for_lanes(done, [&](int l) { ++w.pc[l]; });
  block(w, active & ~done, LaneState::at_mbarrier);
}

// Lets blocked lanes whose phase completed go on; returns whether any did.
bool wake(Warp& w) {
  const std::vector<Inst>& code = w.cta->launch->kernel.code;
  std::uint32_t woken = 0;
  for_lanes(w.blocked, [&](int l) {
    const std::uint32_t bit = 1u << l;
    if (w.state[l] == LaneState::at_mbarrier) {
      if (!mbarrier_wait(code[w.pc[l]], w, bit)) return;
    } else if (w.state[l] == LaneState::at_peer_warp) {
      if (waits_for_peer_warp(w)) return;
    } else {
      if (!cluster_phase_done(w, bit)) return;
      w.cluster_arrival[l] = 0;
    }
    w.state[l] = LaneState::ready;
    ++w.pc[l];
    woken |= bit;
  });
  w.blocked &= ~woken;
  w.ready |= woken;
  return woken != 0;
}

void execute(const Inst& inst, Warp& w, std::uint32_t active) {
  switch (operation(inst.op).runner) {
    case Runner::integer:
      return exec_integer(inst, w, active);
    case Runner::integer_or_float:
      return ptx::is_float(inst.type()) ? exec_float(inst, w, active)
                                        : exec_integer(inst, w, active);
    case Runner::float_function:
      return exec_float(inst, w, active);
    case Runner::compare:
      return exec_compare(inst, w, active);
    case Runner::convert:
      return exec_convert(inst, w, active);
    case Runner::memory:
      return exec_memory(inst, w, active);
    case Runner::atomic:
      return exec_atomic(inst, w, active);
    case Runner::async_copy:
      return exec_async_copy(inst, w, active);
    case Runner::mbarrier:
      return exec_mbarrier(inst, w, active);
    case Runner::lane_mask:
      return exec_collective(inst, w, active);
    case Runner::tensormap:
      return exec_tensormap(inst, w, active);
    case Runner::tensor_copy:
      return exec_tensor_copy(inst, w, active);
    case Runner::bulk_copy:
      return exec_bulk_copy(inst, w, active);
    case Runner::bulk_group:
      return exec_bulk_group(inst, w, active);
    case Runner::tcgen05:
      return exec_tcgen05(inst, w, active);
    case Runner::vprintf:
      return exec_vprintf(inst, w, active);
    case Runner::frame_copy:
      return exec_frame_copy(inst, w, active);
    case Runner::none:
    case Runner::scheduler:
    case Runner::warp:
    case Runner::warpgroup:
    case Runner::nothing:
      return;  // control flow and collectives are handled by the caller
  }
}

std::string trap_message(const Inst& inst) {
  if (inst.mode == kTrapCallDepth)
    return "device function calls nested deeper than " + std::to_string(kMaxCallDepth) +
           " (the simulator's limit; a GPU's is its stack size) are not simulated";
  return "trap: the kernel aborted (PTX ISA 9.7.19.2 \"trap\")";
}

// Issues instructions of one warp; returns whether it issued any.
bool run_warp(Warp& w) {
  Cta& cta = *w.cta;
  const std::vector<Inst>& code = cta.launch->kernel.code;
  bool progress = false;
  for (int step = 0; step < kQuantum && w.ready; ++step) {
    std::uint32_t pc = ~0u, mask = 0;
    for_lanes(w.ready, [&](int l) {
      const std::uint32_t p = w.pc[l];
      if (p < pc) {
        pc = p;
        mask = 0;
      }
      if (p == pc) mask |= 1u << l;
    });
    const Inst& inst = code[pc];
    std::uint32_t active = mask;
    if (inst.guarded) {
      active = 0;
      for_lanes(mask, [&](int l) {
        active |= ((w.reg(inst.guard.slot, l) != 0) != inst.guard.negated ? 1u : 0u) << l;
      });
    }
    ++w.clock;
    cta.instructions += static_cast<std::uint64_t>(std::popcount(active));
    progress = true;
    try {
      if (w.wgmma_busy && inst.op != Op::wgmma) check_wgmma_registers(inst, w);
      switch (inst.op) {
        case Op::bra:
          for_lanes(mask, [&](int l) { w.pc[l] = (active >> l) & 1 ? inst.target : w.pc[l] + 1; });
          break;
        case Op::exit:
          for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
          for_lanes(active, [&](int l) {
            complete_bulk_stores(w, l);  // TMA stores still in flight finish
            w.state[l] = LaneState::exited;
          });
          w.ready &= ~active;
          cta.cluster->live_threads -= static_cast<std::uint32_t>(std::popcount(active));
          complete_cluster_phase_if_done(*cta.cluster);
          break;
        case Op::call:  // the return address into the callee copy's return register
          for_lanes(mask, [&](int l) {
            if ((active >> l) & 1) {
              w.reg(inst.op0(1).slot, l) = w.pc[l] + 1;
              w.pc[l] = inst.target;
            } else {
              ++w.pc[l];
            }
          });
          break;
        case Op::ret:
          for_lanes(mask, [&](int l) {
            w.pc[l] = (active >> l) & 1 ? static_cast<std::uint32_t>(w.reg(inst.op0(0).slot, l))
                                        : w.pc[l] + 1;
          });
          break;
        case Op::trap:
          if (active) throw SimError(trap_message(inst));
          for_lanes(mask, [&](int l) { ++w.pc[l]; });
          break;
        case Op::bar_sync:
        case Op::bar_arrive:
          barrier(inst, w, mask, active);
          break;
        case Op::cluster_arrive:
          cluster_arrive(w, active);
          for_lanes(mask, [&](int l) { ++w.pc[l]; });
          break;
        case Op::cluster_wait:
          cluster_wait(w, mask, active);
          break;
        case Op::wgmma:
        case Op::setmaxnreg:
          warpgroup_collective(inst, w, mask, active);
          break;
        case Op::mbarrier:
          if (static_cast<MbarrierOp>(inst.mode) == MbarrierOp::try_wait) {
            try_wait(inst, w, mask, active);
          } else {
            execute(inst, w, active);
            for_lanes(mask, [&](int l) { ++w.pc[l]; });
          }
          break;
        default:
          if (is_warp_collective(inst.op)) {
            collective(inst, w, mask, active);
          } else {
            execute(inst, w, active);
            for_lanes(mask, [&](int l) { ++w.pc[l]; });
          }
      }
    } catch (const AccessFault& f) {
      throw SimError(where(cta, inst) + " thread " +
                     coords(thread_coords(cta, w.index * 32 + f.lane)) + ": " + f.message);
    } catch (
        const Error& e) {  // a refusal of the semantics (SimError included): add where it happened
      throw SimError(where(cta, inst) + ": " + e.what());
    }
  }
  return progress;
}

// "warp 5 at PTX line 12 (at a barrier)", "warp 6 exited": where a warp of a
// warpgroup is instead of at the warpgroup instruction.
std::string whereabouts(const Cta& cta, const Warp& w) {
  for (int l = 0; l < 32; ++l) {
    if (!((w.exists >> l) & 1) || w.state[l] == LaneState::exited) continue;
    return "warp " + std::to_string(w.index) + " is at PTX line " +
           std::to_string(cta.launch->kernel.code[w.pc[l]].line);
  }
  return "warp " + std::to_string(w.index) + " exited";
}

// What keeps the CTA's lanes from running, for a deadlock report.
std::string describe_stuck(const Cta& cta) {
  const auto& code = cta.launch->kernel.code;
  std::string msg;
  std::vector<std::uint32_t> exited;
  for (std::uint32_t id = 0; id < cta.barriers.size(); ++id) {
    std::vector<std::uint32_t> waiting;
    int line = 0;
    for (const Warp& w : cta.warps)
      for_lanes(w.exists, [&](int l) {
        if (w.state[l] == LaneState::at_barrier && w.barrier[l] == id) {
          waiting.push_back(w.index * 32 + static_cast<std::uint32_t>(l));
          line = code[w.pc[l]].line;
        }
      });
    if (waiting.empty()) continue;
    const Barrier& b = cta.barriers[id];
    msg += " barrier " + std::to_string(id) + " (PTX line " + std::to_string(line) + ") expects " +
           std::to_string(b.expected) + " threads, " + std::to_string(b.arrived) +
           " arrived; waiting: " + thread_list(cta, waiting) + ";";
  }
  for (const Warp& w : cta.warps) {
    std::vector<std::uint32_t> waiting, on_mbarrier, on_cluster, on_peer;
    int line = 0, mbarrier_line = 0, cluster_line = 0, peer_line = 0;
    std::uint32_t exited_lanes = 0;
    for_lanes(w.exists, [&](int l) {
      const auto linear = w.index * 32 + static_cast<std::uint32_t>(l);
      if (w.state[l] == LaneState::exited) exited_lanes |= 1u << l;
      if (w.state[l] == LaneState::at_collective) {
        waiting.push_back(linear);
        line = code[w.pc[l]].line;
      }
      if (w.state[l] == LaneState::at_mbarrier) {
        on_mbarrier.push_back(linear);
        mbarrier_line = code[w.pc[l]].line;
      }
      if (w.state[l] == LaneState::at_cluster_barrier) {
        on_cluster.push_back(linear);
        cluster_line = code[w.pc[l]].line;
      }
      if (w.state[l] == LaneState::at_peer_warp) {
        on_peer.push_back(linear);
        peer_line = code[w.pc[l]].line;
      }
      if (w.state[l] == LaneState::exited) exited.push_back(linear);
    });
    if (!on_peer.empty())
      msg += " warp " + std::to_string(w.index) +
             " waits in the .cta_group::2 instruction at PTX line " + std::to_string(peer_line) +
             " for a warp of the peer CTA (%cluster_ctarank " + std::to_string(cta.rank ^ 1) +
             ") to perform it too; waiting: " + thread_list(cta, on_peer) + ";";
    if (!on_mbarrier.empty())
      msg += " warp " + std::to_string(w.index) + " waits in mbarrier.try_wait at PTX line " +
             std::to_string(mbarrier_line) + " for a phase that never completes; waiting: " +
             thread_list(cta, on_mbarrier) + ";";
    if (!on_cluster.empty())
      msg += " warp " + std::to_string(w.index) + " waits in barrier.cluster.wait at PTX line " +
             std::to_string(cluster_line) + "; " + std::to_string(cta.cluster->arrived) + " of the cluster's " +
             std::to_string(cta.cluster->live_threads) + " live threads arrived; waiting: " +
             thread_list(cta, on_cluster) + ";";
    if (waiting.empty()) continue;
    const std::uint32_t pc = w.pc[waiting.front() % 32];
    if (is_warpgroup_collective(code[pc].op) && waiting.size() == 32) {
      const std::uint32_t first = w.index / 4 * 4;
      msg += " warp " + std::to_string(w.index) + " waits at the warpgroup instruction at PTX line " +
             std::to_string(line) + " for the other warps of warpgroup " + std::to_string(first / 4) + ":";
      for (std::uint32_t k = first; k < first + 4 && k < cta.warps.size(); ++k) {
        const Warp& o = cta.warps[k];
        bool here = true;
        for (int l = 0; l < 32; ++l)
          here &= o.state[l] == LaneState::at_collective && o.pc[l] == pc;
        if (!here) msg += " " + whereabouts(cta, o) + ";";
      }
      continue;
    }
    msg += " warp " + std::to_string(w.index) + " collective at PTX line " + std::to_string(line) +
           " (membermask " + hex(w.awaited_members) + ") waits for lanes that never arrive:";
    if (const std::uint32_t absent = w.awaited_members & ~w.exists)
      msg += " lanes " + lane_ranges(absent) + " are not threads of the CTA;";
    if (const std::uint32_t gone = w.awaited_members & exited_lanes)
      msg += " lanes " + lane_ranges(gone) + " exited;";
    msg += " waiting: " + thread_list(cta, waiting) + ";";
  }
  if (!exited.empty()) msg += " exited: " + thread_list(cta, exited);
  return msg;
}

[[noreturn]] void report_deadlock(const Cluster& cluster) {
  const Cta& first = cluster.ctas.front();
  std::string msg = "deadlock in kernel '" + first.launch->kernel.name + "', ";
  if (cluster.ctas.size() == 1) {
    msg += "block " + coords(first.ctaid) + ":" + describe_stuck(first);
  } else {
    msg += "cluster of " + std::to_string(cluster.ctas.size()) + " CTAs:";
    for (const Cta& cta : cluster.ctas)
      msg += " [block " + coords(cta.ctaid) + ", rank " + std::to_string(cta.rank) + ":" + describe_stuck(cta) + "]";
  }
  throw SimError(msg);
}

}  // namespace

bool is_warp_collective(Op op) {
  return operation(op).runner == Runner::warp;
}

bool is_warpgroup_collective(Op op) {
  return operation(op).runner == Runner::warpgroup;
}

void run_cluster(Cluster& cluster) {
  LaunchMonitor* monitor = cluster.ctas.front().launch->monitor;
  std::uint64_t reported = 0;  // thread-instructions already told to the monitor
  for (;;) {
    bool progress = false, live = false;
    std::uint64_t executed = 0;
    for (Cta& cta : cluster.ctas) {
      for (Warp& w : cta.warps) {
        if (w.blocked) progress |= wake(w);
        if (w.ready) progress |= run_warp(w);
        for_lanes(w.exists, [&](int l) { live |= w.state[l] != LaneState::exited; });
      }
      executed += cta.instructions;
    }
    if (!live) {
      for (const Cta& cta : cluster.ctas) check_tensor_memory_released(cta);
      return;
    }
    if (!progress) report_deadlock(cluster);
    if (monitor) monitor->tick(cluster, executed - reported);
    reported = executed;
  }
}

}  // namespace warpforge::sim
