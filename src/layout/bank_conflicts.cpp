#include "warpforge/layout/bank_conflicts.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::layout {

BankConflicts count_bank_conflicts(const std::vector<int64_t>& byte_addresses, int access_bytes) {
  if (access_bytes != 1 && access_bytes != 2 && access_bytes != 4 && access_bytes != 8 &&
      access_bytes != 16) {
    throw LayoutError("count_bank_conflicts: an access of " + std::to_string(access_bytes) +
                      " bytes; shared memory is read 1, 2, 4, 8 or 16 bytes at a time");
  }
  if (byte_addresses.size() > 32) {
    throw LayoutError("count_bank_conflicts: " + std::to_string(byte_addresses.size()) +
                      " addresses; one warp-wide access has at most 32");
  }
  for (size_t t = 0; t < byte_addresses.size(); ++t) {
    if (byte_addresses[t] < 0 || byte_addresses[t] % access_bytes != 0) {
      throw LayoutError("count_bank_conflicts: thread " + std::to_string(t) + " accesses " +
                        std::to_string(access_bytes) + " bytes at " +
                        std::to_string(byte_addresses[t]) +
                        ", which is not a non-negative multiple of the access width");
    }
  }
  const size_t per_phase = static_cast<size_t>(128 / std::max(access_bytes, 4));
  BankConflicts result;
  for (size_t first = 0; first < byte_addresses.size(); first += per_phase) {
    std::map<int64_t, std::set<int64_t>> words_of_bank;
    const size_t last = std::min(byte_addresses.size(), first + per_phase);
    for (size_t t = first; t < last; ++t) {
      for (int64_t byte = 0; byte < access_bytes; byte += kBankBytes) {
        const int64_t address = byte_addresses[t] + byte;
        words_of_bank[bank_of(address)].insert(address / kBankBytes);
      }
    }
    int64_t way = 0;
    for (const auto& [bank, words] : words_of_bank) way = std::max<int64_t>(way, words.size());
    ++result.phases;
    result.wavefronts += way;
    result.worst_way = std::max(result.worst_way, way);
  }
  return result;
}

}  // namespace warpforge::layout
