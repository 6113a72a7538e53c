#include "packed_weight_stream.hpp"

#include <bit>

#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {
constexpr int kLoadBytes = 16, kLanes = 32;
}  // namespace

PackedWeightStream::PackedWeightStream(Kernel& k, const PackedWeightsLayout& layout, int row_tiles, int threads,
                                       const Reg& tid)
    : k_(k),
      layout_(layout),
      codes_problem_{.ab_dtype = layout.data, .sf_dtype = layout.scale, .vec = layout.vec},
      codes_(k, codes_problem_),
      row_tiles_(row_tiles),
      threads_(threads),
      tid_(tid),
      lane_(tid & 31u) {}

// bf16 weights: a piece of a row is 64 values, 128 bytes.
PackedWeightStream::PackedWeightStream(Kernel& k, const Bf16Weights& weights, int row_tiles, int threads,
                                       const Reg& tid)
    : PackedWeightStream(k, PackedWeightsLayout{DType::bf16, DType::e8m0, 32, weights.groups, weights.k, weights.n},
                         row_tiles, threads, tid) {
  bf16_ = true;
  bf16_weights_ = weights;
}

// Block-scaled weights as GemmAmax takes them: the same pieces and stage
// layout as packed ones, read from other places.
PackedWeightStream::PackedWeightStream(Kernel& k, const NativeWeights& weights, int row_tiles, int threads,
                                       const Reg& tid)
    : PackedWeightStream(k, PackedWeightsLayout{weights.data, weights.scale, weights.vec, 1, weights.k, weights.n},
                         row_tiles, threads, tid) {
  native_ = true;
  native_weights_ = weights;
}

int PackedWeightStream::loads_per_row() const {
  if (bf16_) return PackedWeightsLayout::kPieceCodes * 2 / kLoadBytes;
  return static_cast<int>(layout_.block_bytes() / (2 * kLanes * kLoadBytes));
}
// Native: one 4-byte word of the 128x4 layout a row (the row's 4 scale
// blocks there, of which MXFP's piece takes 2).
int PackedWeightStream::lane_scale_bytes() const {
  if (native_) return 8;
  return bf16_ ? 0 : static_cast<int>(layout_.scale_block_bytes() / kLanes);
}

// bf16 rows where they lie, a row a warp-wide copy: lane l copies K
// 256·chunk + 8l .. + 8 of row 16·tile + r, so each copy is the row's 512
// contiguous bytes of the chunk (whole sectors; a lane's own fragments,
// 128 bytes of each of two rows, would take 32 half-used sectors a copy
// and fetch every sector twice). The stage holds [warp][tile][row][unit]
// x 16 bytes, unit u (K 8u .. 8u + 8 of the chunk) of row r at u ^ swizzle(u, r)
// (bf16_unit_swizzle): the copies and load()'s reads are conflict-free.
// Rows past N and K past its end read nothing (zeros). A lane's fragments
// are other lanes' copies: the caller's barrier after the wait shows them.
void PackedWeightStream::issue_bf16(const Reg& stage, const Source& src, const Reg& chunk) {
  const Bf16Weights& w = bf16_weights_;
  constexpr int kRows = PackedWeightsLayout::kRowTile, kRowBytes = PackedWeightsLayout::kChunk * 2;
  Reg kk = (chunk << 8u) + (lane_ << 3u);
  Reg left = k_.reg(s32);
  k_.sub(left, imm(w.k), kk);
  k_.min(left, left, 8);
  k_.max(left, left, 0);
  Reg bytes = left << 1u;
  Reg first_row = src.first_tile << 4u;
  Reg wide = k_.reg(u64);
  k_.mul_wide(wide, kk, 2u);
  Reg row0 = src.codes[0] + wide;
  // This lane's unit in even rows and in odd ones, from the warp's part of the stage.
  Reg warp_part = stage + (tid_ >> 5u) * imm(row_tiles_ * kRows * kRowBytes);
  const Reg to[2] = {warp_part + (bf16_unit_swizzle(lane_, 0) << 4u), warp_part + (bf16_unit_swizzle(lane_, 1) << 4u)};
  for (int i = 0; i < row_tiles_; ++i)
    for (int r = 0; r < kRows; ++r) {
      const int row = kRows * i + r;
      Pred inside = first_row + imm(row) < imm(w.n);
      Reg from = k_.selp(row0 + Src(static_cast<std::uint64_t>(2 * row * w.row_stride)), src.codes[1], inside);
      k_.cp_async(CpAsyncCache::cg, kLoadBytes, at(to[r % 2], static_cast<std::int64_t>(row) * kRowBytes), at(from),
                  Src(k_.selp(bytes, 0u, inside)));
    }
}

