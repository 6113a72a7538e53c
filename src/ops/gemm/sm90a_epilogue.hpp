// The sm90a GEMM's finish step (the design of sm90a_kernel.cpp): a tile's
// accumulators to D as alpha·acc (+ beta·C), converted to D's type and
// written into 128-byte-swizzled boxes of 64 rows in shared memory, which
// TMA stores (edge tiles: TMA clips at the tensor's edge); a 16-bit D goes
// through stmatrix. The columns past the last whole store box are stored
// from registers. With amax, max |D| (before the conversion) is folded into
// the thread's maximum.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sm90a_kernel.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/work_source.hpp"

namespace warpforge::ops {

// Bytes per swizzled row of the 128-byte swizzle: TMA's and wgmma's tiles.
inline constexpr std::uint32_t kSm90aRow = 128;

// The kernel type of a GEMM dtype (bf16, f16, f32).
dsl::Type sm90a_dsl_type(runtime::DType t);

// D's and C's kernel parameters (Sm90aSpec's header lists them).
struct Sm90aOutput {
  dsl::Reg map_d;                // D's tensor map (its generic address)
  dsl::Reg c, c_rs, c_cs, c_bs;  // with has_c: C and its strides (elements)
  dsl::Reg d, d_rs, d_bs;        // with tail columns (sm90a_tail_cols): D and its strides
  dsl::Reg m, n, alpha, beta;
};

class Sm90aEpilogue {
 public:
  // `barriers`: each consumer warpgroup's, which orders its threads' stores
  // into its buffer (smem.epilogue + warpgroup · epilogue_per_consumer)
  // against the TMA store that reads it.
  Sm90aEpilogue(dsl::Kernel& k, const Sm90aSpec& s, const Sm90aSmem& smem, const Sm90aOutput& out,
                const dsl::Reg& base, const dsl::Reg& tid, const tile::NamedBarrierSet& barriers)
      : k_(k), s_(s), smem_(smem), o_(out), base_(base), tid_(tid), barriers_(barriers) {}

  // A consumer thread's epilogue state, before its first tile: with amax,
  // its max |D| bits (0).
  void begin();
  // The tile `t` of warpgroup `cw` (its accumulators `accs`, 64 rows each
  // from row rows0 of the tile); `leader` its first thread, which issues the
  // TMA stores.
  void store(const std::vector<dsl::Regs>& accs, const tile::Tile& t, const dsl::Reg& rows0, const dsl::Reg& cw,
             const dsl::Pred& leader);
  // After the last tile: with amax, the thread's maximum folded per warp
  // (redux.sync) into `amax` (one red.global.max per warp: |D| bits, whose
  // unsigned order is value order, a positive NaN above +inf); the leader
  // waits for its last stores.
  void end(const dsl::Pred& leader, const dsl::Reg& amax);

 private:
  std::pair<dsl::Reg, dsl::Reg> output_pair(const dsl::Regs& acc, int i, const tile::Tile& t, const dsl::Reg& row,
                                            const dsl::Reg& lane);
  void add_c(const dsl::Reg& v, const dsl::Reg& row_offset, const dsl::Reg& col, const dsl::Pred& inside);
  void store_tail(const dsl::Regs& acc, int col0, int col1, const tile::Tile& t, const dsl::Reg& rows0,
                  const dsl::Reg& row0, const dsl::Reg& lane);

  dsl::Kernel& k_;
  const Sm90aSpec& s_;
  const Sm90aSmem& smem_;
  const Sm90aOutput& o_;
  dsl::Reg base_, tid_;
  tile::NamedBarrierSet barriers_;
  dsl::Reg thread_max_;  // with amax: this thread's max |D| bits
};

}  // namespace warpforge::ops
