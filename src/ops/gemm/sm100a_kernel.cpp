#include "sm100a_kernel.hpp"

#include "c_element.hpp"
#include "sm100a_pair.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/layout/tcgen05_instr_descriptor.hpp"
#include "warpforge/layout/tcgen05_smem_descriptor.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr std::uint32_t kRow = 128;          // bytes per swizzled row (128-byte swizzle)
constexpr std::uint32_t kAtom = 8 * kRow;    // 8 rows: the swizzle pattern's repeat
constexpr std::uint32_t kBox64 = 64 * kRow;  // a 64 x 64 TMA box of 16-bit elements
constexpr std::uint32_t kTileBytes = kSm100aTileM * kRow;  // one operand's stage: 128 x 64 elements
constexpr int kColumns = kSm100aTileN;  // tensor-memory columns of the f32 accumulator
constexpr int kMmaK = 16;               // K of one kind::f16 MMA

// Offsets from the 1024-aligned base: the stages' A tiles, then B's, then the
// full and empty barriers, the accumulator's barrier and the tensor-memory
// address the allocation writes.
struct Layout {
  std::uint32_t a, b, full, empty, accumulator, tmem_slot, end;
};
Layout layout_of(const Sm100aSpec& s) {
  Layout l{};
  l.a = 0;
  l.b = l.a + s.stages * kTileBytes;
  l.full = l.b + s.stages * kTileBytes;
  l.empty = l.full + 8 * s.stages;
  l.accumulator = l.empty + 8 * s.stages;
  l.tmem_slot = l.accumulator + 8;
  l.end = l.tmem_slot + 4;
  return l;
}

class Sm100aGemmBuilder {
 public:
  explicit Sm100aGemmBuilder(const Sm100aSpec& s)
      : s_(s), l_(layout_of(s)), k_(s.name(), Target::sm_100a) {}

  ptx::Module build() {
    read_params();
    k_.reqntid(kSm100aThreads);
    Shared smem = k_.dynamic_shared("smem", 1024);
    // The 128-byte swizzle is a function of address bits 4-9: tiles start on
    // 1024-byte boundaries so that TMA's writes and the MMA's reads agree.
    base_ = (k_.address_of(smem) + 1023) & 0xFFFFFC00u;
    tid_ = k_.sreg(SReg::tid_x);
    if (s_.pair) rank_ = k_.sreg(SReg::cluster_ctarank);
    tile::MbarrierPipeline pipe(tile::MbarrierArray(k_, base_, l_.full, s_.stages),
                                tile::MbarrierArray(k_, base_, l_.empty, s_.stages));
    Reg accumulator_bar = base_ + l_.accumulator;
    Reg map_a = k_.param_generic_address(map_a_p_), map_b = k_.param_generic_address(map_b_p_);

    k_.if_then(tid_ == 0u, [&] {
      k_.prefetch_tensormap(map_a);
      k_.prefetch_tensormap(map_b);
      // One arrival fills a slot (the producer's arrive.expect_tx), and in a
      // pair's even CTA a second, the odd CTA's relay; one empties it (the
      // MMA issuer's tcgen05.commit).
      pipe.init(full_arrivals(s_.pair, rank_), 1u);
      k_.mbarrier_init(at(accumulator_bar), 1u);
      k_.fence_mbarrier_init();
    });
    k_.if_then(tid_ < 32u, [&] { k_.tcgen05_alloc(group(), at(base_ + l_.tmem_slot), kColumns); });
    k_.tcgen05_fence_before_thread_sync();
    k_.bar_sync();
    if (s_.pair) {  // the peer's barriers are initialised before either CTA arrives on them
      k_.barrier_cluster_arrive();
      k_.barrier_cluster_wait();
    }
    k_.tcgen05_fence_after_thread_sync();
    Reg taddr = k_.reg(u32);
    k_.ld(Space::shared, u32, taddr, at(base_ + l_.tmem_slot));

    Reg m0 = k_.sreg(SReg::ctaid_x) * imm(kSm100aTileM),
        n0 = k_.sreg(SReg::ctaid_y) * imm(kSm100aTileN);
    batch_ = k_.sreg(SReg::ctaid_z);
    Reg kblocks = (kdim_ + imm(kSm100aTileK - 1)) >> 6;
    k_.if_then(tid_ == 0u, [&] { produce(pipe, map_a, map_b, m0, n0, kblocks); });
    Pred issuer = s_.pair ? (tid_ == 32u) && (rank_ == 0u) : tid_ == 32u;
    k_.if_then(issuer, [&] { issue_mmas(pipe, taddr, kblocks, accumulator_bar); });
    if (s_.pair)
      k_.if_then((tid_ == 32u) && (rank_ == 1u), [&] { relay_full_slots(k_, pipe, kblocks); });
    k_.bar_sync();  // the roles' lanes rejoin their warps before the warp-wide tcgen05.ld
    k_.mbarrier_wait_parity(at(accumulator_bar), 0u);
    k_.tcgen05_fence_after_thread_sync();
    epilogue(taddr, m0, n0);
    k_.tcgen05_fence_before_thread_sync();
    k_.bar_sync();
    k_.if_then(tid_ < 32u, [&] { k_.tcgen05_dealloc(group(), taddr, kColumns); });
    return k_.module();
  }

