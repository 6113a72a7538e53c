#include "stream_grouped_kernel.hpp"

#include <algorithm>
#include <optional>

#include "../gemm_amax/transposed_output.hpp"
#include "grouped_store.hpp"
#include "packed_weight_stream.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr int kPairs = PackedWeightsLayout::kChunk / 32;  // step pairs a chunk (16 k16 steps)
// A's part of a stage: [step pair][token][t] x 16 bytes.
std::int64_t a_stage_bytes(const StreamGroupedTiling& t) { return static_cast<std::int64_t>(kPairs) * t.tokens * 4 * 16; }

class StreamGrouped {
 public:
  StreamGrouped(const GroupedGemmProblem& p, const StreamGroupedTiling& t)
      : p_(p), t_(t), k_(kStreamGroupedKernel, Target::sm_90a) {}

  ptx::Module build() {
    Reg pa = k_.param_ptr("A", 16), pb = k_.param_ptr("B", 16), psfb;
    if (p_.packed_b) psfb = k_.param_ptr("SFB", 16);
    Reg poffsets = k_.param_ptr("offsets", 4), pd = k_.param_ptr("D", 4);
    Reg pamax, workspace;
    if (p_.amax) pamax = k_.param_ptr("amax", 4);
    if (t_.splits > 1) workspace = k_.param_ptr("workspace", 16);
    Reg m = k_.param(u32, "M");
    k_.reqntid(imm(t_.threads()));
    // Registers for the CTAs an SM the shared memory allows (PTX ISA
    // 11.4, performance-tuning directives: with .reqntid, ptxas caps the
    // registers a thread so that this many CTAs fit).
    k_.minnctapersm(imm(stream_grouped_ctas_per_sm(p_, t_)));
    Shared stages = k_.dynamic_shared("stages", 128);
    const GroupScheduleOptions so = stream_grouped_schedule(p_, t_);
    Shared table = k_.shared("group_table", so.table_bytes(), 4);
    Shared last = k_.shared("last_split", 4, 4);

    tid_ = k_.sreg(SReg::tid_x);
    lane_ = tid_ & 31u;
    Reg warp = tid_ >> 5u;
    GroupSchedule schedule(k_, so, poffsets, m, tid_, k_.address_of(table));
    std::optional<PackedWeightStream> stream;
    if (p_.native_b)
      stream.emplace(k_, NativeWeights{p_.b_dtype, p_.sf_dtype, p_.vec, p_.k, p_.n, code_bytes(p_.b_dtype, p_.b.ld)},
                     t_.row_tiles, t_.threads(), tid_);
    else if (p_.packed_b)
      stream.emplace(k_, p_.packed_layout(), t_.row_tiles, t_.threads(), tid_);
    else
      stream.emplace(k_, Bf16Weights{p_.groups, p_.k, p_.n, p_.b.ld, p_.b.batch}, t_.row_tiles, t_.threads(), tid_);
    PackedWeightStream& weights = *stream;
    const std::int64_t stage_bytes = stream_grouped_stage_bytes(p_, t_);
    Reg stage0 = k_.address_of(stages);

    // This thread's pieces of A in every chunk: warp w copies token rows
    // w, w + warps, ..., each a warp-wide copy of the row's 512 contiguous
    // bytes of the chunk (whole lines), lane l its K 8l .. 8l + 8 (pair l %
    // 8, t l / 8) into slot a_slot(pair, token, t). A lane's own pieces
    // (16 bytes a line, the [pair][token][t] order) had made each copy 32
    // shared-memory wavefronts, not 4: ~1.3M of 2.9M at 16 tokens (ncu).
    struct APiece {
      Reg token, k_in_chunk, to;
    };
    std::vector<APiece> a_pieces;
    {
      Reg pair = lane_ & 7u, t = lane_ >> 3u;
      for (int row = 0; row < t_.tokens; row += t_.warps) {
        Reg token = warp + imm(row);
        a_pieces.push_back({token, lane_ << 3u, a_slot(pair, token, t) << 4u});
      }
    }

    const int token_tiles = t_.tokens / 8;
    std::vector<Regs> acc;
    for (int i = 0; i < t_.row_tiles * token_tiles; ++i) acc.push_back(k_.regs(f32, 4));
    const std::int64_t chunks = p_.packed_layout().chunks();
    const std::int64_t per_split = (chunks + t_.splits - 1) / t_.splits;

    schedule.for_each([&](const GroupWork& w) {
      Pred real_group = w.group < imm(p_.groups);
      Reg t0 = w.begin + w.row_tile * imm(t_.tokens);
      Reg first_tile = w.col * imm(t_.warps * t_.row_tiles) + warp * imm(t_.row_tiles);
      // This split's chunks; the pseudo-group's items have none.
      Reg c0 = w.split * imm(per_split);
      Reg c1 = k_.min(c0 + imm(per_split), imm(chunks));
      k_.selp(c1, c1, c0, real_group);
      for (Regs& a : acc)
        for (const Reg& r : a) k_.mov(r, imm_f32(0.0f));
      const PackedWeightStream::Source source = weights.source(pb, psfb, w.group, first_tile);
      const std::vector<ARow> a_rows = a_sources(pa, t0, w.end, a_pieces);
      zero_empty_a_rows(stage0, stage_bytes, a_rows, a_pieces);
      const Reg a_read = a_read_offset(t0, w.end);

      // Chunk c0 + i lives in stage i % stages.
      auto issue = [&](const Reg& c, const Reg& stage) {
        k_.if_then(c < c1, [&] {
          issue_a(stage, c, a_rows, a_pieces);
          weights.issue(stage + imm(a_stage_bytes(t_)), source, c);
        });
        k_.cp_async_commit();  // empty past the last chunk: the group count stays in step
      };
      if (p_.scaled_a) {
        // A is the pre-pass's bf16 copy, and this kernel may start while
        // the pre-pass runs (launched with overlap_previous): the first
        // chunks' weights are requested before griddepcontrol.wait, their
        // A after it (in the first chunk's group, which then holds them all).
        for (int s = 0; s + 1 < t_.stages; ++s)
          k_.if_then(c0 + imm(s) < c1, [&] { weights.issue(stage0 + imm(s * stage_bytes + a_stage_bytes(t_)), source, c0 + imm(s)); });
        k_.griddepcontrol_wait();
        for (int s = 0; s + 1 < t_.stages; ++s) {
          k_.if_then(c0 + imm(s) < c1, [&] { issue_a(stage0 + imm(s * stage_bytes), c0 + imm(s), a_rows, a_pieces); });
          k_.cp_async_commit();
        }
      } else {
        for (int s = 0; s + 1 < t_.stages; ++s) issue(c0 + imm(s), stage0 + imm(s * stage_bytes));
      }
      // The stage of the chunk before c (at c0: the last stage), which
      // chunk c + stages - 1 takes over.
      Reg before = k_.mov(u32, stage0 + imm((t_.stages - 1) * stage_bytes));
      k_.for_range(c0, c1, 1u, [&](Reg c) {
        // Chunk c has landed once at most stages - 2 newer groups are
        // pending (PTX ISA 9.7.9.27); the barrier shows every thread's A
        // copies and frees the stage read by the chunk before.
        k_.cp_async_wait(t_.stages - 2);
        k_.bar_sync();
        issue(c + imm(t_.stages - 1), before);
        Reg next = before + imm(stage_bytes);
        Reg stage = k_.selp(next, stage0, next < stage0 + imm(t_.stages * stage_bytes));
        multiply(weights, stage, a_read, acc);
        k_.mov(before, stage);
      });
      k_.cp_async_wait_all();
      k_.bar_sync();  // the stages are free for the next item's copies

      Reg row0 = (first_tile << 4u) + (lane_ >> 2u);
      Reg token0 = t0 + ((lane_ & 3u) << 1u);
      auto store = [&] { store_d(acc, pd, pamax, row0, token0, w.end); };
      if (t_.splits == 1) {
        store();
        return;
      }
      split_k_reduce(k_, acc,
                     {.threads = t_.threads(), .thread = tid_, .unit = w.unit, .split = w.split, .splits = t_.splits,
                      .workspace = workspace, .counter_offset = split_counter_offset(),
                      .flag = k_.address_of(last)},
                     store);
    });
    return k_.module();
  }

