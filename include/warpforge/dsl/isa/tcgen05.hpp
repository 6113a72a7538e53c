// The fifth-generation tensor-core instructions of sm_100a (PTX ISA 9.7.16,
// "TensorCore 5th Generation Family Instructions"). The accumulator lives in
// tensor memory: 128 lanes x 512 columns of 32-bit cells per CTA, allocated
// in columns (tcgen05.alloc, powers of two from 32 to 512) and addressed by a
// 32-bit tensor-memory address, lane in bits 31-16 and column in bits 15-0.
// tcgen05.mma is issued by one thread and runs asynchronously; tcgen05.commit
// makes an mbarrier arrive when the MMAs the thread issued have completed.
// tcgen05.ld/st move data between tensor memory and registers, each warp
// reaching only its 32-lane quarter (warp w of the CTA: lanes 32*(w%4) ..
// 32*(w%4)+31); layout/tmem_datapath.hpp gives the register-to-cell maps of
// the shapes. The instruction and shared-memory descriptors that tcgen05.mma
// reads are built by layout/tcgen05_instr_descriptor.hpp and
// layout/tcgen05_smem_descriptor.hpp.
//
// Every tcgen05 instruction of a kernel must name the same .cta_group (PTX
// ISA 9.7.16, tcgen05.alloc); the builder refuses a kernel that mixes ::1 and ::2.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

// .cta_group::1 (the CTA's own tensor memory) or ::2 (the CTA pair of a
// cluster, each CTA holding half of the operands and of D).
enum class CtaGroup { one, two };

// tcgen05.mma .kind (PTX ISA 9.7.16, tcgen05.mma's kinds): the input element types it takes.
//   f16:      f16 or bf16 A and B, K = 16 per instruction
//   tf32:     tf32 A and B, K = 8
//   f8f6f4:   e4m3, e5m2, e2m3, e3m2 or e2m1 A and B, K = 32, no scales
//   mxf8f6f4: the same types, block-scaled by ue8m0 per 32 elements of K
//   mxf4:     e2m1 A and B, K = 64, ue8m0 scales per 32
//   mxf4nvf4: e2m1 A and B, K = 64, ue8m0 per 32 or ue4m3 per 16
enum class Tcgen05Kind { f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };

// .scale_vec::NX of the block-scaled kinds: scale factors per row of A (and
// per column of B) for one instruction. mxf8f6f4 takes 1X, mxf4 2X, and
// mxf4nvf4 2X (ue8m0, blocks of 32) or 4X (ue4m3, blocks of 16).
enum class ScaleVec { x1, x2, x4 };

// tcgen05.ld/st shapes (PTX ISA 9.7.16.2.3): lanes x bits per lane, times .num.
enum class TmemShape { lanes32_bits32, lanes16_bits64, lanes16_bits128, lanes16_bits256 };

// .pack::16b on tcgen05.ld and .unpack::16b on tcgen05.st (PTX ISA 9.7.16,
// tcgen05.ld/st): two 16-bit elements of adjacent tensor-memory columns
// travel in one 32-bit register, so each register covers two columns.
enum class TmemPacking { none, pack_16b };

// The B collector buffer of the weight-stationary MMA (tcgen05.mma.ws's
// .collector::bN::usage, PTX ISA 9.7.16): buffer 0..3 is filled with B,
// reused, reused a last time, or not kept.
enum class CollectorUsage { fill, use, lastuse, discard };
struct Collector {
  int buffer = 0;
  CollectorUsage usage = CollectorUsage::fill;
};

// tcgen05.cp shapes (PTX ISA 9.7.16.2.3): rows x bits, copied from a shared
// memory matrix (descriptor) into tensor memory; the warpx forms broadcast the
// rows to 2 or 4 lane quarters.
enum class TmemCopyShape {
  rows128_bits256,
  rows4_bits256,
  rows128_bits128,
  rows64_bits128_warpx2_02_13,
  rows64_bits128_warpx2_01_23,
  rows32_bits128_warpx4,
};

