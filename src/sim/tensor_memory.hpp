// The tensor memory of one CTA (PTX ISA 9.7.16.1 "Tensor Memory"): 128
// lanes x 512 columns of 32-bit cells, reached through 32-bit addresses with
// the lane in bits 31-16 and the column in bits 15-0 (9.7.16.1.1). Columns
// are allocated by tcgen05.alloc in blocks of a power of two from 32 to 512
// (all 128 lanes each), released by tcgen05.dealloc of exactly such a block,
// and a CTA that has run tcgen05.relinquish_alloc_permit allocates no more
// (9.7.16.1.2, and tcgen05.alloc). Every cell a tcgen05 instruction touches must lie in an
// allocated block.
//
// The asynchronous tcgen05 operations (mma, cp, shift) a thread issues wait
// here, in issue order, until a tcgen05.commit of that thread runs them and
// arrives on its mbarrier (tcgen05.cpp).
//
// With .cta_group::2 a block is allocated at the same columns in both CTAs
// of a pair (allocate_pair), and the pair's alloc, dealloc and
// relinquish_alloc_permit are each performed by one warp of each CTA (PTX
// ISA 9.7.16.5, Table 46): `unmatched` holds those this CTA's warps have
// performed and the peer's have not yet.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace warpforge::sim {

struct Inst;

// An asynchronous tcgen05 operation: its instruction and the operand values
// read at issue.
struct PendingTcgen05 {
  const Inst* inst;
  std::uint32_t thread;  // linear thread index in the CTA
  std::array<std::uint64_t, 7> values;
};

// A .cta_group::2 alloc, dealloc or relinquish_alloc_permit that waits for
// the peer CTA's warp to perform it too: its instruction, the linear index of
// the first thread of the warp, and (alloc, dealloc) the block.
struct PairRequest {
  const Inst* inst;
  std::uint32_t thread;
  std::uint32_t address, columns;
};

class TensorMemory {
 public:
  static constexpr std::uint32_t kLanes = 128, kColumns = 512;

  static std::uint32_t lane_of(std::uint32_t address) { return address >> 16; }
  static std::uint32_t column_of(std::uint32_t address) { return address & 0xFFFF; }
  static std::uint32_t address(std::uint32_t lane, std::uint32_t column) {
    return lane << 16 | column;
  }

  // Back to the state of a CTA that has not started.
  void reset();

  // The address (lane 0) of a fresh block of `columns` columns; throws
  // SimError when `columns` is not a power of two in 32..512, after a
  // relinquish (`relinquish_line` names it), or when no block of that size is
  // free (the GPU would wait for a dealloc this CTA cannot make while it waits).
  std::uint32_t allocate(std::uint32_t columns);
  // The same for a CTA pair: the first block free in both `a` (the CTA
  // whose warp allocates) and `b` (its peer), allocated in both.
  static std::uint32_t allocate_pair(TensorMemory& a, TensorMemory& b, std::uint32_t columns);
  // Throws SimError unless `address` and `columns` are one allocated block.
  void check_block(std::uint32_t address, std::uint32_t columns) const;
  void deallocate(std::uint32_t address, std::uint32_t columns);
  void relinquish(int line);

  // The cell at (lane, column); throws SimError naming `what` unless it is
  // in an allocated block.
  std::uint32_t& cell(std::uint32_t lane, std::uint32_t column, const char* what);

  // "columns 0-31, 64-127", or "none": the allocated blocks, for messages.
  std::string describe_allocations() const;
  bool holds_allocations() const { return !blocks_.empty(); }

  std::vector<PendingTcgen05> pending;
  std::deque<PairRequest> unmatched;

 private:
  struct Block {
    std::uint32_t column, columns;
  };
  // Throws SimError for a column count the ISA does not allow or after a
  // relinquish.
  void check_allocation(std::uint32_t columns) const;
  bool is_free(std::uint32_t start, std::uint32_t columns) const;
  void claim(std::uint32_t start, std::uint32_t columns);
  [[noreturn]] static void refuse_full(std::uint32_t columns, const std::string& allocated);
  std::vector<std::uint32_t> cells_;  // lane-major; sized on the first allocation
  std::vector<Block> blocks_;
  int relinquish_line_ = 0;  // the PTX line of the CTA's relinquish, 0 before it
};

}  // namespace warpforge::sim
