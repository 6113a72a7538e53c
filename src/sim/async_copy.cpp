// cp.async with commit_group / wait_group / wait_all (PTX ISA 9.7.9.25.3).
// The source is read (and bounds-checked) when the copy is issued; the bytes
// reach shared memory only when a wait retires the copy's group, so a kernel
// that reads the destination before waiting sees the old contents.
#include <algorithm>
#include <cstring>

#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

void retire(Warp& w, int lane, const std::vector<AsyncCopy>& group) {
  for (const AsyncCopy& c : group) {
    std::byte* dst = access(w, lane, Space::shared, c.shared_address, c.size, c.size, true);
    note_shared_access(w, lane, dst, c.size, true, c.data.data());
    std::memcpy(dst, c.data.data(), c.size);
  }
}

}  // namespace

void complete_async_copies(Warp& w, int lane) {
  if (w.async.empty()) return;
  LaneAsyncCopies& q = w.async[static_cast<std::size_t>(lane)];
  for (const auto& group : q.committed) retire(w, lane, group);
  retire(w, lane, q.open);
  q.committed.clear();
  q.open.clear();
}

void exec_async_copy(const Inst& in, Warp& w, std::uint32_t active) {
  if (w.async.empty()) w.async.resize(32);
  switch (in.op) {
    case Op::cp_async: {
      const auto size = static_cast<std::uint32_t>(in.op0(2).bits);
      for_lanes(active, [&](int l) {
        const std::uint64_t src_size = in.ops.size() > 3 ? read(w, in.op0(3), l) : size;
        if (src_size > size)
          throw SimError("cp.async src-size " + std::to_string(src_size) +
                         " exceeds the copy size " + std::to_string(size));
        AsyncCopy c{address_of(w, in.op0(0), l), static_cast<std::uint8_t>(size), {}};
        access(w, l, Space::shared, c.shared_address, size, size, true);
        if (src_size) {  // the bytes past src-size are zero-filled
          const std::byte* src = access(w, l, Space::global, address_of(w, in.op0(1), l),
                                        static_cast<std::uint32_t>(src_size), size, false);
          std::memcpy(c.data.data(), src, src_size);
        }
        w.async[l].open.push_back(c);
      });
      return;
    }
    case Op::cp_async_commit:
      for_lanes(active, [&](int l) {
        w.async[l].committed.push_back(std::move(w.async[l].open));
        w.async[l].open.clear();
      });
      return;
    case Op::cp_async_wait_group:
    case Op::cp_async_wait_all: {
      // wait_all is commit_group followed by wait_group 0.
      for_lanes(active, [&](int l) {
        LaneAsyncCopies& q = w.async[l];
        std::size_t keep = 0;
        if (in.op == Op::cp_async_wait_all) {
          q.committed.push_back(std::move(q.open));
          q.open.clear();
        } else {
          keep = static_cast<std::size_t>(read(w, in.op0(0), l));
        }
        while (q.committed.size() > keep) {
          retire(w, l, q.committed.front());
          q.committed.erase(q.committed.begin());
        }
      });
      return;
    }
    default:
      throw SimError("not a cp.async instruction");
  }
}

}  // namespace warpforge::sim
