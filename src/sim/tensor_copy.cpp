// TMA tensor copies, cp.async.bulk.tensor.{1d..5d} in .tile mode (PTX ISA
// 9.7.9.25.5.1):
//   load  global -> shared::cluster at issue, completing complete_tx of the
//         box's bytes on the mbarrier; with .multicast::cluster into the same
//         CTA-relative offsets (data and mbarrier) of every CTA in ctaMask.
//   store shared::cta -> global through a bulk async-group: operands are
//         checked at issue; shared memory is read (and global memory
//         written) as late as the ISA allows, when cp.async.bulk.wait_group
//         retires the group or the thread exits, so a kernel that reuses the
//         buffer before waiting sees it.
//   reduce-add (cp.reduce.async.bulk.tensor ... .add, 9.7.9.25.5.2) as a
//         store, each element added to global memory's atomically (as
//         red.global.add does; f32 maps only).
// The tensor map is the simulator's encoding (sim/tensor_map_encoding.hpp),
// read from the generic address the instruction gives (a kernel parameter
// through cvta.param, a global buffer) or from the .param-space address
// `mov.u64 %rd, param` yields. The box is the map's box; elements whose
// coordinates fall outside [0, dims) read as zero and are not written back
// (5.5.5 "Out of Bounds Access"). In shared memory the box lies row after
// row (dimension 0 fastest), swizzled by the map's mode (swizzle_address).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "execute.hpp"
#include "memory_access.hpp"
#include "tensor_map_encoding.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

// PTX ISA 9.7.9.25.5.1: the shared memory of a tensor copy is 128-byte aligned.
constexpr std::uint64_t kSharedAlign = 128;

const std::byte* tensor_map_bytes(Warp& w, int lane, std::uint64_t address) {
  if (address < w.cta->launch->params.size())  // a .param-space address: no global address is this small
    return access(w, lane, Space::param, address, 128, 64, false);
  return access(w, lane, Space::generic, address, 128, 64, false);
}

// The box of one copy: the map, the starting coordinates and the element
// counts per dimension (a box of b elements at element stride s has
// ceil(b / s) of them).
struct Box {
  TensorMapInfo map;
  std::int64_t start[5] = {};
  std::uint64_t count[5] = {1, 1, 1, 1, 1};
  std::uint64_t rows = 1;       // product of count[1..]
  std::uint64_t row_bytes = 0;  // count[0] elements
  std::uint64_t bytes() const { return rows * row_bytes; }
};

Box read_box(const Inst& in, Warp& w, int lane, const std::vector<Arg>& tensor) {
  Box box;
  const std::uint64_t address = address_of(w, tensor[0], lane);
  const std::string why = decode_tensor_map(tensor_map_bytes(w, lane, address), box.map);
  if (!why.empty())
    throw AccessFault{lane, "the tensor map at " + hex(address) + " is not a simulator tensor map: " + why};
  if (box.map.rank != in.extent)
    throw AccessFault{lane, "a ." + std::to_string(in.extent) + "d tensor copy with a rank-" +
                                std::to_string(box.map.rank) + " tensor map"};
  for (std::uint32_t d = 0; d < box.map.rank; ++d) {
    box.start[d] = static_cast<std::int32_t>(read(w, tensor[d + 1], lane));
    box.count[d] = (box.map.box[d] + box.map.element_strides[d] - 1) / box.map.element_strides[d];
    if (d > 0) box.rows *= box.count[d];
  }
  box.row_bytes = box.count[0] * box.map.element_bytes;
  return box;
}

// Calls f(row, global row address, first, last) for each row of the box whose
// outer coordinates are in bounds, with [first, last) its in-bounds elements.
template <class F>
void for_rows(const Box& b, F&& f) {
  const TensorMapInfo& m = b.map;
  const std::int64_t es0 = m.element_strides[0];
  // elements i with 0 <= start0 + i*es0 < dims0
  const std::int64_t lo = b.start[0] >= 0 ? 0 : (-b.start[0] + es0 - 1) / es0;
  const std::int64_t hi_coord = static_cast<std::int64_t>(m.dims[0]) - b.start[0];  // start0 + i*es0 < dims0
  const std::int64_t hi = hi_coord <= 0 ? 0 : std::min<std::int64_t>(static_cast<std::int64_t>(b.count[0]), (hi_coord + es0 - 1) / es0);
  if (lo >= hi) return;
  for (std::uint64_t row = 0; row < b.rows; ++row) {
    std::uint64_t rest = row, address = m.address;
    bool inside = true;
    for (std::uint32_t d = 1; d < m.rank; ++d) {
      const std::int64_t c = b.start[d] + static_cast<std::int64_t>(rest % b.count[d]) * m.element_strides[d];
      rest /= b.count[d];
      if (c < 0 || c >= static_cast<std::int64_t>(m.dims[d])) {
        inside = false;
        break;
      }
      address += static_cast<std::uint64_t>(c) * m.strides[d];
    }
    if (inside) f(row, address, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi));
  }
}

