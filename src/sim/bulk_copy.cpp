// cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
// [dstMem], [srcMem], size, [mbar] (PTX ISA 9.7.9.25.4.1): `size` bytes of
// the issuing CTA's shared memory into the shared memory of a CTA of its
// cluster, completing complete_tx of `size` on the mbarrier, which the ISA
// requires in the destination's CTA. The simulator copies at issue (the
// earliest the copy may land; a kernel must not read the destination before
// the mbarrier says so, nor rewrite the source before it learns the copy is
// done, and nothing here can tell it otherwise). Addresses and size are
// multiples of 16.
#include <cstring>
#include <string>

#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim {

void exec_bulk_copy(const Inst& in, Warp& w, std::uint32_t active) {
  for_lanes(active, [&](int lane) {
    const std::uint64_t dst = address_of(w, in.op0(0), lane), src = address_of(w, in.op0(1), lane);
    const std::uint64_t size = read(w, in.op0(2), lane) & 0xFFFFFFFFu, mbar = address_of(w, in.op0(3), lane);
    if (size == 0 || size % 16 != 0)
      throw AccessFault{lane, "bulk copy of " + std::to_string(size) + " bytes; the size must be a positive multiple of 16"};
    if (&shared_owner(w, lane, src, false, 16) != w.cta)
      throw AccessFault{lane, "bulk copy source " + hex(src) + " is another CTA's shared memory; the source is .shared::cta"};
    Cta& to = shared_owner(w, lane, dst, true, 16);
    if (&shared_owner(w, lane, mbar, true, 8) != &to)
      throw AccessFault{lane, "bulk copy into CTA rank " + std::to_string(to.rank) +
                                  " signals an mbarrier in another CTA; the ISA requires the destination's"};
    const std::byte* from =
        access(w, lane, Space::shared, src, static_cast<std::uint32_t>(size), 16, false);
    std::byte* into =
        access(w, lane, Space::shared, dst, static_cast<std::uint32_t>(size), 16, true);
    std::memmove(into, from, size);
    mbarrier_complete_tx(access(w, lane, Space::shared, mbar, 8, 8, true), size);
  });
}

}  // namespace warpforge::sim
