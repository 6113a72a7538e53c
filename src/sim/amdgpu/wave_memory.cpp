// Global, LDS and buffer accesses of a wave.
#include <cstring>

#include "wave.hpp"

namespace warpforge::sim::amdgpu {

std::byte* Wave::global_bytes(const Inst& in, int lane, std::uint64_t address, int bytes,
                              const char* what) {
  std::byte* p = group_.memory.find(address, static_cast<std::size_t>(bytes));
  if (!p)
    fail(in, lane,
         std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(address) +
             " is outside every allocation: nearest is " + group_.memory.describe_nearest(address));
  return p;
}

void Wave::memory(const Inst& in, int lane) {
  const bool is_load = in.op == Op::load;
  const Operand& ptr = in.args[0];
  const int bytes = info(in.type).bytes;
  const std::uint64_t address = scalar(ptr, lane);
  const char* what = is_load ? "load" : "store";
  if (address % static_cast<std::uint64_t>(bytes) != 0)
    fail(in, lane,
         std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(address) +
             " is misaligned: the address must be a multiple of " + std::to_string(bytes));
  std::byte* at;
  if (ptr.type == Type::ptr_lds) {
    if (address + static_cast<std::uint64_t>(bytes) > group_.lds.size())
      fail(in, lane,
           std::string("LDS ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
               std::to_string(address) + " is outside the kernel's " +
               std::to_string(group_.lds.size()) + "-byte LDS");
    at = group_.lds.data() + address;
  } else {
    at = global_bytes(in, lane, address, bytes, is_load ? "global load" : "global store");
  }
  // Registers hold values little-endian in 32-bit words, as memory does.
  if (is_load) {
    std::uint32_t* d = words(in.dst, lane);
    std::memset(d, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(info(in.type).words));
    std::memcpy(d, at, static_cast<std::size_t>(bytes));
  } else {
    std::uint32_t scratch[2];
    std::memcpy(at, read(in.args[1], lane, scratch), static_cast<std::size_t>(bytes));
  }
}

// Raw buffer access (stride 0, no index): the address is base + voffset; an
// out-of-range access reads as zero and is not written (AMD CDNA3 ISA, "Buffer
// Instructions", range checking with stride 0). The simulator checks each
// dword of an x2 / x4 access on its own (in range when its last byte is below
// num_records): that per-dword detail is our reading, not a measurement, and
// accesses wholly in or out of range, like the tutorial kernels', do not
// depend on it. A descriptor whose range covers memory outside its
// allocation is reported like any other bad access.
void Wave::buffer(const Inst& in, int lane) {
  const std::uint32_t* r = words(in.args[0].reg, lane);
  const std::uint64_t base = r[0] | (std::uint64_t{r[1] & 0xFFFFu} << 32);
  const std::uint64_t records = r[2];
  const std::uint64_t offset = scalar(in.args[1], lane);
  const int dwords = info(in.type).bytes / 4;
  const bool is_load = in.op == Op::buffer_load;
  std::uint32_t* d = is_load ? words(in.dst, lane) : nullptr;
  std::uint32_t scratch[2];
  const std::uint32_t* v = is_load ? nullptr : read(in.args[2], lane, scratch);
  for (int i = 0; i < dwords; ++i) {
    std::uint64_t at = offset + 4u * static_cast<std::uint64_t>(i);
    bool in_range = at + 4 <= records;
    if (is_load) {
      d[i] = 0;
      if (in_range)
        std::memcpy(&d[i],
                    global_bytes(in, lane, base + at, 4, "buffer load (in the descriptor's range)"),
                    4);
    } else if (in_range) {
      std::memcpy(global_bytes(in, lane, base + at, 4, "buffer store (in the descriptor's range)"),
                  &v[i], 4);
    }
  }
}

}  // namespace warpforge::sim::amdgpu
