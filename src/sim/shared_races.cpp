#include "shared_races.hpp"

#include <algorithm>
#include <string>

#include "memory_access.hpp"

namespace warpforge::sim {

void SharedRaces::reset(std::uint32_t warps, std::size_t bytes) {
  warps_ = warps;
  components_ = warps + warps / 4;
  bytes_ = bytes;
  clocks_.assign(warps, Clock{});
  for (std::uint32_t w = 0; w < warps; ++w) clocks_[w][w] = 1;  // clock 0 means "never"
  group_epoch_.assign(warps / 4, 0);
  group_issues_.assign(warps / 4, Clock{});
  objects_.clear();
  writer_.assign(bytes, kNone);
  write_clock_.assign(bytes, 0);
  write_pc_.assign(bytes, 0);
  also_writer_.assign(bytes, kNone);
  also_clock_.assign(bytes, 0);
  also_pc_.assign(bytes, 0);
  read_clock_.assign(std::size_t{components_} * bytes, 0);
  read_pc_.assign(bytes, 0);
  wgmma_read_pc_.assign(bytes, 0);
}

// Whether a write by `writer` (kNone: none) in its epoch `clock` is ordered
// before an access by `self` (kNone: an asynchronous read, compared by
// clock alone) whose clock is `c`.
bool SharedRaces::ordered(std::uint8_t writer, std::uint32_t clock, const Clock& c, std::uint8_t self) {
  return writer == kNone || writer == self || clock <= c[writer];
}

SharedRaces::Race SharedRaces::access(std::uint32_t warp, std::uint32_t pc, const std::byte* memory,
                                      std::size_t offset, std::size_t size, bool write, const std::byte* data) {
  const Clock& mine = clocks_[warp];
  const auto self = static_cast<std::uint8_t>(warp);
  const std::size_t end = std::min(offset + size, bytes_);
  // One pass, checking and recording byte by byte: a race stops the launch,
  // so the bytes recorded before it do not matter.
  for (std::size_t b = offset; b < end; ++b) {
    const std::uint8_t writer = writer_[b], also = also_writer_[b];
    const bool after_writer = ordered(writer, write_clock_[b], mine, self);
    if (write && data && data[b - offset] == memory[b]) {
      // The value the byte holds, again: no race, but an access ordered
      // after this write alone is ordered after one that wrote its value.
      if (!after_writer) {
        also_writer_[b] = self;
        also_clock_[b] = mine[warp];
        also_pc_[b] = pc;
      }
      continue;
    }
    const bool after_also = ordered(also, also_clock_[b], mine, self);
    if (!after_writer && (write || also == kNone || !after_also)) return {true, true, writer, write_pc_[b], b};
    if (write && !after_also) return {true, true, also, also_pc_[b], b};
    std::uint32_t* reads = &read_clock_[b * components_];
    if (!write) {
      reads[warp] = mine[warp];
      read_pc_[b] = pc;
      continue;
    }
    for (std::uint32_t r = 0; r < components_; ++r)
      if (r != warp && reads[r] > mine[r])
        return {true, false, r, r < warps_ ? read_pc_[b] : wgmma_read_pc_[b], b};
    std::fill(reads, reads + components_, 0u);
    writer_[b] = self;
    write_clock_[b] = mine[warp];
    write_pc_[b] = pc;
    also_writer_[b] = kNone;
  }
  return {};
}

SharedRaces::Clock SharedRaces::issue_async_read(std::uint32_t warp) {
  const Clock issued = clocks_[warp];
  ++clocks_[warp][warp];
  return issued;
}

void SharedRaces::begin_retirement(std::uint32_t group, const Clock& issues) {
  ++group_epoch_[group];
  group_issues_[group] = issues;
}

SharedRaces::Race SharedRaces::async_read(std::uint32_t group, std::uint32_t pc, const Clock& issued,
                                          std::size_t offset, std::size_t size) {
  const std::size_t end = std::min(offset + size, bytes_);
  const std::uint32_t component = warps_ + group;
  for (std::size_t b = offset; b < end; ++b) {
    // The issue started a new epoch of the issuing warp, so a write by it
    // after the issue is later than `issued` too.
    const std::uint8_t writer = writer_[b], also = also_writer_[b];
    if (!ordered(writer, write_clock_[b], issued, kNone) &&
        (also == kNone || !ordered(also, also_clock_[b], issued, kNone)))
      return {true, true, writer, write_pc_[b], b};
    read_clock_[b * components_ + component] = group_epoch_[group];
    wgmma_read_pc_[b] = pc;
  }
  return {};
}

void SharedRaces::retired(std::uint32_t warp, std::uint32_t group) {
  Clock& mine = clocks_[warp];
  for (std::uint32_t c = 0; c < components_; ++c) mine[c] = std::max(mine[c], group_issues_[group][c]);
  mine[warps_ + group] = std::max(mine[warps_ + group], group_epoch_[group]);
}

void SharedRaces::release(std::uint32_t warp, const void* object) {
  Clock& o = objects_[object];
  Clock& mine = clocks_[warp];
  for (std::uint32_t c = 0; c < components_; ++c) o[c] = std::max(o[c], mine[c]);
  ++mine[warp];
}

void SharedRaces::acquire(std::uint32_t warp, const void* object) {
  const auto it = objects_.find(object);
  if (it == objects_.end()) return;
  Clock& mine = clocks_[warp];
  for (std::uint32_t c = 0; c < components_; ++c) mine[c] = std::max(mine[c], it->second[c]);
}

void SharedRaces::forget(const void* object) {
  objects_.erase(object);
}

namespace {

// "at PTX line 12 (st.shared.u32 [%r6], %r4) from kernel.py:3:4"
std::string instruction_at(const Kernel& k, std::uint32_t pc) {
  const Inst& in = k.code[pc];
  const std::string source = in.source ? " from " + k.sources[in.source] : "";
  return "at PTX line " + std::to_string(in.line) + " (" + in.text + ")" + source;
}

}  // namespace

void record_shared_access(Warp& w, int lane, const std::byte* p, std::size_t size, bool write,
                          const std::byte* data) {
  Cta& cta = *w.cta;
  const auto offset = static_cast<std::size_t>(p - cta.shared.data());
  if (p < cta.shared.data() || offset >= cta.shared.size()) return;  // not this CTA's shared memory
  const std::uint32_t pc = w.pc[static_cast<std::size_t>(lane)];
  const SharedRaces::Race race = cta.races->access(w.index, pc, cta.shared.data(), offset, size, write, data);
  if (!race.found) return;
  const Kernel& k = cta.launch->kernel;
  const std::uint32_t warps = cta.races->warps();
  const std::string earlier =
      race.warp < warps ? std::string(race.earlier_write ? "a write" : "a read") + " of it by warp " +
                              std::to_string(race.warp) + " " + instruction_at(k, race.pc)
                        : "a read of it by warpgroup " + std::to_string(race.warp - warps) +
                              "'s wgmma.mma_async " + instruction_at(k, race.pc) +
                              ", which reads until the wgmma.wait_group that retires it";
  throw AccessFault{lane, "shared-memory race: " + std::string(write ? "a write" : "a read") + " of shared byte " +
                              hex(race.offset) + " by warp " + std::to_string(w.index) + ", and " + earlier +
                              ", with no barrier or mbarrier wait ordering them"};
}

void record_wgmma_read(Warp& w, const PendingWgmma& p, std::size_t offset, std::size_t size) {
  Cta& cta = *w.cta;
  const Kernel& k = cta.launch->kernel;
  const auto pc = static_cast<std::uint32_t>(p.inst - k.code.data());
  const SharedRaces::Race race = cta.races->async_read(w.index / 4, pc, p.issued, offset, size);
  if (!race.found) return;
  const std::string write =
      race.warp == w.index
          ? "warp " + std::to_string(w.index) + " itself wrote it " + instruction_at(k, race.pc) +
                " after the issue"
          : "warp " + std::to_string(race.warp) + " wrote it " + instruction_at(k, race.pc) +
                ", with no barrier or mbarrier wait ordering the write before the wgmma's issue";
  throw AccessFault{0, "shared-memory race: the wgmma.mma_async " + instruction_at(k, pc) + " of warp " +
                           std::to_string(w.index) + " reads shared byte " + hex(race.offset) +
                           " from its issue until this wgmma.wait_group retires it, and " + write};
}

}  // namespace warpforge::sim
