// Runs the warps of one CTA. Each thread has its own PC; a warp issues the
// instruction at the smallest PC among its ready threads, for all ready
// threads at that PC. For structured code this reconverges divergent paths at
// their join point (the lanes that went ahead wait at the higher PC until the
// others catch up). Threads leave the ready set when they exit, wait at a CTA
// barrier, or wait at a warp collective for the rest of its member mask.
#include <algorithm>
#include <bit>

#include "warpforge/error.hpp"
#include "warpforge/sim/execute.hpp"

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
  return "kernel '" + cta.launch->kernel.name + "', PTX line " + std::to_string(inst.line) + " (" +
         inst.text + "): block " + coords(cta.ctaid);
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
  for (Warp& w : cta.warps)
    for_lanes(w.exists, [&](int l) {
      if (w.state[l] == LaneState::at_barrier && w.barrier[l] == id) {
        w.state[l] = LaneState::ready;
        w.ready |= 1u << l;
        ++w.pc[l];
      }
    });
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
  else if (inst.op == Op::ldmatrix || inst.op == Op::stmatrix)
    exec_ldmatrix(inst, w, arrived);
  else if (inst.op != Op::bar_warp_sync)
    exec_collective(inst, w, arrived);
  for_lanes(arrived, [&](int l) {
    w.state[l] = LaneState::ready;
    ++w.pc[l];
  });
  w.ready |= arrived;
}

void execute(const Inst& inst, Warp& w, std::uint32_t active) {
  switch (inst.op) {
    case Op::mov:
      exec_integer(inst, w, active);
      return;  // a bit copy whatever the type
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::mad:
    case Op::div:
    case Op::rem:
    case Op::abs:
    case Op::neg:
    case Op::min:
    case Op::max:
    case Op::fma:
      if (ptx::is_float(inst.type()))
        exec_float(inst, w, active);
      else
        exec_integer(inst, w, active);
      return;
    case Op::and_:
    case Op::or_:
    case Op::xor_:
    case Op::not_:
    case Op::cnot:
    case Op::shl:
    case Op::shr:
    case Op::lop3:
    case Op::prmt:
    case Op::bfe:
    case Op::bfi:
    case Op::popc:
    case Op::clz:
    case Op::brev:
      exec_integer(inst, w, active);
      return;
    case Op::rcp:
    case Op::sqrt:
    case Op::rsqrt:
    case Op::ex2:
    case Op::lg2:
    case Op::sin:
    case Op::cos:
    case Op::tanh:
      exec_float(inst, w, active);
      return;
    case Op::setp:
    case Op::selp:
      exec_compare(inst, w, active);
      return;
    case Op::cvt:
      exec_convert(inst, w, active);
      return;
    case Op::cvta:
    case Op::ld:
    case Op::st:
      exec_memory(inst, w, active);
      return;
    case Op::atom:
    case Op::red:
      exec_atomic(inst, w, active);
      return;
    case Op::cp_async:
    case Op::cp_async_commit:
    case Op::cp_async_wait_group:
    case Op::cp_async_wait_all:
      exec_async_copy(inst, w, active);
      return;
    case Op::mbarrier:
      exec_mbarrier(inst, w, active);
      return;
    case Op::activemask:
      exec_collective(inst, w, active);
      return;
    case Op::fence:
      return;
    default:
      return;  // control flow and collectives are handled by the caller
  }
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
      switch (inst.op) {
        case Op::bra:
          for_lanes(mask, [&](int l) { w.pc[l] = (active >> l) & 1 ? inst.target : w.pc[l] + 1; });
          break;
        case Op::exit:
          for_lanes(mask & ~active, [&](int l) { ++w.pc[l]; });
          for_lanes(active, [&](int l) { w.state[l] = LaneState::exited; });
          w.ready &= ~active;
          break;
        case Op::bar_sync:
        case Op::bar_arrive:
          barrier(inst, w, mask, active);
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

[[noreturn]] void report_deadlock(const Cta& cta) {
  const auto& code = cta.launch->kernel.code;
  std::string msg =
      "deadlock in kernel '" + cta.launch->kernel.name + "', block " + coords(cta.ctaid) + ":";
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
    std::vector<std::uint32_t> waiting;
    int line = 0;
    std::uint32_t exited_lanes = 0;
    for_lanes(w.exists, [&](int l) {
      if (w.state[l] == LaneState::exited) exited_lanes |= 1u << l;
      if (w.state[l] == LaneState::at_collective) {
        waiting.push_back(w.index * 32 + static_cast<std::uint32_t>(l));
        line = code[w.pc[l]].line;
      }
      if (w.state[l] == LaneState::exited)
        exited.push_back(w.index * 32 + static_cast<std::uint32_t>(l));
    });
    if (waiting.empty()) continue;
    msg += " warp " + std::to_string(w.index) + " collective at PTX line " + std::to_string(line) +
           " (membermask " + hex(w.awaited_members) + ") waits for lanes that never arrive:";
    if (const std::uint32_t absent = w.awaited_members & ~w.exists)
      msg += " lanes " + lane_ranges(absent) + " are not threads of the CTA;";
    if (const std::uint32_t gone = w.awaited_members & exited_lanes)
      msg += " lanes " + lane_ranges(gone) + " exited;";
    msg += " waiting: " + thread_list(cta, waiting) + ";";
  }
  if (!exited.empty()) msg += " exited: " + thread_list(cta, exited);
  throw SimError(msg);
}

}  // namespace

bool is_warp_collective(Op op) {
  switch (op) {
    case Op::shfl:
    case Op::vote:
    case Op::redux:
    case Op::elect:
    case Op::mma:
    case Op::ldmatrix:
    case Op::stmatrix:
    case Op::bar_warp_sync:
      return true;
    default:
      return false;
  }
}

void run_cta(Cta& cta) {
  for (;;) {
    bool progress = false, live = false;
    for (Warp& w : cta.warps) {
      if (w.ready) progress |= run_warp(w);
      for_lanes(w.exists, [&](int l) { live |= w.state[l] != LaneState::exited; });
    }
    if (!live) return;
    if (!progress) report_deadlock(cta);
  }
}

}  // namespace warpforge::sim
