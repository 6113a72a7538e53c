#include "packed_weight_stream.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {
std::uint32_t imm(std::int64_t v) { return static_cast<std::uint32_t>(v); }
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

int PackedWeightStream::loads_per_row() const {
  if (bf16_) return PackedWeightsLayout::kPieceCodes * 2 / kLoadBytes;
  return static_cast<int>(layout_.block_bytes() / (2 * kLanes * kLoadBytes));
}
int PackedWeightStream::lane_scale_bytes() const {
  return bf16_ ? 0 : static_cast<int>(layout_.scale_block_bytes() / kLanes);
}

// bf16 rows where they lie: lane 4q + t's load j of half h is row
// 16·tile + q + 8h, K from 256·chunk + 64t + 8j; rows past N and K past
// its end read nothing (zeros).
void PackedWeightStream::issue_bf16(const Reg& stage, const Reg& b, const Reg& group, const Reg& first_tile,
                                    const Reg& chunk) {
  const Bf16Weights& w = bf16_weights_;
  const int loads = loads_per_row();
  Reg group_at = k_.reg(u64);
  k_.mul_wide(group_at, group, imm(2 * w.group_stride));
  Reg k0 = (chunk << 8u) + ((lane_ & 3u) << 6u);
  for (int i = 0; i < row_tiles_; ++i)
    for (int h = 0; h < 2; ++h) {
      Reg row = ((first_tile + imm(i)) << 4u) + (lane_ >> 2u) + imm(8 * h);
      Pred inside = row < imm(w.n);
      Reg row_at = k_.reg(u64);
      k_.mul_wide(row_at, row, imm(2 * w.row_stride));
      for (int j = 0; j < loads; ++j) {
        Reg kk = k0 + imm(8 * j);
        Reg left = k_.reg(s32);
        k_.sub(left, imm(w.k), kk);
        k_.min(left, left, 8);
        k_.max(left, left, 0);
        Reg col_at = k_.reg(u64);
        k_.mul_wide(col_at, kk, 2u);
        Reg from = k_.selp(b + group_at + row_at + col_at, b, inside);
        Reg bytes = k_.selp(left << 1u, 0u, inside);
        Reg to = stage + ((imm(((i * 2 + h) * loads + j) * threads_) + tid_) << 4u);
        k_.cp_async(CpAsyncCache::cg, kLoadBytes, at(to), at(from), Src(bytes));
      }
    }
}

std::int64_t PackedWeightStream::stage_bytes() const {
  const std::int64_t bytes = static_cast<std::int64_t>(row_tiles_) * threads_ *
                             (2 * loads_per_row() * kLoadBytes + lane_scale_bytes());
  return (bytes + 15) / 16 * 16;
}

void PackedWeightStream::issue(const Reg& stage, const Reg& codes, const Reg& scales, const Reg& group,
                               const Reg& first_tile, const Reg& chunk) {
  if (bf16_) {
    issue_bf16(stage, codes, group, first_tile, chunk);
    return;
  }
  const int loads = 2 * loads_per_row(), s = lane_scale_bytes();
  const std::int64_t scales_at = static_cast<std::int64_t>(row_tiles_) * loads * threads_ * kLoadBytes;
  Reg lane_codes = k_.reg(u64), lane_scales = k_.reg(u64);
  k_.mul_wide(lane_codes, lane_, imm(kLoadBytes));
  k_.mul_wide(lane_scales, lane_, imm(s));
  for (int i = 0; i < row_tiles_; ++i) {
    Reg tile = first_tile + imm(i);
    Pred inside = tile < imm(layout_.row_tiles());
    // Block (group, tile, chunk) of the packed layout, counted in 64 bits.
    Reg block = k_.reg(u64), wide = k_.reg(u64);
    k_.mul_wide(block, group, imm(layout_.row_tiles()));
    k_.cvt(wide, tile);
    block = (block + wide) * Src(static_cast<std::uint64_t>(layout_.chunks()));
    k_.cvt(wide, chunk);
    block = block + wide;
    Reg from_codes = k_.selp(codes + block * Src(static_cast<std::uint64_t>(layout_.block_bytes())) + lane_codes,
                             codes, inside);
    Reg from_scales =
        k_.selp(scales + block * Src(static_cast<std::uint64_t>(layout_.scale_block_bytes())) + lane_scales, scales,
                inside);
    Reg code_bytes = k_.selp(k_.mov(u32, imm(kLoadBytes)), 0u, inside);
    Reg scale_bytes = k_.selp(k_.mov(u32, imm(s)), 0u, inside);
    for (int j = 0; j < loads; ++j) {
      Reg to = stage + ((imm((i * loads + j) * threads_) + tid_) << 4u);
      k_.cp_async(CpAsyncCache::cg, kLoadBytes, at(to), at(from_codes, j * kLanes * kLoadBytes), Src(code_bytes));
    }
    Reg to = stage + imm(scales_at) + (imm(i * threads_) + tid_) * imm(s);
    k_.cp_async(CpAsyncCache::ca, s, at(to), at(from_scales), Src(scale_bytes));
  }
}

PackedWeightStream::Chunk PackedWeightStream::load(const Reg& stage) {
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
    if (bf16_) continue;
    // S bytes: row q's blocks, then row q + 8's; two scale bytes a register.
    Regs raw = k_.regs(b32, s / 4);
    const std::int64_t at_i = static_cast<std::int64_t>(i) * threads_ * s;
    if (s == 4)
      k_.ld(Space::shared, b32, raw[0], at(thread_scales, at_i));
    else
      k_.ld(Space::shared, b32, raw, at(thread_scales, at_i));
    for (int h = 0; h < 2; ++h) {
      Regs pairs;
      if (s == 4) {
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

Pred PackedWeightStream::foldable(const Chunk& c) {
  std::vector<Reg> all;
  for (const Regs& r : c.scales) all.insert(all.end(), r.begin(), r.end());
  Pred fold = codes_.scales_fold(all, 2);
  if (fp4()) return fold;
  return fold && codes_.codes_finite(c.words);
}

std::vector<Regs> PackedWeightStream::fragments(const Chunk& c, int group, bool folded) {
  if (bf16_) {  // pair p of the 16 values is word p: nothing to convert
    std::vector<Regs> out;
    for (const Regs& words : c.words) out.emplace_back(words.begin() + 8 * group, words.begin() + 8 * (group + 1));
    return out;
  }
  const int block = group * kGroupCodes / layout_.vec;  // the scale block of these 16 codes
  const int words = fp4() ? 2 : 4;                       // 16 codes
  std::vector<Regs> out;
  for (std::size_t r = 0; r < c.words.size(); ++r) {
    Reg factor = codes_.scale_factor(c.scales[r][static_cast<std::size_t>(block / 2)], block % 2, 2, folded);
    Regs from(c.words[r].begin() + group * words, c.words[r].begin() + (group + 1) * words);
    Regs pairs = k_.regs(b32, 8);
    if (fp4())
      codes_.dequant_fp4(from, Regs{factor, factor}, pairs, folded);
    else
      codes_.dequant_fp8(from, factor, pairs, folded);
    out.push_back(pairs);
  }
  return out;
}

}  // namespace warpforge::ops
