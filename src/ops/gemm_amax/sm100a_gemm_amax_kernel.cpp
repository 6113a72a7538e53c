#include "sm100a_gemm_amax_kernel.hpp"

#include <optional>
#include <variant>
#include <vector>

#include "../gemm/sm100a_pair.hpp"
#include "kernel_io.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/tcgen05_instr_descriptor.hpp"
#include "warpforge/layout/tcgen05_smem_descriptor.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr int kRows = 128;  // the tile's M and N, and the lanes of tensor memory
// One tcgen05.mma reads 32 bytes of K per row. A slice of 128 rows is laid out
// K-major without swizzle: row r, byte b at (r/8)*256 + (r%8)*16 + (b/16)*128
// + b%16, i.e. LBO 128 (the next 16 bytes of K) and SBO 256 (the next 8 rows).
constexpr int kSliceBytes = 32;
constexpr int kSliceStride = kRows / 8 * 256;
constexpr int kLbo = 128, kSbo = 256;
// Tensor memory: D in columns 0..127; the scale groups from column 256, A's
// in 4 columns and B's in the next 4, one such pair per pipeline stage.
constexpr int kColumns = 512;
constexpr int kScaleColumns = 256;
constexpr int kGroupBytes = 512;  // one 128x4 scale group
constexpr int kThreads = 128;

// The block-scaled MMA that runs a format (PTX ISA 9.7.16, tcgen05.mma's kinds
// and scale_vec table): MXFP8 kind::mxf8f6f4 with one ue8m0 per 32 (1X, K =
// 32), MXFP4 kind::mxf4 with two per instruction (2X, K = 64), NVFP4
// kind::mxf4nvf4 with four ue4m3 per 16 (4X, K = 64).
struct MmaForm {
  Tcgen05Kind kind;
  ScaleVec scale_vec;
  int scales_per_mma;
  layout::Tcgen05Element element;
  layout::Tcgen05Scaling scaling;
};

MmaForm mma_form(const GemmAmaxProblem& p) {
  using E = layout::Tcgen05Element;
  using S = layout::Tcgen05Scaling;
  if (p.ab_dtype != DType::e2m1)
    return {Tcgen05Kind::mxf8f6f4, ScaleVec::x1, 1, p.ab_dtype == DType::e4m3 ? E::e4m3 : E::e5m2,
            S::mxf8f6f4_ue8m0};
  if (p.sf_dtype == DType::e4m3)
    return {Tcgen05Kind::mxf4nvf4, ScaleVec::x4, 4, E::e2m1, S::fp4_ue4m3};
  return {Tcgen05Kind::mxf4, ScaleVec::x2, 2, E::e2m1, S::fp4_ue8m0};
}

// One operand (A or B) of the problem.
struct Operand {
  Reg data, scales;       // global addresses
  std::int64_t rows;      // M or N
  MatrixStrides strides;  // elements (nibbles for e2m1)
  ScaleFactorLayout layout;
  Reg row0;       // the tile's first row
  Reg group_row;  // the tile's 128-row scale group index (ctaid.x or ctaid.y)
};

class Sm100aGemmAmaxBuilder {
 public:
  Sm100aGemmAmaxBuilder(const GemmAmaxProblem& p, int stages, bool pair)
      : p_(p),
        form_(mma_form(p)),
        stages_(stages),
        pair_(pair),
        k_(kSm100aGemmAmaxKernel, Target::sm_100a) {}