// The global bytes of elements [first, last) of a row.
std::byte* global_span(Warp& w, int lane, const Box& b, std::uint64_t row_address, std::uint64_t first,
                       std::uint64_t last, bool write) {
  const TensorMapInfo& m = b.map;
  const std::uint64_t es0 = m.element_strides[0];
  const std::uint64_t c0 = static_cast<std::uint64_t>(b.start[0] + static_cast<std::int64_t>(first * es0));
  const std::uint64_t from = row_address + c0 * m.element_bytes;
  const std::uint64_t size = ((last - 1 - first) * es0 + 1) * m.element_bytes;
  GlobalMemory& global = w.cta->launch->global;
  if (std::byte* p = global.find(from, size)) return p;
  throw AccessFault{lane, std::string("TMA ") + (write ? "store" : "load") + " of " + std::to_string(size) +
                              " bytes at global address " + hex(from) +
                              " (a row of the tensor map's box) is outside every allocation; nearest: " +
                              global.describe_nearest(from)};
}

// Checks that the box fits at `offset` in the CTA's shared memory.
void check_shared(int lane, const Cta& cta, std::uint64_t offset, std::uint64_t bytes, const char* what) {
  if (offset % kSharedAlign != 0)
    throw AccessFault{lane, std::string("TMA ") + what + " shared address " + hex(offset) +
                                " is not 128-byte aligned"};
  if (offset + bytes > cta.shared.size())
    throw AccessFault{lane, std::string("TMA ") + what + " box of " + std::to_string(bytes) + " bytes at shared address " +
                                hex(offset) + " leaves the " + std::to_string(cta.shared.size()) +
                                " bytes of shared memory of CTA rank " + std::to_string(cta.rank)};
}

// Copies between the box laid out linearly (`linear`) and its swizzled place
// in shared memory at `offset`, in pieces that never straddle a 16-byte chunk.
void swizzled_copy(std::byte* shared, std::uint64_t offset, std::byte* linear, std::uint64_t bytes, std::uint32_t span,
                   std::uint32_t element_bytes, bool to_shared) {
  const std::uint64_t piece = bytes % 16 == 0 ? 16 : element_bytes;
  for (std::uint64_t i = 0; i < bytes; i += piece) {
    std::byte* s = shared + swizzle_address(offset + i, span);
    if (to_shared)
      std::memcpy(s, linear + i, piece);
    else
      std::memcpy(linear + i, s, piece);
  }
}

void load(const Inst& in, Warp& w, int lane) {
  const Box b = read_box(in, w, lane, in.ops[1]);
  const TensorMapInfo& m = b.map;
  std::vector<std::byte> data(b.bytes(), std::byte{0});  // out-of-bounds elements stay zero
  for_rows(b, [&](std::uint64_t row, std::uint64_t address, std::uint64_t first, std::uint64_t last) {
    const std::byte* src = global_span(w, lane, b, address, first, last, false);
    std::byte* dst = data.data() + row * b.row_bytes + first * m.element_bytes;
    const std::uint64_t step = std::uint64_t{m.element_strides[0]} * m.element_bytes;
    if (m.element_strides[0] == 1)
      std::memcpy(dst, src, (last - first) * m.element_bytes);
    else
      for (std::uint64_t i = 0; i < last - first; ++i)
        std::memcpy(dst + i * m.element_bytes, src + i * step, m.element_bytes);
  });
  const std::uint64_t dst = address_of(w, in.op0(0), lane);
  const std::uint64_t mbar = address_of(w, in.op0(2), lane);
  std::vector<Cta*> targets;
  if (in.multicast) {
    const auto mask = static_cast<std::uint32_t>(read(w, in.op0(3), lane)) & 0xFFFFu;
    for_lanes(mask, [&](int rank) {
      targets.push_back(&shared_owner(w, lane, cluster_shared_address(static_cast<std::uint32_t>(rank), 0), true, 16));
    });
  } else {
    targets.push_back(&shared_owner(w, lane, dst, true, 16));
    if (&shared_owner(w, lane, mbar, true, 8) != targets[0])
      throw AccessFault{lane, "TMA load into CTA rank " + std::to_string(targets[0]->rank) +
                                  " signals an mbarrier in another CTA; the ISA requires the same CTA"};
  }
  for (Cta* cta : targets) {
    check_shared(lane, *cta, dst & kOffsetMask, b.bytes(), "load destination");
    const std::uint64_t bar = mbar & kOffsetMask;
    if (bar % 8 != 0 || bar + 8 > cta->shared.size())
      throw AccessFault{lane, "TMA load's mbarrier at shared address " + hex(bar) + " is not an aligned 8-byte "
                                  "object inside the shared memory of CTA rank " + std::to_string(cta->rank)};
    swizzled_copy(cta->shared.data(), dst & kOffsetMask, data.data(), b.bytes(), m.swizzle_bytes, m.element_bytes,
                  true);
    if (cta == w.cta) {  // the bytes land, then the mbarrier completes their transaction
      note_shared_access(w, lane, cta->shared.data() + (dst & kOffsetMask), b.bytes(), true);
      note_release(w, cta->shared.data() + bar);
    }
    mbarrier_complete_tx(cta->shared.data() + bar, b.bytes());
  }
}