// Unit u of a bf16 row r (K 8u .. 8u + 8 of the chunk, 16 bytes) lies at u ^ s,
// s = (u / 8) | 4(r % 2) < 8: load()'s 8-lane phases (rows q, q + 1 of
// one parity each, t = 0..3, one j) read 8 distinct 16-byte bank groups
// (low bits j ^ t ^ 4(q % 2)), and a copy's phases (one row, 8
// consecutive u) write 8 distinct ones.
Reg PackedWeightStream::bf16_unit_swizzle(const Reg& unit, int row_parity) {
  return unit ^ (((unit >> 3u) & 3u) | imm(4 * row_parity));
}

std::int64_t PackedWeightStream::stage_bytes() const {
  const std::int64_t bytes = static_cast<std::int64_t>(row_tiles_) * threads_ *
                             (2 * loads_per_row() * kLoadBytes + lane_scale_bytes());
  return (bytes + 15) / 16 * 16;
}

PackedWeightStream::Source PackedWeightStream::source(const Reg& codes, const Reg& scales, const Reg& group,
                                                      const Reg& first_tile) {
  if (native_) return source_native(codes, scales, first_tile);
  Source src;
  src.first_tile = first_tile;
  if (bf16_) {  // the row tiles' first row at K 0 (lane and chunk added by issue_bf16)
    const Bf16Weights& w = bf16_weights_;
    Reg group_at = k_.reg(u64), row_at = k_.reg(u64);
    k_.mul_wide(group_at, group, imm(2 * w.group_stride));
    k_.mul_wide(row_at, first_tile << 4u, imm(2 * w.row_stride));
    src.codes.push_back(codes + group_at + row_at);
    src.codes.push_back(codes);
    return src;
  }
  const int s = lane_scale_bytes();
  Reg lane_codes = k_.reg(u64), lane_scales = k_.reg(u64);
  k_.mul_wide(lane_codes, lane_, imm(kLoadBytes));
  k_.mul_wide(lane_scales, lane_, imm(s));
  for (int i = 0; i < row_tiles_; ++i) {
    Reg tile = first_tile + imm(i);
    Pred inside = tile < imm(layout_.row_tiles());
    // Block (group, tile, chunk 0) of the packed layout, counted in 64 bits.
    Reg block = k_.reg(u64), wide = k_.reg(u64);
    k_.mul_wide(block, group, imm(layout_.row_tiles()));
    k_.cvt(wide, tile);
    block = (block + wide) * Src(static_cast<std::uint64_t>(layout_.chunks()));
    src.codes.push_back(
        k_.selp(codes + block * Src(static_cast<std::uint64_t>(layout_.block_bytes())) + lane_codes, codes, inside));
    src.scales.push_back(k_.selp(
        scales + block * Src(static_cast<std::uint64_t>(layout_.scale_block_bytes())) + lane_scales, scales, inside));
    src.code_bytes.push_back(k_.selp(k_.mov(u32, imm(kLoadBytes)), 0u, inside));
    src.scale_bytes.push_back(k_.selp(k_.mov(u32, imm(s)), 0u, inside));
  }
  return src;
}