  ptx::Module build() {
    const bool fp4 = p_.ab_dtype == DType::e2m1;
    step_codes_ = 4 * p_.vec;  // one 128x4 scale group along K
    step_bytes_ = fp4 ? step_codes_ / 2 : step_codes_;
    slices_ = step_bytes_ / kSliceBytes;
    Reg pa, pb, psfa, psfb;
    if (stages_ == 0) {
      pa = k_.param_ptr("A"), pb = k_.param_ptr("B"), psfa = k_.param_ptr("SFA"),
      psfb = k_.param_ptr("SFB");
    } else {
      for (const char* name : {"map_a", "map_b", "map_sfa", "map_sfb"})
        maps_.push_back(k_.param_bytes(name, 128, 64));
    }
    Reg pc = k_.param_ptr("C"), pamax = k_.param_ptr("amax", 4);
    k_.reqntid(imm(kThreads));
    Shared slot = k_.shared("tmem_slot", 4, 4);
    Shared bar = k_.shared("mma_done", 8, 8);
    Shared cta_amax = k_.shared("cta_amax", 4, 4);

    tid_ = k_.sreg(SReg::tid_x);
    lane_ = tid_ & 31u;
    warp_ = tid_ >> 5;
    batch_ = k_.sreg(SReg::ctaid_z);
    if (pair_) rank_ = k_.sreg(SReg::cluster_ctarank);
    Reg tile_m = k_.sreg(SReg::ctaid_x), tile_n = k_.sreg(SReg::ctaid_y);
    const Operand a{pa, psfa, p_.m, p_.a, {p_.m, p_.k, p_.l, p_.vec}, tile_m * imm(kRows), tile_m};
    const Operand b{pb, psfb, p_.n, p_.b, {p_.n, p_.k, p_.l, p_.vec}, tile_n * imm(kRows), tile_n};

    Pred first_thread = tid_ == 0u;
    Reg bar_address = k_.address_of(bar), amax_address = k_.address_of(cta_amax);
    std::optional<tile::MbarrierPipeline> pipe;
    if (stages_ > 0) {
      Shared ring = k_.dynamic_shared("ring", 1024);
      Shared full = k_.shared("full", 8 * stages_, 8), empty = k_.shared("empty", 8 * stages_, 8);
      // The 128-byte swizzle is a function of address bits 4-9: slots start
      // on 1024-byte boundaries so that TMA's writes and the MMA's reads agree.
      ring_ = (k_.address_of(ring) + 1023) & 0xFFFFFC00u;
      pipe.emplace(tile::MbarrierArray(k_, k_.address_of(full), 0, stages_),
                   tile::MbarrierArray(k_, k_.address_of(empty), 0, stages_));
    }
    k_.if_then(first_thread, [&] {
      k_.st(Space::shared, u32, at(amax_address), 0u);
      k_.mbarrier_init(at(bar), 1u);
      if (pipe) {
        // One arrival fills a slot (the producer's arrive.expect_tx; in a
        // pair's even CTA also the odd CTA's relay), one empties it (the MMA
        // thread's tcgen05.commit).
        pipe->init(full_arrivals(pair_, rank_), 1u);
        k_.fence_mbarrier_init();
      }
    });
    k_.if_then(tid_ < 32u, [&] { k_.tcgen05_alloc(group(), at(slot), kColumns); });
    k_.tcgen05_fence_before_thread_sync();
    k_.bar_sync();
    if (pair_) {  // the peer's barriers are initialised before either CTA arrives on them
      k_.barrier_cluster_arrive();
      k_.barrier_cluster_wait();
    }
    k_.tcgen05_fence_after_thread_sync();
    Reg taddr = k_.reg(u32);
    k_.ld(Space::shared, u32, taddr, at(slot));

    if (pipe)
      pipelined_mainloop(*pipe, a, b, taddr, bar_address);
    else
      staged_mainloop(a, b, taddr, bar_address);

    Reg thread_max = epilogue(pc, taddr, a.row0, b.row0);
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max);
    k_.if_then(lane_ == 0u,
               [&] { k_.red(Space::shared, AtomOp::max, u32, at(amax_address), warp_max); });
    k_.tcgen05_fence_before_thread_sync();
    k_.bar_sync();
    k_.if_then(tid_ < 32u, [&] { k_.tcgen05_dealloc(group(), taddr, kColumns); });
    k_.if_then(first_thread, [&] {
      Reg cta_max = k_.reg(u32);
      k_.ld(Space::shared, u32, cta_max, at(amax_address));
      k_.red(Space::global, AtomOp::max, u32, at(pamax), cta_max);
    });
    return k_.module();
  }

 private:
  // stages = 0: every thread stages its row of A and of B with plain loads
  // (any strides) into the canonical K-major layout without swizzle, then
  // thread 0 issues the step's MMAs and all wait for them, one step at a
  // time.
  void staged_mainloop(const Operand& a, const Operand& b, const Reg& taddr, const Reg& bar) {
    Shared a_tile = k_.shared("a_tile", slices_ * kSliceStride, 1024);
    Shared b_tile = k_.shared("b_tile", slices_ * kSliceStride, 1024);
    Shared groups = k_.shared("scale_groups", 2 * kGroupBytes, 16);
    Reg a_base = k_.address_of(a_tile), b_base = k_.address_of(b_tile),
        groups_base = k_.address_of(groups);
    const Swizzled none{a_base, b_base, groups_base, layout::SmemSwizzle::none, kLbo, kSbo};
    Reg row_offset = ((tid_ >> 3) << 8) + ((tid_ & 7u) << 4);  // this thread's row in a slice
    k_.for_range(0u, imm(a.layout.k_tiles()), 1u, [&](Reg step) {
      stage_codes(a, step, a_base + row_offset);
      stage_codes(b, step, b_base + row_offset);
      stage_group(a, step, groups_base);
      stage_group(b, step, groups_base + imm(kGroupBytes));
      k_.fence_proxy_async_shared();  // the generic-proxy stores, before the MMA's async reads
      k_.bar_sync();
      k_.if_then(tid_ == 0u, [&] {
        issue_step(step, taddr, taddr + imm(kScaleColumns), none);
        commit_mmas(k_, false, bar);
      });
      k_.mbarrier_wait_parity(at(bar), step & 1u);
      k_.tcgen05_fence_after_thread_sync();
    });
  }

  // stages >= 1 (k-major A and B with 16-byte rows): thread 0 loads each
  // step's codes (one box of 128 rows by the step's bytes, swizzled with a
  // span of that width: 128, 64 or 32 bytes) and both scale groups with TMA
  // into a ring of `stages` slots; thread 32 copies the slot's scale groups
  // into that slot's tensor-memory columns, issues its MMAs and frees it
  // with tcgen05.commit on its empty barrier; after the last step it
  // commits to `bar`, which every thread waits on.
  void pipelined_mainloop(const tile::MbarrierPipeline& pipe, const Operand& a, const Operand& b,
                          const Reg& taddr, const Reg& bar) {
    const std::uint32_t tile = kRows * step_bytes_;  // one operand's codes of a step
    const std::uint32_t slot = 2 * tile + 2 * kGroupBytes;
    // In a pair this CTA loads B's rows 64 * rank onwards, 64 of them.
    const std::uint32_t b_tile = pair_ ? tile / 2 : tile;
    Reg b_row0 = pair_ ? b.row0 + (rank_ << 6) : b.row0;
    const std::int64_t steps = a.layout.k_tiles();
    k_.if_then(tid_ == 0u, [&] {
      std::vector<Reg> maps;
      for (const ParamRef& m : maps_) {
        maps.push_back(k_.param_generic_address(m));
        k_.prefetch_tensormap(maps.back());
      }
      tile::PipelineState state(k_, stages_);
      k_.for_range(0u, imm(steps), 1u, [&](Reg step) {
        Reg full = pipe.full_barrier(state);
        pipe.acquire(state);
        pipe.expect_tx(full, tile + b_tile + 2 * kGroupBytes);
        Reg dst = ring_ + state.stage() * slot;
        Reg kx = step * imm(step_bytes_);
        k_.tma_load(at(dst), maps[0], {kx, a.row0, batch_}, at(full));
        k_.tma_load(at(dst + tile), maps[1], {kx, b_row0, batch_}, at(full));
        // A scale group is two 256-byte rows of the scales' map (the sm90a kernel's scale_map).
        for (int i = 0; i < 2; ++i) {
          const Operand& o = i == 0 ? a : b;
          Reg group = (batch_ * imm(o.layout.row_tiles()) + o.group_row) * imm(steps) + step;
          k_.tma_load(at(dst + 2 * tile + i * kGroupBytes), maps[2 + i], {0u, group << 1},
                      at(full));
        }
        ++state;
      });
    });
    if (pair_)
      k_.if_then((tid_ == 32u) && (rank_ == 1u), [&] { relay_full_slots(k_, pipe, imm(steps)); });
    Pred issuer = pair_ ? (tid_ == 32u) && (rank_ == 0u) : tid_ == 32u;
    k_.if_then(issuer, [&] {
      tile::PipelineState state(k_, stages_);
      k_.for_range(0u, imm(steps), 1u, [&](Reg step) {
        pipe.wait(state);
        Reg a_base = ring_ + state.stage() * slot;
        const Swizzled swizzled{a_base,
                                a_base + tile,
                                a_base + 2 * tile,
                                swizzle_mode(),
                                16,
                                8 * static_cast<std::uint32_t>(step_bytes_)};
        issue_step(step, taddr, taddr + imm(kScaleColumns) + (state.stage() << 3), swizzled);
        commit_mmas(k_, pair_, pipe.empty().address(state.stage()));
        ++state;
      });
      commit_mmas(k_, pair_, bar);
    });
    k_.bar_sync();  // the roles' lanes rejoin their warps before the warp-wide tcgen05.ld
    k_.mbarrier_wait_parity(at(bar), 0u);
    k_.tcgen05_fence_after_thread_sync();
  }

  // The swizzle whose span is one step's bytes of a row (TMA writes each
  // 128-row box with it; the MMA's descriptors name it).
  layout::SmemSwizzle swizzle_mode() const {
    return step_bytes_ == 128  ? layout::SmemSwizzle::b128
           : step_bytes_ == 64 ? layout::SmemSwizzle::b64
                               : layout::SmemSwizzle::b32;
  }

  // The code of element (row, k) of an operand; 0 past its rows or K (the
  // address is clamped, so every load is in bounds).
  Reg code(const Operand& o, const Reg& row, const Reg& k) {
    Pred in = (row < imm(o.rows)) && (k < imm(p_.k));
    Reg rc = k_.reg(u32), kc = k_.reg(u32);
    k_.min(rc, row, imm(o.rows - 1));
    k_.min(kc, k, imm(p_.k - 1));
    Reg element =
        (rc * imm(o.strides.row)) + (kc * imm(o.strides.col)) + (batch_ * imm(o.strides.batch));
    Reg c = p_.ab_dtype == DType::e2m1
                ? (load_global_byte(k_, o.data, element >> 1u) >> ((element & 1u) << 2)) & 15u
                : load_global_byte(k_, o.data, element);
    Reg kept = k_.reg(u32);
    k_.selp(kept, c, 0u, in);
    return kept;
  }

  // This thread's row of the step's codes (K [step·step_codes, +step_codes))
  // into the slices at `row_smem` (the thread's row offset added).
  void stage_codes(const Operand& o, const Reg& step, const Reg& row_smem) {
    Reg row = o.row0 + tid_;
    Reg k0 = step * imm(step_codes_);
    k_.for_range(0u, imm(step_bytes_), 1u, [&](Reg byte) {
      Reg value = p_.ab_dtype == DType::e2m1
                      ? code(o, row, k0 + (byte << 1)) | (code(o, row, k0 + (byte << 1) + 1u) << 4u)
                      : code(o, row, k0 + byte);
      Reg within = byte & 31u;  // the byte's slice is byte / 32
      Reg offset = ((byte >> 5) * imm(kSliceStride)) + ((within >> 4) * imm(kLbo)) + (within & 15u);
      Reg narrow = k_.reg(u16);
      k_.cvt(narrow, value);
      k_.st(Space::shared, u8, at(row_smem + offset), narrow);
    });
  }

  // The 512-byte scale group of the tile's rows for this step (the 128x4
  // layout's block (group_row, step) of the batch): 4 bytes per thread.
  void stage_group(const Operand& o, const Reg& step, const Reg& smem) {
    Reg first = (batch_ * imm(o.layout.batch_bytes())) +
                (o.group_row * imm(o.layout.k_tiles() * kGroupBytes)) + (step * imm(kGroupBytes)) +
                (tid_ << 2);
    for (int j = 0; j < 4; ++j) {
      Reg narrow = k_.reg(u16);
      k_.cvt(narrow, load_global_byte(k_, o.scales, first + imm(j)));
      k_.st(Space::shared, u8, at(smem + (tid_ << 2), j), narrow);
    }
  }

  // A shared-memory descriptor of `address` (a u32 shared address).
  Reg descriptor(const Reg& address, std::uint32_t lbo, std::uint32_t sbo,
                 layout::SmemSwizzle swizzle = layout::SmemSwizzle::none) {
    return k_.mov(u64, layout::Tcgen05SmemDescriptor{0, lbo, sbo, swizzle}.encode()) +
           descriptor_start(k_, address);
  }

  CtaGroup group() const { return pair_ ? CtaGroup::two : CtaGroup::one; }

  // Where a step's codes and scale groups lie in shared memory, and the
  // layout of the codes: the canonical K-major layout without swizzle (LBO
  // the next 16 bytes of K, SBO the next 8 rows), or rows of one swizzle
  // span each (SBO 8 rows; LBO unused, encoded as 16).
  struct Swizzled {
    Reg a, b, groups;
    layout::SmemSwizzle swizzle;
    std::uint32_t lbo, sbo;
  };

  // The MMA thread's work of a step: the scale groups into tensor memory at
  // `scales` (A's 4 columns, then B's), then the step's MMAs into D at
  // `taddr`, one per 32 bytes of K.
  void issue_step(const Reg& step, const Reg& taddr, const Reg& scales, const Swizzled& in) {
    // Each group's 32 rows of 16 bytes go to 4 columns of every lane quarter.
    // In a pair each CTA's copy comes from its own slot: its rows' group of
    // A, the pair's group of B.
    k_.tcgen05_cp(group(), TmemCopyShape::rows32_bits128_warpx4, scales,
                  descriptor(in.groups, 0, 128));
    k_.tcgen05_cp(group(), TmemCopyShape::rows32_bits128_warpx4, scales + 4u,
                  descriptor(in.groups + imm(kGroupBytes), 0, 128));
    // A slice is 32 bytes along a swizzled row, or the next block of
    // core matrices without swizzle.
    const int slice_bytes = in.swizzle == layout::SmemSwizzle::none ? kSliceStride : kSliceBytes;
    Pred accumulate = step != 0u;
    for (int s = 0; s < slices_; ++s) {
      layout::Tcgen05InstrDescriptor d{form_.element, form_.element};
      d.m = pair_ ? 2 * kRows : kRows;
      d.n = kRows;
      d.scaling = form_.scaling;
      d.scale_a_id = d.scale_b_id =
          form_.scales_per_mma * s;  // the slice's scale bytes of the group
      Reg idesc = k_.mov(b32, d.encode());
      const std::variant<bool, PredUse> enable =
          s == 0 ? std::variant<bool, PredUse>(PredUse(accumulate))
                 : std::variant<bool, PredUse>(true);
      k_.tcgen05_mma_block_scale(
          group(), form_.kind, form_.scale_vec, taddr,
          descriptor(in.a + imm(s * slice_bytes), in.lbo, in.sbo, in.swizzle),
          descriptor(in.b + imm(s * slice_bytes), in.lbo, in.sbo, in.swizzle), idesc, scales,
          scales + 4u, enable);
    }
  }

  // Reads this thread's row of D (warp w: tensor-memory lanes 32w..32w+31),
  // stores C and returns the thread's max |C| as u32 bits.
  Reg epilogue(const Reg& pc, const Reg& taddr, const Reg& row0_m, const Reg& row0_n) {
    Reg row = row0_m + (warp_ << 5) + lane_;
    Pred row_in = row < imm(p_.m);
    Reg thread_max = k_.mov(u32, 0u);
    Reg lanes = taddr + (warp_ << 21);  // lane 32w in bits 31-16
    Regs d = k_.regs(f32, 32, "d");
    k_.for_range(0u, imm(kRows), 32u, [&](Reg c0) {
      k_.tcgen05_ld(TmemShape::lanes32_bits32, d, lanes + c0);
      k_.tcgen05_wait_ld();
      Reg col0 = row0_n + c0;
      for (int j = 0; j < 32; j += 2) {
        Reg col = col0 + imm(j);
        epilogue_column_pair(k_, p_, pc, batch_, row, row_in, col, d[static_cast<std::size_t>(j)],
                             d[static_cast<std::size_t>(j + 1)], thread_max);
      }
    });
    return thread_max;
  }

  const GemmAmaxProblem& p_;
  MmaForm form_;
  int stages_;
  bool pair_;
  Kernel k_;
  int step_codes_ = 0, step_bytes_ = 0, slices_ = 0;
  std::vector<ParamRef> maps_;  // A, B, SFA, SFB (stages >= 1)
  Reg tid_, lane_, warp_, batch_, ring_, rank_;
};

}  // namespace

ptx::Module build_sm100a_gemm_amax(const GemmAmaxProblem& problem, int stages, bool pair) {
  if (pair && stages == 0)
    throw OpsError(
        "the sm100a GemmAmax kernel with stages = 0 (staged by plain loads) for a CTA pair; "
        "pairs run on its TMA pipeline only (stages >= 1)");
  return Sm100aGemmAmaxBuilder(problem, stages, pair).build();
}

std::uint32_t sm100a_gemm_amax_shared_bytes(const GemmAmaxProblem& problem, int stages) {
  if (stages == 0) return 0;
  const std::uint32_t step_bytes = 4 * problem.vec / (problem.ab_dtype == DType::e2m1 ? 2 : 1);
  return stages * (2 * kRows * step_bytes + 2 * kGroupBytes) + 1024;  // 1 KiB to align the ring
}

}  // namespace warpforge::ops
