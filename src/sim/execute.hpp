// The instruction semantics, one function per family; each runs an
// instruction for the lanes in `active` (guard already applied). Control flow,
// barriers and the gathering of warp collectives are the scheduler's.
#pragma once

#include <cstdint>

#include "cta.hpp"

namespace warpforge::sim {

std::uint64_t read_sreg(const Warp& w, SReg r, int lane);

inline std::uint64_t read(Warp& w, const Arg& a, int lane) {
  switch (a.kind) {
    case Arg::Kind::reg: {
      const std::uint64_t v = w.reg(a.slot, lane);
      return a.negated ? (v == 0) : v;
    }
    case Arg::Kind::imm:
      return a.bits;
    case Arg::Kind::sreg:
      return read_sreg(w, a.sreg, lane);
    case Arg::Kind::shared_symbol:
      return a.bits | w.cta->shared_tag;
    case Arg::Kind::sink:
      return 0;
  }
  return 0;
}

inline void write(Warp& w, const Arg& a, int lane, std::uint64_t v) {
  if (a.kind == Arg::Kind::reg) w.reg(a.slot, lane) = v;
}

inline std::uint64_t address_of(Warp& w, const Arg& a, int lane) {
  return read(w, a, lane) + static_cast<std::uint64_t>(a.offset);
}

template <class F>
inline void for_lanes(std::uint32_t mask, F&& f) {
  while (mask) {
    f(__builtin_ctz(mask));
    mask &= mask - 1;
  }
}

// All 32 lanes' values of an operand (for special registers, the active
// lanes' only): a register row is contiguous, so this is a copy.
inline void gather(Warp& w, const Arg& a, std::uint32_t active, std::uint64_t* out) {
  switch (a.kind) {
    case Arg::Kind::reg: {
      const std::uint64_t* row = &w.regs[a.slot * 32];
      if (a.negated) {
        for (int l = 0; l < 32; ++l) out[l] = row[l] == 0;
      } else {
        for (int l = 0; l < 32; ++l) out[l] = row[l];
      }
      return;
    }
    case Arg::Kind::shared_symbol:
      for (int l = 0; l < 32; ++l) out[l] = a.bits | w.cta->shared_tag;
      return;
    case Arg::Kind::imm:
      for (int l = 0; l < 32; ++l) out[l] = a.bits;
      return;
    case Arg::Kind::sreg:
      for_lanes(active, [&](int l) { out[l] = read_sreg(w, a.sreg, l); });
      return;
    case Arg::Kind::sink:
      for (int l = 0; l < 32; ++l) out[l] = 0;
      return;
  }
}

// Writes the active lanes' results to the destination register.
inline void scatter(Warp& w, const Arg& d, std::uint32_t active, const std::uint64_t* v) {
  if (d.kind != Arg::Kind::reg) return;
  std::uint64_t* row = &w.regs[d.slot * 32];
  for (int l = 0; l < 32; ++l)
    if ((active >> l) & 1) row[l] = v[l];
}

void exec_integer(const Inst& inst, Warp& w, std::uint32_t active);     // integer_ops.cpp
void exec_float(const Inst& inst, Warp& w, std::uint32_t active);       // float_ops.cpp
void exec_compare(const Inst& inst, Warp& w, std::uint32_t active);     // compare_ops.cpp
void exec_convert(const Inst& inst, Warp& w, std::uint32_t active);     // convert.cpp
void exec_memory(const Inst& inst, Warp& w, std::uint32_t active);      // memory_ops.cpp
void exec_atomic(const Inst& inst, Warp& w, std::uint32_t active);      // atomic_ops.cpp
void exec_vprintf(const Inst& inst, Warp& w, std::uint32_t active);     // printf.cpp
// A call's argument or return value copied between frames (memory_ops.cpp).
void exec_frame_copy(const Inst& inst, Warp& w, std::uint32_t active);
void exec_async_copy(const Inst& inst, Warp& w, std::uint32_t active);  // async_copy.cpp
void exec_mbarrier(const Inst& inst, Warp& w, std::uint32_t active);    // mbarrier.cpp
// mbarrier.try_wait for `lanes`: returns those whose phase completed, having
// written true to their destination; the others must wait (mbarrier.cpp).
std::uint32_t mbarrier_wait(const Inst& inst, Warp& w, std::uint32_t lanes);
// complete_tx of `bytes` on the mbarrier object at `object` (mbarrier.cpp).
void mbarrier_complete_tx(std::byte* object, std::uint64_t bytes);
// `count` arrivals on the mbarrier object at `object` (mbarrier.cpp).
void mbarrier_arrive(std::byte* object, std::uint64_t count);
// tensormap.replace and tensormap.cp_fenceproxy (tensormap.cpp).
void exec_tensormap(const Inst& inst, Warp& w, std::uint32_t active);
// cp.async.bulk.tensor: TMA loads (done at issue) and stores (queued) (tensor_copy.cpp).
void exec_tensor_copy(const Inst& inst, Warp& w, std::uint32_t active);
// cp.async.bulk from shared memory into a CTA of the cluster, done at issue,
// and cp.reduce.async.bulk into global memory, queued (bulk_copy.cpp).
void exec_bulk_copy(const Inst& inst, Warp& w, std::uint32_t active);
// cp.async.bulk.commit_group / wait_group[.read] of the TMA stores and bulk
// reduces, and those a lane still has in flight when it exits (tensor_copy.cpp).
void exec_bulk_group(const Inst& inst, Warp& w, std::uint32_t active);
void complete_bulk_stores(Warp& w, int lane);
// Queues `work` in the lane's open bulk async-group (tensor_copy.cpp).
void queue_bulk_work(Warp& w, int lane, std::function<void()> work);
// An atomic add of the f32 `value` into the f32 at `element` in global
// memory, as red.global.add.f32 adds (atomic_ops.cpp).
void atomic_add_f32_global(std::byte* element, std::uint32_t value);
// wgmma for warp `w`, the `warp_in_group`-th of its warpgroup (wgmma.cpp).
void exec_wgmma(const Inst& inst, Warp& w, int warp_in_group);
// Throws SimError when the instruction reads or writes an accumulator or an
// A register of a wgmma.mma_async that no wgmma.wait_group has retired
// (wgmma.cpp).
void check_wgmma_registers(const Inst& inst, Warp& w);
// tcgen05 (tcgen05.cpp): the warp-wide .sync.aligned forms for the lanes of
// `active` (all of the warp's), and the single-thread forms for each lane of
// `active`. exec_tcgen05_sync returns false when the warp performed a
// .cta_group::2 alloc, dealloc or relinquish_alloc_permit first of its CTA
// pair: it waits, past the instruction, while waits_for_peer_warp(w).
bool exec_tcgen05_sync(const Inst& inst, Warp& w, std::uint32_t active);
void exec_tcgen05(const Inst& inst, Warp& w, std::uint32_t active);
bool waits_for_peer_warp(const Warp& w);
// Throws SimError when a CTA whose threads have all exited still holds
// tensor memory (PTX ISA 9.7.16.7.1: all of it must be deallocated).
void check_tensor_memory_released(const Cta& cta);
// The value of an f16/bf16/e4m3/e5m2/f32 element's bits (mma.cpp).
double matrix_element_value(ptx::Type t, std::uint32_t bits);
// Lands every cp.async the lane has issued (committed or not).
void complete_async_copies(Warp& w, int lane);                          // async_copy.cpp
void exec_collective(const Inst& inst, Warp& w, std::uint32_t active);  // collectives.cpp
void exec_mma(const Inst& inst, Warp& w);                               // mma.cpp
void exec_wmma(const Inst& inst, Warp& w);                              // wmma.cpp
void exec_ldmatrix(const Inst& inst, Warp& w, std::uint32_t active);    // ldmatrix.cpp

// True for the ops whose lanes must all arrive before any executes.
bool is_warp_collective(Op op);
// True for wgmma and setmaxnreg: all 128 threads of a warpgroup.
bool is_warpgroup_collective(Op op);
// The lanes that must take part in a collective: its membermask operand, or
// every thread of the warp for the .aligned matrix instructions.
std::uint32_t collective_members(const Inst& inst, Warp& w, int first_lane);

}  // namespace warpforge::sim