 private:
  // Slots of every unit there can be, then the counters.
  std::uint64_t split_counter_offset() const {
    const std::int64_t units = max_group_units(stream_grouped_schedule(p_, t_), p_.m);
    return static_cast<std::uint64_t>(units * t_.splits) *
           split_k_slot_bytes(t_.threads(), static_cast<std::size_t>(t_.row_tiles * t_.tokens / 8));
  }

  // The 16-byte slot of A's stage holding A[token][k0 + 64t + 8·pair .. + 8)
  // (PackedWeightStream's K order: the b0, b1 of k16 steps 2·pair and
  // 2·pair + 1 of lane t): [pair][token][t] with, in odd pairs, the tokens
  // of each even/odd couple swapped (slot bit 2 flipped). A row's copy
  // (fixed token, 8 pairs x 4 t) then writes 8 bank groups 4 times each (4
  // wavefronts); a step pair's reads (8 tokens x 4 t) stay 512 contiguous
  // bytes.
  Reg a_slot(const Reg& pair, const Reg& token, const Reg& t) {
    return pair * imm(4 * t_.tokens) + (((token << 2u) + t) ^ ((pair & 1u) << 2u));
  }

  // Where this thread's pieces of A read in a work item: each piece's token
  // row at K 0, and whether that row lies inside the group (a row past the
  // group's end is copied never: zero_empty_a_rows zeroes it once).
  struct ARow {
    Reg at, inside;  // inside: 1 or 0 (a register, not a predicate: ptxas holds few of those)
  };
  template <class Pieces>
  std::vector<ARow> a_sources(const Reg& pa, const Reg& t0, const Reg& t_end, const Pieces& pieces) {
    std::vector<ARow> rows;
    for (const auto& piece : pieces) {
      Reg token = t0 + piece.token;
      Reg row = k_.reg(u64);
      k_.mul_wide(row, token, imm(2 * t_.a_ld));
      rows.push_back({pa + row, k_.selp(k_.mov(u32, 1u), 0u, token < t_end)});
    }
    return rows;
  }