// Native weights, per row tile i and half h (row 16·tile + q + 8h): where
// this lane's copies read the row at chunk 0 (lane 4q + r copies units r,
// r + 4, ... of 16 bytes of the row's chunk: issue_native), and the 4-byte
// word of the row's scales that holds this lane's blocks at chunk 0 (the
// 128x4 layout: (row / 128)·RK·512 + (block / 4)·512 + (row % 32)·16 +
// (row / 32 % 4)·4, block 64t / vec of the chunk). Rows past N read nothing.
PackedWeightStream::Source PackedWeightStream::source_native(const Reg& codes, const Reg& scales,
                                                             const Reg& first_tile) {
  const NativeWeights& w = native_weights_;
  const ScaleFactorLayout sf{w.n, w.k, 1, w.vec};
  const Reg q = lane_ >> 2u, t = lane_ & 3u;
  // The lane's 4-byte word at chunk 0: MXFP's two blocks 2t, 2t + 1 share
  // one with lane t ^ 1 (load() takes its half), NVFP4's four are its own.
  Reg word_at = ((t * imm(PackedWeightsLayout::kPieceCodes / w.vec)) >> 2u) << 9u;
  Reg lane_unit = k_.reg(u64);  // unit r of the row's chunk: issue_native
  k_.mul_wide(lane_unit, t, imm(kLoadBytes));
  Source src;
  src.first_tile = first_tile;
  for (int i = 0; i < row_tiles_; ++i)
    for (int h = 0; h < 2; ++h) {
      Reg row = ((first_tile + imm(i)) << 4u) + q + imm(8 * h);
      Pred inside = row < imm(w.n);
      Reg at_row = k_.reg(u64), at_scale = k_.reg(u64);
      k_.mul_wide(at_row, row, imm(w.row_bytes));
      k_.cvt(at_scale, (row >> 7u) * imm(sf.k_tiles() * 512) + word_at + (row & 31u) * 16u + ((row >> 5u) & 3u) * 4u);
      src.codes.push_back(k_.selp(codes + at_row + lane_unit, codes, inside));
      src.scales.push_back(k_.selp(scales + at_scale, scales, inside));
      src.code_bytes.push_back(k_.selp(k_.mov(u32, imm(kLoadBytes)), 0u, inside));
      src.scale_bytes.push_back(k_.selp(k_.mov(u32, 4u), 0u, inside));
    }
  return src;
}

