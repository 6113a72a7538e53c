#include "warpforge/tile/register_tile.hpp"

#include "warpforge/error.hpp"

namespace warpforge::tile {

FragmentSteps tile_steps(const layout::Fragment& atom, std::int64_t rows, std::int64_t cols) {
  FragmentSteps a = separate(atom.layout);
  if (rows <= 0 || cols <= 0 || rows % a.rows != 0 || cols % a.cols != 0)
    throw TileError("tile " + std::to_string(rows) + "x" + std::to_string(cols) + " is not a grid of " +
                    atom.layout.name() + " atoms (" + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                    "); rows and cols must be positive multiples of the atom's");
  FragmentSteps t = a;
  t.rows = rows;
  t.cols = cols;
  if (rows / a.rows > 1) t.value.push_back({rows / a.rows, a.rows, 0});
  if (cols / a.cols > 1) t.value.push_back({cols / a.cols, 0, a.cols});
  return t;
}

RegisterTile RegisterTile::allocate(dsl::KernelCore& k, const layout::Fragment& atom, std::int64_t rows,
                                    std::int64_t cols, ptx::Type dtype, const std::string& name) {
  if (ptx::bits(dtype) != atom.element_bits)
    throw TileError("fragment " + atom.layout.name() + " holds " + std::to_string(atom.element_bits) +
                    "-bit elements; dtype " + std::string(ptx::name(dtype)) + " is " +
                    std::to_string(ptx::bits(dtype)) + "-bit");
  FragmentSteps steps = tile_steps(atom, rows, cols);
  int per_reg = ptx::bits(dtype) >= 32 ? 1 : 32 / ptx::bits(dtype);
  std::int64_t count = steps.values() / per_reg;
  ptx::Type reg_type = ptx::bits(dtype) >= 32 ? dtype : ptx::Type::b32;
  dsl::Regs regs = k.regs(reg_type, static_cast<int>(count), name);
  std::string label = atom.layout.name() + " x " + std::to_string(rows / atom.layout.extent(layout::Axis::row)) +
                      "x" + std::to_string(cols / atom.layout.extent(layout::Axis::col));
  std::string description = (name.empty() ? std::string("tile") : name) + "[" + std::to_string(rows) + "x" +
                            std::to_string(cols) + "] " + std::string(ptx::name(dtype)) + " warp (" + label + ")";
  layout::NamedLayout tile_layout = assemble(atom.layout.name() + " tile", steps);
  return RegisterTile(std::move(tile_layout), std::move(steps), dtype, std::move(regs), std::move(description));
}

dsl::Regs RegisterTile::atom_regs(std::int64_t atom_rows, std::int64_t values, std::int64_t i, std::int64_t j) const {
  std::int64_t atoms_m = rows() / atom_rows;
  std::int64_t per_atom = values / values_per_register();
  std::int64_t first = (i + atoms_m * j) * per_atom;
  return dsl::Regs(regs_.begin() + first, regs_.begin() + first + per_atom);
}

std::string RegisterTile::describe() const { return description_; }

}  // namespace warpforge::tile
