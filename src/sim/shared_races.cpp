#include "shared_races.hpp"

#include <algorithm>
#include <string>

#include "memory_access.hpp"

namespace warpforge::sim {

void SharedRaces::reset(std::uint32_t warps, std::size_t bytes) {
  warps_ = warps;
  bytes_ = bytes;
  clocks_.assign(warps, Clock{});
  for (std::uint32_t w = 0; w < warps; ++w) clocks_[w][w] = 1;  // clock 0 means "never"
  objects_.clear();
  writer_.assign(bytes, kNone);
  write_clock_.assign(bytes, 0);
  write_pc_.assign(bytes, 0);
  read_clock_.assign(std::size_t{warps} * bytes, 0);
  read_pc_.assign(bytes, 0);
}

SharedRaces::Race SharedRaces::access(std::uint32_t warp, std::uint32_t pc, const std::byte* memory,
                                      std::size_t offset, std::size_t size, bool write, const std::byte* data) {
  const Clock& mine = clocks_[warp];
  const std::size_t end = std::min(offset + size, bytes_);
  // One pass, checking and recording byte by byte: a race stops the launch,
  // so the bytes recorded before it do not matter.
  for (std::size_t b = offset; b < end; ++b) {
    if (write && data && data[b - offset] == memory[b]) continue;
    const std::uint8_t writer = writer_[b];
    if (writer != kNone && writer != warp && write_clock_[b] > mine[writer])
      return {true, true, writer, write_pc_[b], b};
    std::uint32_t* reads = &read_clock_[b * warps_];
    if (!write) {
      reads[warp] = mine[warp];
      read_pc_[b] = pc;
      continue;
    }
    for (std::uint32_t r = 0; r < warps_; ++r)
      if (r != warp && reads[r] > mine[r]) return {true, false, r, read_pc_[b], b};
    std::fill(reads, reads + warps_, 0u);
    writer_[b] = static_cast<std::uint8_t>(warp);
    write_clock_[b] = mine[warp];
    write_pc_[b] = pc;
  }
  return {};
}

void SharedRaces::release(std::uint32_t warp, const void* object) {
  Clock& o = objects_[object];
  Clock& mine = clocks_[warp];
  for (std::uint32_t w = 0; w < warps_; ++w) o[w] = std::max(o[w], mine[w]);
  ++mine[warp];
}

void SharedRaces::acquire(std::uint32_t warp, const void* object) {
  const auto it = objects_.find(object);
  if (it == objects_.end()) return;
  Clock& mine = clocks_[warp];
  for (std::uint32_t w = 0; w < warps_; ++w) mine[w] = std::max(mine[w], it->second[w]);
}

void SharedRaces::forget(const void* object) {
  objects_.erase(object);
}

void record_shared_access(Warp& w, int lane, const std::byte* p, std::size_t size, bool write,
                          const std::byte* data) {
  Cta& cta = *w.cta;
  const auto offset = static_cast<std::size_t>(p - cta.shared.data());
  if (p < cta.shared.data() || offset >= cta.shared.size()) return;  // not this CTA's shared memory
  const std::uint32_t pc = w.pc[static_cast<std::size_t>(lane)];
  const SharedRaces::Race race = cta.races->access(w.index, pc, cta.shared.data(), offset, size, write, data);
  if (!race.found) return;
  const Kernel& k = cta.launch->kernel;
  const Inst& earlier = k.code[race.pc];
  const std::string source = earlier.source ? " from " + k.sources[earlier.source] : "";
  throw AccessFault{lane, "shared-memory race: " + std::string(write ? "a write" : "a read") + " of shared byte " +
                              hex(race.offset) + " by warp " + std::to_string(w.index) + ", and " +
                              (race.earlier_write ? "a write" : "a read") + " of it by warp " +
                              std::to_string(race.warp) + " at PTX line " + std::to_string(earlier.line) + " (" +
                              earlier.text + ")" + source +
                              ", with no barrier or mbarrier wait ordering them"};
}

}  // namespace warpforge::sim