// Native weights: the warp's copy x of row half h of tile i takes, lane 4q
// + r, the row's unit n = 4x + r (16 bytes; 8 rows x 64 contiguous bytes a
// copy, whole sectors), which is unit j = n % U of lane t = n / U's piece
// (U = 16-byte units a piece: FP4 2, FP8 4): it lands where the packed
// layout puts that lane's unit, so load() reads native and packed chunks
// alike once the kernel's barrier shows other lanes' copies. A piece past K
// reads nothing (K a multiple of 64: whole pieces), nor do rows past N.
void PackedWeightStream::issue_native(const Reg& stage, const Source& src, const Reg& chunk) {
  const NativeWeights& w = native_weights_;
  const int units = loads_per_row(), loads = 2 * units, s = lane_scale_bytes();
  const std::int64_t chunk_bytes = code_bytes(w.data, PackedWeightsLayout::kChunk);
  const std::int64_t scales_at = static_cast<std::int64_t>(row_tiles_) * loads * threads_ * kLoadBytes;
  const std::int64_t scale_step = PackedWeightsLayout::kChunk / (4 * w.vec) * 512;  // 128x4 tiles a chunk
  const Reg q = lane_ >> 2u, r = lane_ & 3u;
  // This lane's unit j = r % U of lane 4q + r / U (+ 4x / U for copy x).
  Reg to = stage + ((r & imm(units - 1)) * imm(threads_) + (tid_ & ~31u) + (q << 2u) + (r >> imm(std::countr_zero(static_cast<unsigned>(units))))) *
                       imm(kLoadBytes);
  Reg code_step = k_.reg(u64), sf_step = k_.reg(u64);
  k_.mul_wide(code_step, chunk, imm(chunk_bytes));
  k_.mul_wide(sf_step, chunk, imm(scale_step));
  // Whole chunks when K is a multiple of 256; else this lane's piece (the
  // scales) and each copy's unit (the codes) inside K or not.
  const bool tail = w.k % PackedWeightsLayout::kChunk != 0;
  Reg piece_in;
  if (tail) {
    const Reg t = lane_ & 3u;
    piece_in = k_.selp(k_.mov(u32, 0xFFFFFFFFu), 0u, (chunk << 8u) + (t << 6u) < imm(w.k));
  }
  const Reg to_scales = stage + imm(scales_at) + tid_ * imm(s);
  for (int i = 0; i < row_tiles_; ++i)
    for (int h = 0; h < 2; ++h) {
      const auto row = static_cast<std::size_t>(2 * i + h);
      Reg from = src.codes[row] + code_step;
      for (int x = 0; x < units; ++x) {
        // Unit 4x + r of the row's chunk: K codes from (256·chunk + (4x + r)·16·codes a byte).
        Reg bytes = src.code_bytes[row];
        if (tail) {
          const int codes_a_unit = kLoadBytes * 8 / runtime::bits(w.data);
          Pred in = (chunk << 8u) + (r + imm(4 * x)) * imm(codes_a_unit) < imm(w.k);
          bytes = k_.selp(bytes, 0u, in);
        }
        k_.cp_async(CpAsyncCache::cg, kLoadBytes,
                    at(to, static_cast<std::int64_t>(((i * loads + h * units) * threads_ + 4 * x / units) * kLoadBytes)),
                    at(from, 4 * x * kLoadBytes), Src(bytes));
      }
      Reg sf_bytes = tail ? Reg(src.scale_bytes[row] & piece_in) : src.scale_bytes[row];
      k_.cp_async(CpAsyncCache::ca, 4, at(to_scales, static_cast<std::int64_t>(i) * threads_ * s + 4 * h),
                  at(src.scales[row] + sf_step), Src(sf_bytes));
    }
}

// A tile past N reads chunk c of its group's first tile, nothing of it (0 bytes).
void PackedWeightStream::issue(const Reg& stage, const Source& src, const Reg& chunk) {
  if (bf16_) {
    issue_bf16(stage, src, chunk);
    return;
  }
  if (native_) {
    issue_native(stage, src, chunk);
    return;
  }
  const int loads = 2 * loads_per_row(), s = lane_scale_bytes();
  const std::int64_t scales_at = static_cast<std::int64_t>(row_tiles_) * loads * threads_ * kLoadBytes;
  Reg code_step = k_.reg(u64), scale_step = k_.reg(u64);
  k_.mul_wide(code_step, chunk, imm(layout_.block_bytes()));
  k_.mul_wide(scale_step, chunk, imm(layout_.scale_block_bytes()));
  Reg to_codes = stage + (tid_ << 4u), to_scales = stage + imm(scales_at) + tid_ * imm(s);
  for (int i = 0; i < row_tiles_; ++i) {
    const auto at_i = static_cast<std::size_t>(i);
    Reg from_codes = src.codes[at_i] + code_step;
    for (int j = 0; j < loads; ++j)
      k_.cp_async(CpAsyncCache::cg, kLoadBytes, at(to_codes, static_cast<std::int64_t>(i * loads + j) * threads_ * kLoadBytes),
                  at(from_codes, j * kLanes * kLoadBytes), Src(src.code_bytes[at_i]));
    k_.cp_async(CpAsyncCache::ca, s, at(to_scales, static_cast<std::int64_t>(i) * threads_ * s),
                at(src.scales[at_i] + scale_step), Src(src.scale_bytes[at_i]));
  }
}