// The store's work when its bulk group retires: read the box from shared
// memory, write (`add`: add) its in-bounds part to global memory.
void complete_store(Warp& w, int lane, const Box& b, Cta& cta, std::uint64_t src, bool add) {
  const TensorMapInfo& m = b.map;
  std::vector<std::byte> data(b.bytes());
  if (&cta == w.cta) note_shared_access(w, lane, cta.shared.data() + (src & kOffsetMask), b.bytes(), false);
  swizzled_copy(cta.shared.data(), src & kOffsetMask, data.data(), b.bytes(), m.swizzle_bytes, m.element_bytes,
                false);
  for_rows(b, [&](std::uint64_t row, std::uint64_t address, std::uint64_t first, std::uint64_t last) {
    std::byte* dst = global_span(w, lane, b, address, first, last, true);
    const std::byte* from = data.data() + row * b.row_bytes + first * m.element_bytes;
    const std::uint64_t step = std::uint64_t{m.element_strides[0]} * m.element_bytes;
    if (add)
      for (std::uint64_t i = 0; i < last - first; ++i)
        atomic_add_f32_global(dst + i * step, static_cast<std::uint32_t>(load_bytes(from + i * 4, 4)));
    else if (m.element_strides[0] == 1)
      std::memcpy(dst, from, (last - first) * m.element_bytes);
    else
      for (std::uint64_t i = 0; i < last - first; ++i)
        std::memcpy(dst + i * step, from + i * m.element_bytes, m.element_bytes);
  });
}

// Checks the store's operands now and queues its work in the lane's open
// bulk group.
void store(const Inst& in, Warp& w, int lane, bool add) {
  const Box b = read_box(in, w, lane, in.ops[0]);
  if (add && b.map.dtype != runtime::DType::f32)
    throw AccessFault{lane, "cp.reduce.async.bulk.tensor's .add is simulated on f32 tensor maps only, not " +
                                std::string(runtime::name(b.map.dtype))};
  const std::uint64_t src = address_of(w, in.op0(1), lane);
  Cta& cta = shared_owner(w, lane, src, false, 16);
  check_shared(lane, cta, src & kOffsetMask, b.bytes(), "store source");
  const int line = in.line;
  queue_bulk_work(w, lane, [&w, lane, b, &cta, src, line, add] {
    try {
      complete_store(w, lane, b, cta, src, add);
    } catch (const AccessFault& f) {
      throw AccessFault{f.lane, std::string("retiring the TMA ") + (add ? "reduce-add" : "store") + " at PTX line " +
                                    std::to_string(line) + ": " + f.message};
    }
  });
}

void retire(std::vector<std::function<void()>>& group) {
  for (auto& work : group) work();
  group.clear();
}

}  // namespace

void queue_bulk_work(Warp& w, int lane, std::function<void()> work) {
  if (w.bulk.empty()) w.bulk.resize(32);
  w.bulk[static_cast<std::size_t>(lane)].open.push_back(std::move(work));
}

void exec_bulk_group(const Inst& in, Warp& w, std::uint32_t active) {
  if (w.bulk.empty()) return;  // no TMA store or bulk reduce was ever issued
  for_lanes(active, [&](int lane) {
    LaneBulkStores& q = w.bulk[static_cast<std::size_t>(lane)];
    if (in.op == Op::bulk_commit) {
      q.committed.push_back(std::move(q.open));
      q.open.clear();
      return;
    }
    // wait_group[.read] N: all but the N newest committed groups complete
    const std::size_t keep = in.op0(0).bits;
    while (q.committed.size() > keep) {
      retire(q.committed.front());
      q.committed.erase(q.committed.begin());
    }
  });
}

void complete_bulk_stores(Warp& w, int lane) {
  if (w.bulk.empty()) return;
  LaneBulkStores& q = w.bulk[static_cast<std::size_t>(lane)];
  for (auto& group : q.committed) retire(group);
  retire(q.open);
  q.committed.clear();
}

void exec_tensor_copy(const Inst& in, Warp& w, std::uint32_t active) {
  const auto dir = static_cast<TensorCopyDir>(in.mode);
  for_lanes(active, [&](int lane) {
    if (dir == TensorCopyDir::global_to_shared)
      load(in, w, lane);
    else
      store(in, w, lane, dir == TensorCopyDir::shared_to_global_add);
  });
}

}  // namespace warpforge::sim
