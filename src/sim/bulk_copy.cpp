// Bulk copies without a tensor map (PTX ISA 9.7.9.25.4):
//
// cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
// [dstMem], [srcMem], size, [mbar] (9.7.9.25.4.1): `size` bytes of the
// issuing CTA's shared memory into the shared memory of a CTA of its
// cluster, completing complete_tx of `size` on the mbarrier, which the ISA
// requires in the destination's CTA. The simulator copies at issue (the
// earliest the copy may land; a kernel must not read the destination before
// the mbarrier says so, nor rewrite the source before it learns the copy is
// done, and nothing here can tell it otherwise).
//
// cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [dstMem],
// [srcMem], size (9.7.9.25.4.2): `size` bytes of f32 values of the CTA's
// shared memory added element by element into global memory, each add an
// atomic operation of its own (as red.global.add.f32 adds: round to nearest
// even, subnormal inputs and results flushed). Operands are checked at
// issue; the source is read and the sums written as late as the ISA allows,
// when cp.async.bulk.wait_group[.read] retires the group or the thread
// exits (as the TMA stores: tensor_copy.cpp), so a kernel that rewrites the
// source before waiting sees it, and the race checker sees the read then.
//
// Addresses and sizes are multiples of 16.
#include <cstring>
#include <string>

#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim {

namespace {

void check_size(int lane, std::uint64_t size, const char* what) {
  if (size == 0 || size % 16 != 0)
    throw AccessFault{lane, std::string(what) + " of " + std::to_string(size) +
                                " bytes; the size must be a positive multiple of 16"};
}

void copy_to_cluster(const Inst& in, Warp& w, int lane) {
  const std::uint64_t dst = address_of(w, in.op0(0), lane), src = address_of(w, in.op0(1), lane);
  const std::uint64_t size = read(w, in.op0(2), lane) & 0xFFFFFFFFu, mbar = address_of(w, in.op0(3), lane);
  check_size(lane, size, "bulk copy");
  if (&shared_owner(w, lane, src, false, 16) != w.cta)
    throw AccessFault{lane, "bulk copy source " + hex(src) + " is another CTA's shared memory; the source is .shared::cta"};
  Cta& to = shared_owner(w, lane, dst, true, 16);
  if (&shared_owner(w, lane, mbar, true, 8) != &to)
    throw AccessFault{lane, "bulk copy into CTA rank " + std::to_string(to.rank) +
                                " signals an mbarrier in another CTA; the ISA requires the destination's"};
  const std::byte* from = access(w, lane, Space::shared, src, static_cast<std::uint32_t>(size), 16, false);
  std::byte* into = access(w, lane, Space::shared, dst, static_cast<std::uint32_t>(size), 16, true);
  std::memmove(into, from, size);
  mbarrier_complete_tx(access(w, lane, Space::shared, mbar, 8, 8, true), size);
}

void reduce_add_into_global(const Inst& in, Warp& w, int lane) {
  const std::uint64_t dst = address_of(w, in.op0(0), lane), src = address_of(w, in.op0(1), lane);
  const auto size = static_cast<std::uint32_t>(read(w, in.op0(2), lane) & 0xFFFFFFFFu);
  check_size(lane, size, "bulk reduce");
  if (&shared_owner(w, lane, src, false, 16) != w.cta)
    throw AccessFault{lane, "bulk reduce source " + hex(src) + " is another CTA's shared memory; the source is .shared::cta"};
  access(w, lane, Space::shared, src, size, 16, false);  // bounds and alignment now
  access(w, lane, Space::global, dst, size, 16, true);
  const int line = in.line;
  queue_bulk_work(w, lane, [&w, lane, dst, src, size, line] {
    try {
      const std::byte* from = access(w, lane, Space::shared, src, size, 16, false);
      note_shared_access(w, lane, from, size, false);
      std::byte* into = access(w, lane, Space::global, dst, size, 16, true);
      for (std::uint32_t i = 0; i < size; i += 4)
        atomic_add_f32_global(into + i, static_cast<std::uint32_t>(load_bytes(from + i, 4)));
    } catch (const AccessFault& f) {
      throw AccessFault{f.lane, "retiring the bulk reduce at PTX line " + std::to_string(line) + ": " + f.message};
    }
  });
}

}  // namespace

void exec_bulk_copy(const Inst& in, Warp& w, std::uint32_t active) {
  for_lanes(active, [&](int lane) {
    if (in.op == Op::bulk_reduce)
      reduce_add_into_global(in, w, lane);
    else
      copy_to_cluster(in, w, lane);
  });
}

}  // namespace warpforge::sim