  // The pieces of token rows past the group's end, zeroed in every stage
  // once a work item (they are never copied), by the thread that owns them:
  // the loop's barrier before a chunk's mma shows them to the others, and
  // the barrier after the previous item's last chunk freed the stages. A
  // zero-filling copy of each such piece every chunk took ~2/3 of the
  // shared memory's excess wavefronts at one token (docs/PERFORMANCE.md).
  template <class Pieces>
  void zero_empty_a_rows(const Reg& stage0, std::int64_t stage_bytes, const std::vector<ARow>& rows,
                         const Pieces& pieces) {
    Regs zeros = k_.regs(b32, 4);
    for (const Reg& z : zeros) k_.mov(z, 0u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Reg to = stage0 + pieces[i].to;
      k_.guarded(rows[i].inside == 0u, [&] {
        for (int s = 0; s < t_.stages; ++s) k_.st(Space::shared, b32, at(to, s * stage_bytes), zeros);
      });
    }
  }

  // Where lane 4j + t reads its b0, b1 of the first token tile in a stage's
  // step pair: token row j, or, past the group's end, the first row past
  // it (zeros), which every such lane of the same t reads alike: a warp
  // whose unit holds one token reads 2 rows' 128 bytes, not 8 rows' 512.
  // Later token tiles read where they lie (one register more a tile would
  // spill the 32- and 64-token kernels).
  Reg a_read_offset(const Reg& t0, const Reg& t_end) {
    Reg inside = k_.reg(s32);
    k_.sub(inside, t_end, t0);
    k_.max(inside, inside, 0);
    return (k_.min(lane_ >> 2u, inside.as(u32)) << 6u) + ((lane_ & 3u) << 4u);
  }

