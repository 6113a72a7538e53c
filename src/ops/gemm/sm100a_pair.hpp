// What the sm100a kernels (the GEMM's and GemmAmax's) share: the start
// address of their shared-memory matrix descriptors, and how they run over a
// CTA pair, two CTAs of a cluster sharing one M = 256 tcgen05.mma
// (.cta_group::2, PTX ISA 9.7.16.5). In a pair each CTA loads its own operand
// rows into its own ring slots; the even CTA's MMA thread alone issues, reading
// both CTAs' slots, so the odd CTA forwards each slot it has filled to the
// even CTA's full barrier, and the even CTA's commits arrive on the same
// barrier in both CTAs.
#pragma once

#include "warpforge/dsl.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"

namespace warpforge::ops {

// The 14-bit start-address field of a tcgen05 shared-memory descriptor
// (address >> 4, PTX ISA 9.7.16.4.1) for a u32 shared address, as a u64 to
// add to the descriptor's other fields: a cluster launch's shared addresses
// carry the CTA's rank above the field, which must not reach the others.
dsl::Reg descriptor_start(dsl::Kernel& k, const dsl::Reg& address);

// The arrivals that complete a full barrier's phase: the producer's
// arrive.expect_tx, and in a pair's even CTA (rank 0) the odd CTA's relay.
dsl::Src full_arrivals(bool pair, const dsl::Reg& rank);

// The odd CTA of a pair, one thread: for each of `steps` slots in ring
// order, once its own slot is full, one arrival on the same slot's full
// barrier in the even CTA (mapa + mbarrier.arrive.shared::cluster).
void relay_full_slots(dsl::Kernel& k, const tile::MbarrierPipeline& pipe, const dsl::Src& steps);

// tcgen05.commit of the thread's MMAs to the mbarrier at `bar`; in a pair,
// to that barrier in both CTAs (.multicast::cluster, ranks 0 and 1).
void commit_mmas(dsl::Kernel& k, bool pair, const dsl::Reg& bar);

}  // namespace warpforge::ops
