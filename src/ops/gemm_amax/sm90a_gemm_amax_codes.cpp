// The sm90a GemmAmax designs' codes and scales to bf16 (the integer bit
// moves, the fold test, the factors), and which raw chunks a converting
// thread takes.
#include "sm90a_gemm_amax_design.hpp"

namespace warpforge::ops::sm90a_amax {

// Scale bytes of the 128x4 layout (REFERENCE.md): the 4 scale blocks of row
// r in a stage's 512-byte piece are the word at (r % 32)·16 + ((r / 32) % 4)·4.
// A thread whose codes start at code `code0` of each K block (64 codes)
// reads block (64·kb + code0) / vec, byte (code0 / vec) % 4 of the word
// (plus 2 in odd K blocks when vec is 32: row_scales). Tiles start on
// multiples of 128 rows, so the site depends on the row in the piece
// (the tile's row, or 64 past it in a 64-row tile's second half) alone.
Reg AmaxDesign::scale_site(const Reg& piece_row, const Reg& code0) {
  return ((piece_row & 31u) << 4) + (((piece_row >> 5) & 3u) << 2) + ((code0 >> imm(p_.vec == 16 ? 4 : 5)) & 3u);
}

// The `count` scale bytes of `row`'s codes in K block kb (count 2: 32
// codes of vec 16, the second scale the next byte, the first at an even
// address as code0 / 16 is even: one 16-bit load), zero-extended.
Reg AmaxDesign::scale_bytes(const Reg& sf_stage, const RowReads& row, const Reg& kb, int count) {
  Reg address = sf_stage + row.site;
  if (p_.vec == 32) address = address + ((kb & 1u) << 1);
  Reg narrow = k_.reg(u16), e = k_.reg(u32);
  k_.ld(Space::shared, count == 2 ? u16 : u8, narrow, at(address, row.site_offset));
  k_.cvt(e, narrow);
  return e;
}

// The multipliers (bf16x2, the value in both halves) for the `count`
// scales in `bytes` (BlockCodes::scale_factor), 0 past K: TMA zero-filled
// those codes, but the layout's padding scale might be NaN, and the sum
// would carry it into C. Only a K that is no multiple of the 64-code block
// reaches past it. (Rows past M or N need nothing: their accumulators are
// neither stored nor counted in amax.)
Regs AmaxDesign::scale_factors(const Reg& bytes, int count, const Reg& kb, const Reg& code0, bool folded) {
  const std::int64_t blocks = (p_.k + p_.vec - 1) / p_.vec;
  Regs factors;
  for (int g = 0; g < count; ++g) {
    Reg f = codes_.scale_factor(bytes, g, count, folded);
    if (p_.k % kSm90aGemmAmaxTileK != 0)
      k_.selp(f, f, 0u, (((kb << 6) + code0 + imm(16 * g)) >> imm(p_.vec == 16 ? 4 : 5)) < imm(blocks));
    factors.push_back(f);
  }
  return factors;
}

// The raw row (64 codes: 32 bytes of E2M1, 64 of FP8) is C = 2 or 4 16-byte
// chunks; converting thread t of T (the dequantizer warpgroups', or the
// converting design's three) takes chunk t % C of rows t / C + (T / C) i: a
// warp reads 512 contiguous bytes, and its bf16 writes cover all 32 banks
// once the swizzle is applied. In a cluster E2M1 rows are 4 chunks of 8
// bytes: the 256 stage rows then take 3 or 2 chunks of 16 codes a thread
// (at 2 chunks of 32 codes, some threads would convert 64 codes a block,
// as many as without the cluster).
ChunkMap AmaxDesign::chunk_map(const Reg& t, int threads, bool clustered) {
  ChunkMap m;
  m.chunks = clustered ? 4 : static_cast<int>(raw_row_bytes() / 16);
  m.chunk_bytes = raw_row_bytes() / static_cast<std::uint32_t>(m.chunks);
  m.codes = kSm90aGemmAmaxTileK / m.chunks;
  m.row_step = threads / m.chunks;
  // FP4 with 16-code blocks has two scales per chunk (words 0-1 and 2-3).
  m.scales = m.codes / std::min(m.codes, p_.vec);
  m.c = t & imm(m.chunks - 1);
  m.row_in = t >> imm(m.chunks == 4 ? 2 : 1);
  m.swz = m.row_in & 7u;  // row % 8, the same for rows + row_step i
  return m;
}

// E2M1 codes in `w` (4 words, or 2) to bf16 pairs in `out`, times the
// first of the `count` scales in `bytes` (the first half of w's codes) and
// the last (the second): one multiply per pair where the scales fold, two
// where not (BlockCodes::scales_fold).
void AmaxDesign::dequant_words(const Regs& w, const Reg& bytes, int count, const Reg& kb, const Reg& code0,
                               const Regs& out) {
  auto convert = [&](bool folded) {
    const Regs f = scale_factors(bytes, count, kb, code0, folded);
    codes_.dequant_fp4(w, Regs{f.front(), f.back()}, out, folded);
  };
  k_.if_else(codes_.scales_fold({bytes}, count), [&] { convert(true); }, [&] { convert(false); });
}

}  // namespace warpforge::ops::sm90a_amax
