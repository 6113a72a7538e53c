// RegisterTile: a tile of a matrix held in registers across a warp (warp
// scope: its layout's domain is (lane, value)), carrying that layout (which
// lane holds element (row, col), in which register slot) and its element type,
// so tile primitives can check their operands.
//
// A tile is a grid of atoms (one matrix instruction's operand fragment), atoms
// ordered column-major: atom (i, j) covers rows i·atom_rows ..., columns
// j·atom_cols ..., and holds registers [(i + atoms_m·j)·R, ... + R) where R is
// the atom's register count. Its layout maps (lane, value) onto the whole
// tile, the atom's value mode extended by the atom grid.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/layout/fragment.hpp"
#include "warpforge/tile/fragment_steps.hpp"

namespace warpforge::tile {

class RegisterTile {
 public:
  // Declares the tile's registers in `k`: b32 registers holding 32/bits
  // elements each for 16-bit types, f32 registers for f32. Throws TileError
  // unless rows and cols are positive multiples of the atom's tile.
  static RegisterTile allocate(dsl::KernelCore& k, const layout::Fragment& atom, std::int64_t rows,
                               std::int64_t cols, ptx::Type dtype, const std::string& name = {});

  std::int64_t rows() const { return steps_.rows; }
  std::int64_t cols() const { return steps_.cols; }
  ptx::Type dtype() const { return dtype_; }
  const layout::NamedLayout& layout() const { return layout_; }
  const FragmentSteps& steps() const { return steps_; }
  int element_bits() const { return ptx::bits(dtype_); }
  int values_per_register() const { return element_bits() >= 32 ? 1 : 32 / element_bits(); }
  const dsl::Regs& regs() const { return regs_; }

  // The registers of atom (i, j) for an atom of atom_rows × atom_cols holding
  // `values` values per lane, tiling this tile column-major.
  dsl::Regs atom_regs(std::int64_t atom_rows, std::int64_t values, std::int64_t i, std::int64_t j) const;

  // `A[64x32] bf16 warp (mma.m16n8k16.f16.A x 4x2)`
  std::string describe() const;

 private:
  RegisterTile(layout::NamedLayout l, FragmentSteps s, ptx::Type t, dsl::Regs r, std::string d)
      : layout_(std::move(l)), steps_(std::move(s)), dtype_(t), regs_(std::move(r)), description_(std::move(d)) {}

  layout::NamedLayout layout_;
  FragmentSteps steps_;
  ptx::Type dtype_;
  dsl::Regs regs_;
  std::string description_;
};

// The layout of a rows × cols tile made of `atom` fragments, column-major.
FragmentSteps tile_steps(const layout::Fragment& atom, std::int64_t rows, std::int64_t cols);

}  // namespace warpforge::tile