PackedWeightStream::Chunk PackedWeightStream::load(const Reg& stage) {
  if (bf16_) return load_bf16(stage);
  const int loads = 2 * loads_per_row(), s = lane_scale_bytes();
  const std::int64_t scales_at = static_cast<std::int64_t>(row_tiles_) * loads * threads_ * kLoadBytes;
  Chunk c;
  Reg thread_codes = stage + (tid_ << 4u);
  Reg thread_scales = stage + imm(scales_at) + tid_ * imm(s);
  for (int i = 0; i < row_tiles_; ++i) {
    for (int h = 0; h < 2; ++h) {
      Regs words;
      for (int j = h * loads_per_row(); j < (h + 1) * loads_per_row(); ++j) {
        Regs four = k_.regs(b32, 4);
        k_.ld(Space::shared, b32, four, at(thread_codes, static_cast<std::int64_t>(i * loads + j) * threads_ * kLoadBytes));
        words.insert(words.end(), four.begin(), four.end());
      }
      c.words.push_back(words);
    }
    // S bytes: row q's blocks, then row q + 8's; two scale bytes a register.
    Regs raw = k_.regs(b32, s / 4);
    const std::int64_t at_i = static_cast<std::int64_t>(i) * threads_ * s;
    if (s == 4)
      k_.ld(Space::shared, b32, raw[0], at(thread_scales, at_i));
    else
      k_.ld(Space::shared, b32, raw, at(thread_scales, at_i));
    for (int h = 0; h < 2; ++h) {
      Regs pairs;
      if (native_ && layout_.vec == 32) {  // the lane's two blocks: half t % 2 of the row's word
        pairs.push_back((raw[static_cast<std::size_t>(h)].as(u32) >> ((lane_ & 1u) << 4u)) & 0xFFFFu);
      } else if (s == 4) {
        pairs.push_back(h ? Reg(raw[0].as(u32) >> 16u) : Reg(raw[0].as(u32) & 0xFFFFu));
      } else {
        pairs.push_back(raw[static_cast<std::size_t>(h)].as(u32) & 0xFFFFu);
        pairs.push_back(raw[static_cast<std::size_t>(h)].as(u32) >> 16u);
      }
      c.scales.push_back(pairs);
    }
  }
  return c;
}

// bf16: lane 4q + t's words of row q + 8h are units 8t .. 8t + 7 of that
// row (issue_bf16), at 8t + (j ^ s), s = t | 4(q % 2): within the warp's
// part of the stage, unit j's offset is unit 0's with its bits 4-6 xor-ed
// by j (every other term of the offset a multiple of 128). The xor is taken
// on the offset, not the address: the dynamic shared memory starts after
// the static (the group table), at 16-byte alignment only on the GPU.
PackedWeightStream::Chunk PackedWeightStream::load_bf16(const Reg& stage) {
  constexpr int kRows = PackedWeightsLayout::kRowTile, kRowBytes = PackedWeightsLayout::kChunk * 2;
  const Reg q = lane_ >> 2u, t = lane_ & 3u;
  Reg first = (tid_ >> 5u) * imm(row_tiles_ * kRows * kRowBytes) + q * imm(kRowBytes) +
              (bf16_unit_swizzle(t << 3u, 0) << 4u);
  k_.mov(first, first ^ ((q & 1u) << 6u));
  std::vector<Reg> unit;
  for (int j = 0; j < loads_per_row(); ++j) unit.push_back(stage + (j == 0 ? first : Reg(first ^ imm(16 * j))));
  Chunk c;
  for (int i = 0; i < row_tiles_; ++i)
    for (int h = 0; h < 2; ++h) {
      Regs words;
      for (int j = 0; j < loads_per_row(); ++j) {
        Regs four = k_.regs(b32, 4);
        k_.ld(Space::shared, b32, four, at(unit[static_cast<std::size_t>(j)], static_cast<std::int64_t>(kRows * i + 8 * h) * kRowBytes));
        words.insert(words.end(), four.begin(), four.end());
      }
      c.words.push_back(words);
    }
  return c;
}