  // This thread's 16-byte pieces of A for chunk c, those of rows inside the
  // group: K past A's end reads nothing (zero-filled).
  template <class Pieces>
  void issue_a(const Reg& stage, const Reg& c, const std::vector<ARow>& rows, const Pieces& pieces) {
    Reg k0 = c << 8u;  // 256 codes a chunk
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Reg kk = k0 + pieces[i].k_in_chunk;
      Reg left = k_.reg(s32);
      k_.sub(left, imm(p_.k), kk);
      k_.min(left, left, 8);
      k_.max(left, left, 0);
      Reg col = k_.reg(u64);
      k_.mul_wide(col, kk, 2u);
      // The addresses outside the guard: a guarded definition would keep
      // its register's older value alive (ptxas spilled at 32 tokens).
      Reg to = stage + pieces[i].to, from = rows[i].at + col, bytes = left << 1u;
      k_.guarded(rows[i].inside != 0u, [&] { k_.cp_async(CpAsyncCache::cg, 16, at(to), at(from), Src(bytes)); });
    }
  }

  // One chunk's mma: the warp's weights converted 16 codes a lane at a
  // time (4 k16 steps), A's b0, b1 of two steps at once from the stage.
  void multiply(PackedWeightStream& weights, const Reg& stage, const Reg& a_read, std::vector<Regs>& acc) {
    PackedWeightStream::Chunk chunk = weights.load(stage + imm(a_stage_bytes(t_)));
    // Per pair parity (a_slot's swap of token couples in odd pairs): the
    // first token tile's lanes (a_read), the later tiles' (where they lie).
    Reg first_a[2] = {stage + a_read, stage + (a_read ^ 64u)};
    Reg lane_a[2] = {first_a[0], first_a[1]};
    if (t_.tokens > 8) lane_a[0] = stage + (lane_ << 4u), lane_a[1] = stage + ((lane_ << 4u) ^ 64u);
    const int token_tiles = t_.tokens / 8;
    auto run = [&](bool folded) {
      const std::vector<Regs> factors = weights.factors(chunk, folded);
      for (int group = 0; group < PackedWeightStream::kGroups; ++group) {
        const std::vector<Regs> pairs = weights.fragments(chunk, factors, group, folded);
        for (int half = 0; half < 2; ++half) {
          const int pair = 2 * group + half;
          std::vector<Regs> b;
          for (int nt = 0; nt < token_tiles; ++nt) {
            b.push_back(k_.regs(b32, 4));
            k_.ld(Space::shared, b32, b.back(),
                  at(nt == 0 ? first_a[pair % 2] : lane_a[pair % 2], static_cast<std::int64_t>(pair * t_.tokens + nt * 8) * 64));
          }
          for (int i = 0; i < t_.row_tiles; ++i) {
            const Regs& lo = pairs[static_cast<std::size_t>(2 * i)];
            const Regs& hi = pairs[static_cast<std::size_t>(2 * i + 1)];
            for (int step = 0; step < 2; ++step) {
              const std::size_t e = static_cast<std::size_t>(2 * (2 * half + step));
              Regs a{lo[e], hi[e], lo[e + 1], hi[e + 1]};
              for (int nt = 0; nt < token_tiles; ++nt) {
                const Regs& x = b[static_cast<std::size_t>(nt)];
                Regs& d = acc[static_cast<std::size_t>(i * token_tiles + nt)];
                k_.mma_sync(MmaShape::m16n8k16, bf16, bf16, f32, d, a,
                            Regs{x[static_cast<std::size_t>(2 * step)], x[static_cast<std::size_t>(2 * step + 1)]}, d);
              }
            }
          }
        }
      }
    };
    if (!weights.scaled()) {  // bf16 weights: nothing to convert
      run(true);
      return;
    }
    // mma.sync needs the whole warp: it takes the one-multiply way only
    // where every lane's chunk folds (vote.sync.all, PTX ISA 9.7.13.5).
    Pred warp_folds = k_.pred();
    k_.vote_sync(Vote::all, warp_folds, weights.foldable(chunk));
    k_.if_else(warp_folds, [&] { run(true); }, [&] { run(false); });
  }

  // D[token][row] = acc (PTX ISA 9.7.14.5.8, m16n8 C: register q holds row
  // groupID + 8(q / 2), column 2t + q % 2), inside N and the group's
  // tokens; with amax, max |D| folded per warp (redux.sync) and once a warp
  // into amax (the sign-cleared bits' unsigned order is the values', a NaN
  // on top).
  void store_d(const std::vector<Regs>& acc, const Reg& pd, const Reg& pamax, const Reg& row0, const Reg& token0,
               const Reg& t_end) {
    const int bytes = runtime::bits(p_.d_dtype) / 8, token_tiles = t_.tokens / 8;
    Reg thread_max = k_.mov(u32, 0u);
    for (int i = 0; i < t_.row_tiles; ++i)
      for (int nt = 0; nt < token_tiles; ++nt)
        for (int q = 0; q < 4; ++q) {
          Reg row = row0 + imm(16 * i + 8 * (q / 2));
          Reg token = token0 + imm(8 * nt + q % 2);
          Pred in = (row < imm(p_.n)) && (token < t_end);
          const Reg& v = acc[static_cast<std::size_t>(i * token_tiles + nt)][static_cast<std::size_t>(q)];
          if (p_.amax) {
            Reg bits = k_.reg(b32);
            k_.mov(bits, v);
            Reg kept = k_.selp(bits.as(u32) & 0x7fffffffu, 0u, in);
            k_.max(thread_max, thread_max, kept);
          }
          Reg at_row = k_.reg(u64), at_col = k_.reg(u64);
          k_.mul_wide(at_row, token, imm(p_.d.ld * bytes));
          k_.mul_wide(at_col, row, imm(bytes));
          store_d_element(k_, p_.d_dtype, pd + at_row + at_col, v, in);
        }
    if (!p_.amax) return;
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max);
    k_.if_then(lane_ == 0u, [&] { k_.red(Space::global, AtomOp::max, u32, at(pamax), warp_max); });
  }

  const GroupedGemmProblem& p_;
  StreamGroupedTiling t_;
  Kernel k_;
  Reg tid_, lane_;
};

}  // namespace

