#include "tensor_memory.hpp"

#include <algorithm>

#include "warpforge/error.hpp"
#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim {

void TensorMemory::reset() {
  cells_.clear();
  blocks_.clear();
  pending.clear();
  unmatched.clear();
  relinquish_line_ = 0;
}

void TensorMemory::check_allocation(std::uint32_t columns) const {
  if (columns < 32 || columns > kColumns || (columns & (columns - 1)) != 0)
    throw SimError("tcgen05.alloc of " + std::to_string(columns) +
                   " columns; a power of two in 32..512 (PTX ISA 9.7.16.1.2)");
  if (relinquish_line_)
    throw SimError(
        "tcgen05.alloc after this CTA relinquished its allocation permit "
        "(tcgen05.relinquish_alloc_permit "
        "at PTX line " +
        std::to_string(relinquish_line_) + ")");
}

bool TensorMemory::is_free(std::uint32_t start, std::uint32_t columns) const {
  return std::none_of(blocks_.begin(), blocks_.end(), [&](const Block& b) {
    return start < b.column + b.columns && b.column < start + columns;
  });
}

void TensorMemory::claim(std::uint32_t start, std::uint32_t columns) {
  if (cells_.empty()) cells_.assign(std::size_t{kLanes} * kColumns, 0);
  blocks_.push_back({start, columns});
}

void TensorMemory::refuse_full(std::uint32_t columns, const std::string& allocated) {
  throw SimError("tcgen05.alloc of " + std::to_string(columns) + " columns with " + allocated +
                 " of 512 allocated: no free block; on the GPU the warp would wait for a "
                 "tcgen05.dealloc, which "
                 "this CTA cannot make while it waits");
}

std::uint32_t TensorMemory::allocate(std::uint32_t columns) {
  check_allocation(columns);
  // First fit among blocks aligned to their size.
  for (std::uint32_t start = 0; start + columns <= kColumns; start += columns)
    if (is_free(start, columns)) {
      claim(start, columns);
      return address(0, start);
    }
  refuse_full(columns, describe_allocations());
}

std::uint32_t TensorMemory::allocate_pair(TensorMemory& a, TensorMemory& b, std::uint32_t columns) {
  a.check_allocation(columns);
  b.check_allocation(columns);
  for (std::uint32_t start = 0; start + columns <= kColumns; start += columns)
    if (a.is_free(start, columns) && b.is_free(start, columns)) {
      a.claim(start, columns);
      b.claim(start, columns);
      return address(0, start);
    }
  refuse_full(columns, a.describe_allocations() + " in this CTA and " + b.describe_allocations() +
                           " in its peer");
}

void TensorMemory::check_block(std::uint32_t address, std::uint32_t columns) const {
  const bool found =
      lane_of(address) == 0 && std::any_of(blocks_.begin(), blocks_.end(), [&](const Block& b) {
        return b.column == column_of(address) && b.columns == columns;
      });
  if (!found)
    throw SimError("tcgen05.dealloc of " + std::to_string(columns) +
                   " columns at tensor-memory address " + hex(address) + " (lane " +
                   std::to_string(lane_of(address)) + ", column " +
                   std::to_string(column_of(address)) +
                   "), which is not an allocated block; allocated: " + describe_allocations());
}

void TensorMemory::deallocate(std::uint32_t address, std::uint32_t columns) {
  check_block(address, columns);
  std::erase_if(blocks_, [&](const Block& b) {
    return b.column == column_of(address) && b.columns == columns;
  });
}

void TensorMemory::relinquish(int line) {
  if (!relinquish_line_) relinquish_line_ = line;
}

std::uint32_t& TensorMemory::cell(std::uint32_t lane, std::uint32_t column, const char* what) {
  const bool inside =
      lane < kLanes && std::any_of(blocks_.begin(), blocks_.end(), [&](const Block& b) {
        return column >= b.column && column < b.column + b.columns;
      });
  if (!inside)
    throw SimError(std::string(what) + " reaches tensor memory lane " + std::to_string(lane) +
                   ", column " + std::to_string(column) + ", outside the allocated columns (" +
                   describe_allocations() + ") of lanes 0-127");
  return cells_[std::size_t{lane} * kColumns + column];
}

std::string TensorMemory::describe_allocations() const {
  if (blocks_.empty()) return "none";
  std::vector<Block> sorted = blocks_;
  std::sort(sorted.begin(), sorted.end(),
            [](const Block& a, const Block& b) { return a.column < b.column; });
  std::string out = "columns ";
  for (std::size_t i = 0; i < sorted.size(); ++i)
    out += (i ? ", " : "") + std::to_string(sorted[i].column) + "-" +
           std::to_string(sorted[i].column + sorted[i].columns - 1);
  return out;
}

}  // namespace warpforge::sim