 private:
  void read_params() {
    map_a_p_ = k_.param_bytes("map_a", 128, 64);
    map_b_p_ = k_.param_bytes("map_b", 128, 64);
    const int es = runtime::bits(s_.d) / 8;
    d_ = {k_.param_ptr("D", es), k_.param(u64, "d_row_stride"), k_.param(u64, "d_col_stride"),
          k_.param(u64, "d_batch_stride")};
    if (s_.has_c)
      c_ = {k_.param_ptr("C", es), k_.param(u64, "c_row_stride"), k_.param(u64, "c_col_stride"),
            k_.param(u64, "c_batch_stride")};
    m_ = k_.param(u32, "M");
    n_ = k_.param(u32, "N");
    kdim_ = k_.param(u32, "K");
    alpha_ = k_.param(f32, "alpha");
    if (s_.has_c) beta_ = k_.param(f32, "beta");
  }

  CtaGroup group() const { return s_.pair ? CtaGroup::two : CtaGroup::one; }
  // B's rows (of N) one CTA loads per k-block: all 128, or its half of a pair's.
  std::uint32_t b_rows() const { return s_.pair ? kSm100aTileN / 2 : kSm100aTileN; }

  // The producer: per k-block, a free slot, then A's and B's tiles into it
  // (in a pair, this CTA's 64 columns of B: n0 + 64 * rank onwards).
  void produce(const tile::MbarrierPipeline& pipe, const Reg& map_a, const Reg& map_b,
               const Reg& m0, const Reg& n0, const Reg& kblocks) {
    tile::PipelineState state(k_, s_.stages);
    Reg b0 = s_.pair ? n0 + (rank_ << 6) : n0;
    k_.for_range(0u, kblocks, 1u, [&](Reg kb) {
      Reg full = pipe.full_barrier(state);
      pipe.acquire(state);
      pipe.expect_tx(full, kTileBytes + b_rows() * kRow);
      Reg kx = kb << 6;
      load_tile(map_a, base_ + l_.a + state.stage() * kTileBytes, m0, kSm100aTileM, s_.a_k_major,
                kx, full);
      load_tile(map_b, base_ + l_.b + state.stage() * kTileBytes, b0, b_rows(), s_.b_k_major, kx,
                full);
      ++state;
    });
  }

  // One operand's `rows` rows (of M or N; 128 or 64) by 64 of K: K-major as
  // one 64 x rows box (rows of 128 bytes), MN-major as rows / 64 boxes of
  // 64 x 64 along M/N (each 64 K rows of 128 bytes).
  void load_tile(const Reg& map, const Reg& dst, const Reg& row0, std::uint32_t rows, bool k_major,
                 const Reg& kx, const Reg& full) {
    if (k_major) {
      k_.tma_load(at(dst), map, {kx, row0, batch_}, at(full));
      return;
    }
    for (std::uint32_t box = 0; box < rows / 64; ++box)
      k_.tma_load(at(dst + box * kBox64), map, {row0 + 64 * box, kx, batch_}, at(full));
  }

  // A 64-bit shared-memory descriptor of the 128-byte-swizzled tile at
  // `address` (PTX ISA 9.7.16.4.1): K-major tiles are 8-row atoms of
  // 128-byte rows (SBO = one atom; LBO unused, encoded as 16); MN-major
  // tiles are 64-wide boxes of 64 K rows (LBO = the next box along M/N, SBO =
  // the next 8 K rows).
  Reg descriptor(const Reg& address, bool k_major) {
    const layout::Tcgen05SmemDescriptor fixed{0, k_major ? 16u : kBox64, kAtom,
                                              layout::SmemSwizzle::b128};
    return k_.mov(u64, fixed.encode()) + descriptor_start(k_, address);
  }

