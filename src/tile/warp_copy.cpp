#include "warpforge/tile/warp_copy.hpp"

#include <map>
#include <optional>

#include "warpforge/error.hpp"
#include "warpforge/layout/ldmatrix_atom.hpp"

namespace warpforge::tile::warp {
namespace {

using namespace dsl;

struct Coord {
  std::int64_t r = 0, c = 0;  // in memory order: r is the memory row
  friend bool operator==(const Coord&, const Coord&) = default;
  friend bool operator<(const Coord& a, const Coord& b) { return a.r != b.r ? a.r < b.r : a.c < b.c; }
};
Coord operator+(Coord a, Coord b) { return {a.r + b.r, a.c + b.c}; }
Coord operator-(Coord a, Coord b) { return {a.r - b.r, a.c - b.c}; }

Coord memory(bool row_major, std::pair<std::int64_t, std::int64_t> tile_rc) {
  return row_major ? Coord{tile_rc.first, tile_rc.second} : Coord{tile_rc.second, tile_rc.first};
}

Coord element(const RegisterTile& t, bool row_major, std::int64_t lane, std::int64_t value) {
  auto [lr, lc] = t.steps().lane_offset(lane);
  auto [vr, vc] = t.steps().value_offset(value);
  return memory(row_major, {lr + vr, lc + vc});
}

// ---- global <-> registers ------------------------------------------------------

void global_copy(Kernel& k, const GlobalTile& g, const RegisterTile& t, bool load) {
  const char* what = load ? "warp::copy(global -> registers)" : "warp::copy(registers -> global)";
  const int per_reg = t.values_per_register();
  const int bytes = t.element_bits() / 8;
  if (t.element_bits() % 8) throw TileError(std::string(what) + ": sub-byte elements are not addressable one by one");
  Type access = t.element_bits() >= 32 ? t.dtype() : Type::b32;

  // Each register's elements must sit side by side along the memory row.
  std::vector<Coord> reg_origin;
  for (std::size_t r = 0; r < t.regs().size(); ++r) {
    Coord first = element(t, g.row_major, 0, static_cast<std::int64_t>(r) * per_reg);
    for (int p = 1; p < per_reg; ++p)
      if (element(t, g.row_major, 0, static_cast<std::int64_t>(r) * per_reg + p) != first + Coord{0, p})
        throw TileError(std::string(what) + ": register " + std::to_string(r) + " of " + t.describe() +
                        " holds elements that are not adjacent in a " + (g.row_major ? "row-major" : "column-major") +
                        " tile; store the tile the other way round");
    reg_origin.push_back(first);
  }

  Reg lane = k.sreg(SReg::laneid);
  LaneCoords lc = emit_lane_coords(k, t.steps(), lane);
  Reg lane_r = g.row_major ? lc.row : lc.col, lane_c = g.row_major ? lc.col : lc.row;
  Reg lane_index = lane_r * g.ld + lane_c;
  Reg wide = k.reg(u64);
  k.mul_wide(wide, lane_index, bytes);
  Reg lane_addr = g.base + wide;

  std::optional<std::int64_t> ld_value;
  if (!g.ld.is_reg()) ld_value = g.ld.imm().int_value();
  std::map<std::int64_t, Reg> row_addr;  // memory row offset -> lane address + row·ld·bytes
  for (std::size_t r = 0; r < t.regs().size(); ++r) {
    Coord o = reg_origin[r];
    Addr a = lane_addr;
    if (ld_value) {
      a = at(lane_addr, (o.r * *ld_value + o.c) * bytes);
    } else {
      auto it = row_addr.find(o.r);
      if (it == row_addr.end()) {
        Reg rows = k.reg(u64);
        k.mul_wide(rows, g.ld.reg(), static_cast<std::int64_t>(o.r * bytes));
        it = row_addr.emplace(o.r, lane_addr + rows).first;
      }
      a = at(it->second, o.c * bytes);
    }
    if (load) k.ld(Space::global, access, t.regs()[r], a);
    else k.st(Space::global, access, a, t.regs()[r]);
  }
}

// ---- shared <-> registers: ldmatrix / stmatrix -------------------------------------

struct MatrixPlacement {
  Coord origin;  // memory coordinates of the 8x8 matrix's (0, 0)
  bool trans;
};

// Which 8x8 matrix of shared memory register r of the tile is, as ldmatrix
// delivers it (PTX ISA 9.7.14.5.15), or nullopt.
std::optional<MatrixPlacement> place(const RegisterTile& t, bool row_major, std::size_t r) {
  for (bool trans : {false, true}) {
    static const FragmentSteps plain = separate(layout::ldmatrix(1, false).result.layout);
    static const FragmentSteps transposed = separate(layout::ldmatrix(1, true).result.layout);
    const FragmentSteps& atom = trans ? transposed : plain;
    auto atom_at = [&](std::int64_t l, std::int64_t p) {
      auto [lr, lc] = atom.lane_offset(l);
      auto [vr, vc] = atom.value_offset(p);
      return Coord{lr + vr, lc + vc};
    };
    Coord origin = element(t, row_major, 0, 2 * static_cast<std::int64_t>(r)) - atom_at(0, 0);
    bool fits = true;
    for (std::int64_t l = 0; l < 32 && fits; ++l)
      for (std::int64_t p = 0; p < 2 && fits; ++p)
        fits = element(t, row_major, l, 2 * static_cast<std::int64_t>(r) + p) == origin + atom_at(l, p);
    if (fits) return MatrixPlacement{origin, trans};
  }
  return std::nullopt;
}

struct Batch {
  std::size_t first;  // first register
  int count;          // 1, 2 or 4 matrices
  bool trans;
  Coord origin, step1, step2;  // matrix m's origin = origin + bit0(m)·step1 + bit1(m)·step2
};

std::vector<Batch> plan(const std::vector<MatrixPlacement>& placed) {
  std::vector<Batch> batches;
  std::size_t r = 0;
  while (r < placed.size()) {
    Batch b{r, 1, placed[r].trans, placed[r].origin, {}, {}};
    auto same_trans = [&](std::size_t n) {
      for (std::size_t i = r; i < r + n; ++i)
        if (i >= placed.size() || placed[i].trans != b.trans) return false;
      return true;
    };
    if (same_trans(4)) {
      Coord s1 = placed[r + 1].origin - b.origin, s2 = placed[r + 2].origin - b.origin;
      if (placed[r + 3].origin == b.origin + s1 + s2) {
        b.count = 4;
        b.step1 = s1;
        b.step2 = s2;
      }
    }
    if (b.count == 1 && same_trans(2)) {
      b.count = 2;
      b.step1 = placed[r + 1].origin - b.origin;
    }
    batches.push_back(b);
    r += b.count;
  }
  return batches;
}

std::string shared_copy(Kernel& k, const SharedTile& s, const RegisterTile& t, bool load) {
  const std::string what = load ? "warp::copy(shared -> registers)" : "warp::copy(registers -> shared)";
  if (t.element_bits() != 16)
    throw TileError(what + ": " + t.describe() + " has " + std::to_string(t.element_bits()) +
                    "-bit elements; ldmatrix and stmatrix move 16-bit elements");
  if ((s.ld * 2) % 16 != 0)
    throw TileError(what + ": ld = " + std::to_string(s.ld) + " elements puts rows off the 16-byte alignment that " +
                    (load ? "ldmatrix" : "stmatrix") + " needs; use a multiple of 8");
  std::vector<MatrixPlacement> placed;
  for (std::size_t r = 0; r < t.regs().size(); ++r) {
    auto p = place(t, s.row_major, r);
    if (!p)
      throw TileError(what + ": register " + std::to_string(r) + " of " + t.describe() +
                      " is not an 8x8 matrix as ldmatrix/stmatrix deliver it, plain or transposed");
    if ((p->origin.c * 2) % 16 != 0)
      throw TileError(what + ": register " + std::to_string(r) + "'s matrix starts at column " +
                      std::to_string(p->origin.c) + ", not on a 16-byte boundary");
    placed.push_back(*p);
  }

  Reg lane = k.sreg(SReg::laneid);
  Reg row8 = lane & 7, bit0 = (lane >> 3) & 1, bit1 = (lane >> 4) & 1;
  // Lane l supplies row l % 8 of matrix l / 8 (PTX ISA 9.7.14.5.15).
  std::map<std::tuple<std::int64_t, std::int64_t>, Reg> lane_part;
  std::map<std::string, int> used;
  for (const Batch& b : plan(placed)) {
    std::int64_t d1 = b.count >= 2 ? b.step1.r * s.ld + b.step1.c : 0;
    std::int64_t d2 = b.count == 4 ? b.step2.r * s.ld + b.step2.c : 0;
    auto key = std::make_tuple(d1, d2);
    auto it = lane_part.find(key);
    if (it == lane_part.end()) {
      Reg part = row8 * s.ld;
      if (d1) part += bit0 * d1;
      if (d2) part += bit1 * d2;
      it = lane_part.emplace(key, part).first;
    }
    std::int64_t constant = b.origin.r * s.ld + b.origin.c;
    Addr address = s.base;
    if (s.swizzle == layout::Swizzle{}) {
      Reg byte = it->second << 1;
      address = at(s.base + byte, constant * 2);
    } else {
      // swizzle(x) = x ^ ((x >> S) & (((1 << B) - 1) << M)), on element offsets.
      Reg offset = it->second + constant;
      std::int64_t mask = ((std::int64_t{1} << s.swizzle.bits()) - 1) << s.swizzle.base();
      Reg swizzled = offset ^ ((offset >> s.swizzle.shift()) & mask);
      address = at(s.base + (swizzled << 1));
    }
    Regs regs(t.regs().begin() + static_cast<long>(b.first), t.regs().begin() + static_cast<long>(b.first) + b.count);
    if (load) k.ldmatrix(regs, address, b.trans);
    else k.stmatrix(address, regs, b.trans);
    ++used[std::string(load ? "ldmatrix" : "stmatrix") + ".x" + std::to_string(b.count) + (b.trans ? ".trans" : "")];
  }
  std::string summary;
  for (const auto& [name, n] : used) summary += (summary.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  return summary;
}

}  // namespace

void copy(Kernel& k, const GlobalTile& src, const RegisterTile& dst) { global_copy(k, src, dst, true); }
void copy(Kernel& k, const RegisterTile& src, const GlobalTile& dst) { global_copy(k, dst, src, false); }
std::string copy(Kernel& k, const SharedTile& src, const RegisterTile& dst) { return shared_copy(k, src, dst, true); }
std::string copy(Kernel& k, const RegisterTile& src, const SharedTile& dst) { return shared_copy(k, dst, src, false); }

}  // namespace warpforge::tile::warp
