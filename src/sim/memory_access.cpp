#include "memory_access.hpp"

#include <cstring>

namespace warpforge::sim {
namespace {

[[noreturn]] void fault(int lane, bool write, std::uint32_t size, Space space,
                        std::uint64_t address, const std::string& why) {
  throw AccessFault{lane, std::string(write ? "store" : "load") + " of " + std::to_string(size) +
                              " bytes at " + std::string(ptx::name(space)) + " address " +
                              hex(address) + " " + why};
}

std::byte* in_buffer(std::byte* base, std::size_t buffer_size, const char* what, int lane,
                     bool write, std::uint32_t size, Space space, std::uint64_t address) {
  if (address > buffer_size || size > buffer_size - address)
    fault(lane, write, size, space, address,
          "is out of bounds: " + std::string(what) + " [0x0, " + hex(buffer_size) + ") of " +
              std::to_string(buffer_size) + " bytes");
  return base + address;
}

}  // namespace

Cta& shared_owner(Warp& w, int lane, std::uint64_t address, bool write, std::uint32_t size) {
  Cta& cta = *w.cta;
  const std::uint64_t rank_field = address >> kRankShift;
  if (rank_field == 0) return cta;
  const std::vector<Cta>& ctas = cta.cluster->ctas;
  if (rank_field > ctas.size())
    fault(lane, write, size, Space::shared, address,
          "names CTA rank " + std::to_string(rank_field - 1) + " of the cluster, which has " +
              std::to_string(ctas.size()) + " CTA" + (ctas.size() == 1 ? "" : "s"));
  return cta.cluster->ctas[rank_field - 1];
}

std::byte* access(Warp& w, int lane, Space space, std::uint64_t address, std::uint32_t size,
                  std::uint32_t align, bool write) {
  Cta& cta = *w.cta;
  const LaunchState& launch = *cta.launch;
  if (space == Space::generic) {
    if (address - kSharedWindow < kWindowSize) {
      space = Space::shared;
      address -= kSharedWindow;
    } else if (address - kLocalWindow < kWindowSize) {
      space = Space::local;
      address -= kLocalWindow;
    } else if (address - kParamWindow < kWindowSize) {
      space = Space::param;
      address -= kParamWindow;
    } else {
      space = Space::global;
    }
  }
  // PTX ISA 5.4.5: accesses must be naturally aligned to their (vector) size.
  if (address % align != 0)
    fault(lane, write, size, space, address,
          "is misaligned: it must be a multiple of " + std::to_string(align));
  switch (space) {
    case Space::global: {
      if (std::byte* p = launch.global.find(address, size)) return p;
      fault(lane, write, size, space, address,
            "is outside every allocation; nearest: " + launch.global.describe_nearest(address));
    }
    case Space::shared: {
      if (address <= kOffsetMask)
        return in_buffer(cta.shared.data(), cta.shared.size(), "the CTA's shared memory", lane, write, size, space,
                         address);
      Cta& owner = shared_owner(w, lane, address, write, size);
      const std::string what = "the shared memory of CTA rank " + std::to_string(owner.rank) + " of the cluster";
      return in_buffer(owner.shared.data(), owner.shared.size(), what.c_str(), lane, write, size, space,
                       address & kOffsetMask);
    }
    case Space::local: {
      const std::uint32_t bytes = launch.kernel.local_bytes;
      return in_buffer(w.local.data() + std::size_t{bytes} * lane, bytes,
                       "the thread's local memory", lane, write, size, space, address);
    }
    case Space::param:
      if (write)
        fault(lane, write, size, space, address,
              "is a store to kernel parameters, which are read-only");
      return in_buffer(const_cast<std::byte*>(launch.params.data()), launch.params.size(),
                       "the kernel parameters", lane, write, size, space, address);
    case Space::const_:
      if (write)
        fault(lane, write, size, space, address,
              "is a store to the constant space, which is read-only");
      return in_buffer(const_cast<std::byte*>(launch.const_bank.data()), launch.const_bank.size(),
                       "the module's constant bank", lane, write, size, space, address);
    case Space::generic:  // resolved above
    case Space::reg:      // no instruction addresses these
    case Space::sreg:
    case Space::tex:
      break;
  }
  fault(lane, write, size, space, address, "has no state space");
}

std::uint64_t load_bytes(const std::byte* p, std::uint32_t size) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian, as the GPU
  return v;
}

void store_bytes(std::byte* p, std::uint32_t size, std::uint64_t value) {
  std::memcpy(p, &value, size);
}

}  // namespace warpforge::sim
