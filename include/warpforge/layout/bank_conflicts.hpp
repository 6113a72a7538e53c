// Shared-memory bank conflicts of one warp-wide access. Shared memory has 32
// banks of 4-byte words; a bank serves one word per cycle, and threads reading
// the same word share it (broadcast). A request of 4-, 8- or 16-byte accesses
// per thread is served in phases of 128 bytes: all 32 threads at 4 bytes, 16
// at 8 bytes, 8 at 16 bytes (CUDA C++ Programming Guide, "Shared Memory" of
// compute capability 5.x and later; ldmatrix serves one 8 x 16-byte matrix per
// phase, like a 16-byte access by its 8 address lanes). Narrower accesses
// take the 4-byte rule: 32 threads per phase.
//
// Each phase takes as many wavefronts as the most distinct words any one bank
// must serve in it; one per phase is conflict-free.
#pragma once

#include <cstdint>
#include <vector>

namespace warpforge::layout {

inline constexpr int64_t kSharedBanks = 32;
inline constexpr int64_t kBankBytes = 4;

// The bank holding a byte address.
inline int64_t bank_of(int64_t byte_address) {
  return (byte_address / kBankBytes) % kSharedBanks;
}

struct BankConflicts {
  int64_t phases = 0;      // 128-byte phases the request is split into
  int64_t wavefronts = 0;  // cycles the banks need to serve it
  int64_t worst_way = 0;   // most distinct words one bank serves in one phase
  // Wavefronts beyond one per phase: 0 when conflict-free.
  int64_t extra_wavefronts() const { return wavefronts - phases; }
};

// `byte_addresses[t]` is the first byte thread t accesses, `access_bytes` how
// many it reads from there (1, 2, 4, 8 or 16, naturally aligned). Throws
// LayoutError for another width, a misaligned address or more than 32 threads.
BankConflicts count_bank_conflicts(const std::vector<int64_t>& byte_addresses, int access_bytes);

}  // namespace warpforge::layout