std::string StreamGroupedTiling::describe() const {
  return std::to_string(cta_rows()) + " rows x " + std::to_string(tokens) + " tokens per CTA (" +
         std::to_string(warps) + " warps x " + std::to_string(row_tiles) + " row tiles), " + std::to_string(stages) +
         " stages";
}

GroupScheduleOptions stream_grouped_schedule(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  return ragged_rows_schedule(p, t.cta_rows(), t.tokens, t.splits);
}

std::int64_t stream_grouped_stage_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  // A lane's share of a chunk: its pieces of two rows and their scales
  // (native: a 4-byte word of each row's; bf16: 2 x 128 bytes).
  const PackedWeightsLayout l = p.packed_layout();
  const std::int64_t lane = !p.packed_b ? 2 * PackedWeightsLayout::kPieceCodes * 2
                            : p.native_b ? l.block_bytes() / 32 + 8
                                         : (l.block_bytes() + l.scale_block_bytes()) / 32;
  const std::int64_t weights = static_cast<std::int64_t>(t.row_tiles) * t.threads() * lane;
  return a_stage_bytes(t) + (weights + 15) / 16 * 16;
}

std::int64_t stream_grouped_shared_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  return t.stages * stream_grouped_stage_bytes(p, t);
}

std::int64_t stream_grouped_ctas_per_sm(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  // sm_90's 228 KB of shared memory an SM; a CTA takes its dynamic bytes
  // (128-aligned after the static), its static ones (the group table and
  // the last-split flag) and 1 KB the system reserves.
  constexpr std::int64_t kSmShared = 228 * 1024, kReserved = 1024;
  const std::int64_t cta =
      stream_grouped_shared_bytes(p, t) + stream_grouped_schedule(p, t).table_bytes() + 4 + 128 + kReserved;
  const std::int64_t most = t.ctas_per_sm > 0 ? t.ctas_per_sm : std::max(1, std::min(4, 16 / t.warps));
  return std::clamp<std::int64_t>(kSmShared / cta, 1, most);
}

std::size_t stream_grouped_split_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  if (t.splits == 1) return 0;
  const std::int64_t units = max_group_units(stream_grouped_schedule(p, t), p.m);
  const std::uint64_t slots = static_cast<std::uint64_t>(units * t.splits) *
                              split_k_slot_bytes(t.threads(), static_cast<std::size_t>(t.row_tiles * t.tokens / 8));
  return static_cast<std::size_t>(slots + static_cast<std::uint64_t>(units) * 4);
}

ptx::Module build_stream_grouped(const GroupedGemmProblem& p, const StreamGroupedTiling& t) {
  const std::int64_t chunks = p.packed_layout().chunks();
  const std::int64_t per_split = (chunks + std::max(t.splits, 1) - 1) / std::max(t.splits, 1);
  if (t.warps < 1 || t.warps > 8 || t.row_tiles < 1 || t.row_tiles > 2 ||
      (t.tokens != 8 && t.tokens != 16 && t.tokens != 32 && t.tokens != 64) || t.stages < 2 || t.stages > 8 ||
      t.splits < 1 || (t.splits - 1) * per_split >= chunks || (kPairs * t.tokens * 4) % t.threads() != 0 ||
      t.a_ld < p.k || (t.a_ld * 2) % 16 != 0 ||
      (p.native_b && (p.groups != 1 || p.k % 64 != 0 || code_bytes(p.b_dtype, p.b.ld) % 16 != 0)))
    throw OpsError("stream grouped kernel: tiling " + t.describe() + ", " + std::to_string(t.splits) +
                   " splits of " + std::to_string(chunks) + " chunks, A rows of " + std::to_string(t.a_ld) +
                   "; it takes 1-8 warps of 1-2 row tiles, 8/16/32/64 tokens whose A pieces divide among the "
                   "threads, 2-8 stages, splits that each get a chunk, 16-byte aligned A rows (and GemmAmax's B: one "
                   "group, K a multiple of 64, 16-byte aligned rows)");
  return StreamGrouped(p, t).build();
}

}  // namespace warpforge::ops
