// An array of mbarrier objects in shared memory (PTX ISA 9.7.13.15): `count`
// 8-byte barriers from a shared address `base + offset`, one per pipeline
// stage or per slot. The handle addresses the i-th, for an index known when
// the kernel is built or held in a register, and initialises them:
//
//   const MbarrierArray full(k, base, smem.full, stages);
//   full.init(st, 1);                            // mbarrier.init [base + full + 8 st], 1
//   k.mbarrier_wait_parity(at(full.address(stage)), phase);
#pragma once

#include <cstdint>

#include "warpforge/dsl/kernel.hpp"

namespace warpforge::tile {

class MbarrierArray {
 public:
  // An mbarrier object is 8 bytes, aligned to 8 (PTX ISA 9.7.13.15.1).
  static constexpr std::uint32_t kBytes = 8;

  // `base` is a shared-space address (u32) register. Throws TileError unless
  // count >= 1 and offset is a multiple of 8.
  MbarrierArray(dsl::Kernel& k, dsl::Reg base, std::uint32_t offset, int count);

  int size() const { return count_; }
  dsl::Kernel& kernel() const { return *k_; }
  // The shared address of barrier `i` (a u32 register: base + offset + 8 i).
  dsl::Reg address(const dsl::Reg& i) const;
  // Barrier `i` as an address operand. Throws TileError unless 0 <= i < size().
  dsl::Addr at(int i) const;
  // mbarrier.init of barrier `i`: `arrivals` arrivals complete each phase.
  void init(int i, const dsl::Src& arrivals) const;
  // Barrier `i` (a register): one arrival; one arrival that also expects
  // `bytes` of transactions (a TMA or bulk copy's complete_tx) before the
  // phase completes; waiting until the phase of parity `parity` completed
  // (PTX ISA 9.7.13.15.12, .16).
  void arrive(const dsl::Reg& i) const;
  void expect_tx(const dsl::Reg& i, const dsl::Src& bytes) const;
  void wait(const dsl::Reg& i, const dsl::Src& parity) const;

 private:
  dsl::Kernel* k_;
  dsl::Reg base_;
  std::uint32_t offset_;
  int count_;
};

}  // namespace warpforge::tile