  // The MMA issuer: per k-block, four K = 16 MMAs on the slot, then the
  // commit that frees it once they have read it (in a pair: both CTAs' slots,
  // and both accumulators at the end).
  void issue_mmas(const tile::MbarrierPipeline& pipe, const Reg& taddr, const Reg& kblocks,
                  const Reg& accumulator_bar) {
    layout::Tcgen05InstrDescriptor d;
    d.a = d.b = s_.ab == DType::f16 ? layout::Tcgen05Element::f16 : layout::Tcgen05Element::bf16;
    d.m = s_.pair ? 2 * kSm100aTileM : kSm100aTileM;
    d.n = kSm100aTileN;
    d.a_mn_major = !s_.a_k_major;
    d.b_mn_major = !s_.b_k_major;
    Reg idesc = k_.mov(b32, d.encode());
    // Each K = 16 step moves 32 bytes along a K-major row, or 16 K rows (two
    // atoms) down an MN-major box; descriptors count 16-byte units.
    const std::uint32_t a_step = (s_.a_k_major ? 32 : 2 * kAtom) >> 4,
                        b_step = (s_.b_k_major ? 32 : 2 * kAtom) >> 4;
    tile::PipelineState state(k_, s_.stages);
    k_.for_range(0u, kblocks, 1u, [&](Reg kb) {
      pipe.wait(state);
      Reg da = descriptor(base_ + l_.a + state.stage() * kTileBytes, s_.a_k_major);
      Reg db = descriptor(base_ + l_.b + state.stage() * kTileBytes, s_.b_k_major);
      Pred accumulate = kb != 0u;
      for (std::uint32_t step = 0; step < kSm100aTileK / kMmaK; ++step) {
        const std::variant<bool, PredUse> enable =
            step == 0 ? std::variant<bool, PredUse>(PredUse(accumulate))
                      : std::variant<bool, PredUse>(true);
        k_.tcgen05_mma(group(), Tcgen05Kind::f16, taddr, da + step * a_step, db + step * b_step,
                       idesc, enable);
      }
      commit_mmas(k_, s_.pair, pipe.empty().address(state.stage()));
      ++state;
    });
    commit_mmas(k_, s_.pair, accumulator_bar);
  }

  // Reads this thread's row of the accumulator, 32 columns at a time, and
  // writes D.
  void epilogue(const Reg& taddr, const Reg& m0, const Reg& n0) {
    Reg warp = tid_ >> 5;
    Reg row = m0 + (warp << 5) + (tid_ & 31u);
    Pred row_in = row < m_;
    Reg lanes = taddr + (warp << 21);  // lane 32w in bits 31-16 of the address
    Regs acc = k_.regs(f32, 32, "acc");
    k_.for_range(0u, imm(kColumns), 32u, [&](Reg c0) {
      k_.tcgen05_ld(TmemShape::lanes32_bits32, acc, lanes + c0);
      k_.tcgen05_wait_ld();
      for (std::uint32_t j = 0; j < 32; ++j) {
        Reg col = n0 + c0 + j;
        k_.if_then(row_in && (col < n_), [&] { write(row, col, acc[j]); });
      }
    });
  }

  // D(row, col) = alpha·acc (+ beta·C(row, col)), converted to D's type.
  void write(const Reg& row, const Reg& col, const Reg& acc) {
    const int es = runtime::bits(s_.d) / 8;
    const Type dt = s_.d == DType::f32 ? f32 : s_.d == DType::f16 ? f16 : bf16;
    Reg v = k_.reg(f32);
    k_.mul(v, acc, alpha_);
    if (s_.has_c)
      k_.fma(v, load_c_element(k_, s_.d, c_.base + element_offset(c_, row, col) * es), beta_, v);
    Reg address = d_.base + element_offset(d_, row, col) * es;
    if (dt == f32) {
      k_.st(Space::global, f32, at(address), v);
    } else {
      Reg h = k_.reg(dt);
      k_.cvt(h, v, {Round::rn});
      k_.st(Space::global, dt, at(address), h);
    }
  }

  struct Matrix {
    Reg base, row_stride, col_stride, batch_stride;
  };

  // Elements from a matrix's base to (row, col) of this CTA's batch.
  Reg element_offset(const Matrix& m, const Reg& row, const Reg& col) {
    Reg e = k_.reg(u64), wide = k_.reg(u64);
    k_.mul_wide(e, batch_, 1);
    k_.mul(e, e, m.batch_stride);
    k_.mul_wide(wide, row, 1);
    k_.mad(e, wide, m.row_stride, e);
    k_.mul_wide(wide, col, 1);
    k_.mad(e, wide, m.col_stride, e);
    return e;
  }

  const Sm100aSpec& s_;
  Layout l_;
  Kernel k_;
  ParamRef map_a_p_, map_b_p_;
  Matrix d_, c_;
  Reg m_, n_, kdim_, alpha_, beta_, base_, tid_, rank_, batch_;
};

}  // namespace

std::string Sm100aSpec::name() const {
  return std::string("gemm_sm100a_") + (ab == DType::f16 ? "f16" : "bf16") + "_" +
         std::string(runtime::name(d)) + "_" + (a_k_major ? "ak" : "am") +
         (b_k_major ? "bk" : "bn") + "_s" + std::to_string(stages) + (has_c ? "_withc" : "") +
         (pair ? "_pair" : "");
}

std::uint32_t sm100a_shared_bytes(const Sm100aSpec& spec) {
  return layout_of(spec).end + 1024;
}

ptx::Module build_sm100a_gemm(const Sm100aSpec& spec) {
  return Sm100aGemmBuilder(spec).build();
}

}  // namespace warpforge::ops
