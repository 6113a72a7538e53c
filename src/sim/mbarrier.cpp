// mbarrier objects in shared memory (PTX ISA 9.7.13.15 "mbarrier"): init,
// arrive, arrive.expect_tx, expect_tx, complete_tx, test_wait and try_wait
// (by state or by phase parity), inval, and cp.async.mbarrier.arrive[.noinc]. A
// phase completes when its pending arrivals reach zero with no transaction
// bytes outstanding; then the phase advances and the pending count resets.
// The object may be in another CTA of the cluster (a shared::cluster address
// from mapa), e.g. a remote arrive or a multicast TMA's complete_tx.
//
// try_wait may block until the phase completes or a system-dependent time
// limit passes (PTX ISA 9.7.13.15.16); the simulator's limit never passes:
// the scheduler parks a lane whose phase is incomplete (mbarrier_wait) and
// runs the other warps and CTAs until it completes, and reports a deadlock if
// nothing else can run. test_wait never blocks.
//
// The simulator keeps the object's state in its 8 bytes: expected arrivals
// (bits 0-19), pending arrivals (20-39), outstanding transaction bytes
// (40-59, two's complement) and the phase parity (bit 63). A CTA runs on one
// host thread, so updates need no host atomics.
#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

constexpr std::uint64_t kField = (1ull << 20) - 1;

struct Mbarrier {
  std::uint64_t expected, pending, tx, phase;

  static Mbarrier load(const std::byte* p) {
    const std::uint64_t v = load_bytes(p, 8);
    return {v & kField, (v >> 20) & kField, (v >> 40) & kField, v >> 63};
  }
  void store(std::byte* p) const {
    store_bytes(p, 8, expected | (pending << 20) | ((tx & kField) << 40) | (phase << 63));
  }
  void complete_if_done() {
    if (pending == 0 && tx == 0) {
      phase ^= 1;
      pending = expected;
    }
  }
  void arrive(std::uint64_t count) {
    if (count > pending)
      throw SimError("mbarrier arrive of " + std::to_string(count) + " with only " +
                     std::to_string(pending) + " arrivals pending in the phase");
    pending -= count;
    complete_if_done();
  }
};

// The address operand: after a destination for arrive and the waits.
std::size_t address_operand(MbarrierOp op) {
  const bool has_dst = op == MbarrierOp::arrive || op == MbarrierOp::arrive_expect_tx ||
                       op == MbarrierOp::test_wait || op == MbarrierOp::try_wait;
  return has_dst ? 1 : 0;
}

Space object_space(const Inst& in) {
  return in.space == Space::generic ? Space::generic : Space::shared;
}

// By state: done once the phase moved on from the state's; by parity: done
// once the phase of that parity completed, i.e. the current phase has the
// other parity. The state an arrive returns is the phase parity it arrived in.
bool phase_done(const Mbarrier& m, std::uint64_t wanted) { return m.phase != (wanted & 1); }

}  // namespace

void mbarrier_complete_tx(std::byte* object, std::uint64_t bytes) {
  Mbarrier m = Mbarrier::load(object);
  m.tx = (m.tx - bytes) & kField;
  m.complete_if_done();
  m.store(object);
}

void mbarrier_arrive(std::byte* object, std::uint64_t count) {
  Mbarrier m = Mbarrier::load(object);
  m.arrive(count);
  m.store(object);
}

std::uint32_t mbarrier_wait(const Inst& in, Warp& w, std::uint32_t lanes) {
  std::uint32_t done = 0;
  for_lanes(lanes, [&](int l) {
    const std::byte* p = access(w, l, object_space(in), address_of(w, in.op0(1), l), 8, 8, false);
    if (!phase_done(Mbarrier::load(p), read(w, in.op0(2), l))) return;
    note_acquire(w, p);
    write(w, in.op0(0), l, 1);
    done |= 1u << l;
  });
  return done;
}

void exec_mbarrier(const Inst& in, Warp& w, std::uint32_t active) {
  const auto op = static_cast<MbarrierOp>(in.mode);
  const std::size_t addr = address_operand(op);
  const Space space = object_space(in);
  for_lanes(active, [&](int l) {
    std::byte* p = access(w, l, space, address_of(w, in.op0(addr), l), 8, 8, true);
    auto operand = [&](std::size_t i, std::uint64_t otherwise) {
      return in.ops.size() > i ? read(w, in.op0(i), l) : otherwise;
    };
    Mbarrier m = Mbarrier::load(p);
    switch (op) {
      case MbarrierOp::init: {
        const std::uint64_t count = operand(1, 1);
        if (count == 0 || count > kField)
          throw SimError("mbarrier.init count " + std::to_string(count));
        m = {count, count, 0, 0};
        note_new_object(w, p);
        break;
      }
      case MbarrierOp::arrive:
      case MbarrierOp::arrive_expect_tx: {
        // The returned state names the phase the arrival belongs to.
        write(w, in.op0(0), l, m.phase);
        note_release(w, p);
        if (op == MbarrierOp::arrive_expect_tx) m.tx = (m.tx + operand(2, 0)) & kField;
        m.arrive(op == MbarrierOp::arrive ? operand(2, 1) : 1);
        break;
      }
      case MbarrierOp::expect_tx:
        m.tx = (m.tx + operand(1, 0)) & kField;
        break;
      case MbarrierOp::complete_tx:
        note_release(w, p);
        m.tx = (m.tx - operand(1, 0)) & kField;
        m.complete_if_done();
        break;
      case MbarrierOp::test_wait:
      case MbarrierOp::try_wait:  // the scheduler's, through mbarrier_wait; here only test_wait
        write(w, in.op0(0), l, phase_done(m, operand(2, 0)) ? 1 : 0);
        if (phase_done(m, operand(2, 0))) note_acquire(w, p);
        break;
      case MbarrierOp::inval:
        // PTX ISA 9.7.13.15.6: the object's memory may be used for anything
        // after; an arrive or wait on it before another init is undefined, and
        // here finds no arrivals pending.
        m = {0, 0, 0, 0};
        note_new_object(w, p);
        break;
      case MbarrierOp::cp_async_arrive:
        complete_async_copies(w, l);
        note_release(w, p);
        if (!in.parity) ++m.pending;  // without .noinc the arrival does not count toward the phase
        m.arrive(1);
        break;
    }
    m.store(p);
  });
}

}  // namespace warpforge::sim