class Tcgen05Ops : public virtual KernelCore {
 public:
  // tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [dst], ncols:
  // allocates ncols columns (a power of two in 32..512) and writes their
  // tensor-memory address to the shared-memory word at dst. One whole warp
  // executes it.
  void tcgen05_alloc(CtaGroup group, const Addr& dst, const Src& ncols);
  // tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols.
  void tcgen05_dealloc(CtaGroup group, const Reg& taddr, const Src& ncols);
  // tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned: the CTA will
  // allocate no more.
  void tcgen05_relinquish_alloc_permit(CtaGroup group);

  // tcgen05.mma.cta_group::N.kind::K [d], a_desc, b_desc, idesc, enable_input_d:
  // D (tensor memory, f32 or f16) = A·B + (enable_input_d ? D : 0), A and B
  // from shared memory through their 64-bit descriptors, shape and types from
  // the 32-bit instruction descriptor. The non-scaled kinds only.
  void tcgen05_mma(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc,
                   const Reg& b_desc, const Reg& idesc, std::variant<bool, PredUse> enable_input_d);
  // The same with A in tensor memory: [d], [a_tmem], b_desc, idesc, enable_input_d.
  void tcgen05_mma_a_tmem(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_tmem,
                          const Reg& b_desc, const Reg& idesc,
                          std::variant<bool, PredUse> enable_input_d);
  // tcgen05.mma.ws.cta_group::1.kind::K[.collector::bN::usage] [d], a_desc,
  //   b_desc, idesc, enable_input_d: the weight-stationary MMA (M = 32, 64
  // or 128; .cta_group::1 only; kinds f16, tf32 and f8f6f4), B optionally
  // kept in a collector buffer for the next MMAs.
  void tcgen05_mma_ws(Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc, const Reg& b_desc,
                      const Reg& idesc, std::variant<bool, PredUse> enable_input_d,
                      std::optional<Collector> collector = std::nullopt);
  // tcgen05.mma.sp.cta_group::N.kind::K [d], a_desc, b_desc, [sp_meta],
  //   idesc, enable_input_d: A structurally sparse (2 of every 4 elements
  // along K, PTX ISA 9.7.16, "Sparse matrices"), its metadata in tensor
  // memory at sp_meta. The non-scaled kinds only.
  void tcgen05_mma_sp(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc,
                      const Reg& b_desc, const Reg& sp_meta_tmem, const Reg& idesc,
                      std::variant<bool, PredUse> enable_input_d);
  // tcgen05.mma.cta_group::N.kind::K.block_scale.scale_vec::NX [d], a_desc,
  //   b_desc, idesc, [scale_a], [scale_b], enable_input_d:
  // the block-scaled kinds, with A's and B's scale factors in tensor memory.
  void tcgen05_mma_block_scale(CtaGroup group, Tcgen05Kind kind, ScaleVec scale_vec,
                               const Reg& d_tmem, const Reg& a_desc, const Reg& b_desc,
                               const Reg& idesc, const Reg& scale_a_tmem, const Reg& scale_b_tmem,
                               std::variant<bool, PredUse> enable_input_d);
  // The same with A in tensor memory.
  void tcgen05_mma_block_scale_a_tmem(CtaGroup group, Tcgen05Kind kind, ScaleVec scale_vec,
                                      const Reg& d_tmem, const Reg& a_tmem, const Reg& b_desc,
                                      const Reg& idesc, const Reg& scale_a_tmem,
                                      const Reg& scale_b_tmem,
                                      std::variant<bool, PredUse> enable_input_d);

  // tcgen05.cp.cta_group::N.<shape> [taddr], s_desc: copies a matrix from
  // shared memory (described by a 64-bit shared-memory descriptor) into
  // tensor memory, asynchronously, ordered with later tcgen05.mma of the same
  // thread and tracked by tcgen05.commit.
  void tcgen05_cp(CtaGroup group, TmemCopyShape shape, const Reg& taddr, const Reg& s_desc);
  // tcgen05.shift.cta_group::N.down [taddr]: moves 256 bits (8 columns) of
  // the rows at taddr's lane + 0..30 down by one row, to lane + 1..31 (the
  // implicit .31x256b shape, PTX ISA 9.7.16.2.3).
  void tcgen05_shift_down(CtaGroup group, const Reg& taddr);

  // tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32 {dst}, [taddr]:
  // num is dst.size() divided by the shape's registers per repetition (1, 1,
  // 2, 4), a power of two up to 128 (32x32b, 16x64b), 64 (16x128b) or 32
  // (16x256b).
  void tcgen05_ld(TmemShape shape, const Regs& dst, const Reg& taddr,
                  TmemPacking packing = TmemPacking::none);
  // tcgen05.st.sync.aligned.<shape>.x<num>[.unpack::16b].b32 [taddr], {src}.
  void tcgen05_st(TmemShape shape, const Reg& taddr, const Regs& src,
                  TmemPacking packing = TmemPacking::none);
  // The 16x32bx2 shape: two 16-lane halves of 32-bit cells, the second half
  // `half_split` columns after the first (an immediate, PTX ISA 9.7.16,
  // tcgen05.ld's immHalfSplitoff); one register per thread times .num, up to
  // 128.
  //   tcgen05.ld.sync.aligned.16x32bx2.x<num>[.pack::16b].b32 {dst}, [taddr], half_split
  //   tcgen05.st.sync.aligned.16x32bx2.x<num>[.unpack::16b].b32 [taddr], half_split, {src}
  void tcgen05_ld_16x32bx2(const Regs& dst, const Reg& taddr, std::uint32_t half_split,
                           TmemPacking packing = TmemPacking::none);
  void tcgen05_st_16x32bx2(const Reg& taddr, std::uint32_t half_split, const Regs& src,
                           TmemPacking packing = TmemPacking::none);
  void tcgen05_wait_ld();  // tcgen05.wait::ld.sync.aligned: this thread's tcgen05.ld are done
  void tcgen05_wait_st();  // tcgen05.wait::st.sync.aligned: this thread's tcgen05.st are done

  // tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster.b64 [bar]:
  // the mbarrier (a shared-memory address) gets one arrival once every
  // tcgen05.mma and tcgen05.cp this thread issued before it has completed.
  void tcgen05_commit(CtaGroup group, const Reg& bar);
  // The same, arriving on the mbarrier at `bar` in each CTA of cta_mask (a
  // 16-bit mask of CTA ranks in the cluster, in a u16 register):
  // .multicast::cluster.
  void tcgen05_commit_multicast(CtaGroup group, const Reg& bar, const Src& cta_mask);

  // tcgen05.fence::before_thread_sync / ::after_thread_sync: order tcgen05
  // operations before (after) a thread synchronisation such as bar.sync or an
  // mbarrier wait (PTX ISA 9.7.16, tcgen05.fence).
  void tcgen05_fence_before_thread_sync();
  void tcgen05_fence_after_thread_sync();

 private:
  // .cta_group::1 or ::2, after the check that the kernel uses one group.
  ptx::Mod group_mod(InstructionName instruction, CtaGroup group);
  // tcgen05.<op>.cta_group::N<rest>
  ptx::Instruction grouped(ptx::Mod op, CtaGroup group, std::initializer_list<ptx::Mod> rest);
  // tcgen05.mma[.form].cta_group::N.kind::K[.block_scale.scale_vec::V]; form: .ws or .sp.
  ptx::Instruction mma_opcode(CtaGroup group, Tcgen05Kind kind, std::optional<ScaleVec> scale_vec,
                              std::optional<ptx::Mod> form = std::nullopt);
  void emit_mma(const ptx::Instruction& opcode, const Reg& d_tmem, ptx::Operand a,
                const Reg& b_desc, const Reg& idesc, const Reg* scale_a, const Reg* scale_b,
                const std::variant<bool, PredUse>& enable_input_d);
  // Refuses an immediate column count that is not a power of two in 32..512.
  void check_column_count(const ptx::Instruction& instruction, const Src& ncols) const;
  void check_tmem_address(const ptx::Instruction& instruction, const Reg& r,
                          const char* role) const;
  // tcgen05.<op>.sync.aligned.<shape>.x<num>[.pack::16b|.unpack::16b].b32
  // for `data`, checked against the shape's registers per repetition and
  // largest .num.
  ptx::Instruction data_path_opcode(ptx::Mod op, ptx::Mod shape, int regs_per_repeat, int max_num,
                                    const Regs& data, TmemPacking packing);
  // tcgen05.<modifiers> without operands.
  void bare(std::initializer_list<ptx::Mod> modifiers);

  std::optional<CtaGroup> cta_group_;  // the group of the kernel's first tcgen05 instruction
};

}  // namespace warpforge::dsl