Pred PackedWeightStream::foldable(const Chunk& c) {
  std::vector<Reg> all;
  for (const Regs& r : c.scales) all.insert(all.end(), r.begin(), r.end());
  Pred fold = codes_.scales_fold(all, 2);
  if (fp4()) return fold;
  return fold && codes_.codes_finite(c.words);
}

// Packed FP4 words (PackedWeightsLayout::kFp4Bits) to bf16 pairs: pair p
// of word j is out[4j + p], its bits moved to bf16's sign (15) and fields
// (8..6) of each half, the value times 2^-126 (BlockCodes' representation),
// then scaled (BlockCodes::apply_scale). Pair 0 lies there already (a
// mask), pair 1 lies 6 below (a shift and the mask), pair 2's M, E0, S 3
// below and its E1 5 above, pair 3's M and S 1 below and its E0, E1 3
// above (two shifts, each masked: two lop3). 15 SASS instructions a word of
// 8 codes as before the sm90a RS design's layout (s8; s6: 6 LOP3, 2 SHF,
// 3 IMAD, 4 HMUL2), where BlockCodes' nibble order takes 17 (8 LOP3, 1
// SHF, 4 IMAD, 4 HMUL2): the loop's 683 a chunk a warp become 619
// (docs/PERFORMANCE.md).
void PackedWeightStream::dequant_fp4(const Regs& words, const Reg& factor, const Regs& out, bool folded) {
  constexpr std::uint32_t kFields = 0x81C081C0u;
  for (std::size_t j = 0; j < words.size(); ++j) {
    const Reg& w = words[j];
    const Reg pair[4] = {w & kFields, (w << 6u) & kFields, ((w << 3u) & 0x80C080C0u) | ((w >> 5u) & 0x01000100u),
                         ((w << 1u) & 0x80408040u) | ((w >> 3u) & 0x01800180u)};
    for (std::size_t p = 0; p < 4; ++p) codes_.apply_scale(out[4 * j + p], pair[p], factor, folded);
  }
}

std::vector<Regs> PackedWeightStream::factors(const Chunk& c, bool folded) {
  std::vector<Regs> out;
  if (bf16_) return out;
  const int blocks = PackedWeightsLayout::kPieceCodes / layout_.vec;  // of a row's piece
  for (const Regs& scales : c.scales) {
    Regs row;
    for (int b = 0; b < blocks; ++b)
      row.push_back(codes_.scale_factor(scales[static_cast<std::size_t>(b / 2)], b % 2, 2, folded));
    out.push_back(row);
  }
  return out;
}

std::vector<Regs> PackedWeightStream::fragments(const Chunk& c, const std::vector<Regs>& factors, int group,
                                                bool folded) {
  if (bf16_) {  // pair p of the 16 values is word p: nothing to convert
    std::vector<Regs> out;
    for (const Regs& words : c.words) out.emplace_back(words.begin() + 8 * group, words.begin() + 8 * (group + 1));
    return out;
  }
  const auto block = static_cast<std::size_t>(group * kGroupCodes / layout_.vec);  // the scale block of these 16 codes
  const int words = fp4() ? 2 : 4;                                                  // 16 codes
  std::vector<Regs> out;
  for (std::size_t r = 0; r < c.words.size(); ++r) {
    const Reg& factor = factors[r][block];
    Regs from(c.words[r].begin() + group * words, c.words[r].begin() + (group + 1) * words);
    Regs pairs = k_.regs(b32, 8);
    if (fp4() && native_)  // nibble order: pair 4j + i is codes 8j + i and 8j + i + 4
      codes_.dequant_fp4(from, Regs{factor, factor}, pairs, folded);
    else if (fp4())
      dequant_fp4(from, factor, pairs, folded);
    else
      codes_.dequant_fp8(from, factor, pairs, folded);
    out.push_back(pairs);
  }
  return out;
}

}  // namespace warpforge::ops
