// ldmatrix / stmatrix .sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16
// (PTX ISA 9.7.14.5.15 "ldmatrix", 9.7.14.5.16 "stmatrix"). Each 8×8 matrix
// of 16-bit elements is given by eight row addresses: lanes 8i..8i+7 hold the
// rows of matrix i. Register i of lane l holds matrix i's elements
// (row l/4, cols 2·(l%4) and 2·(l%4)+1), the first in the low half; .trans
// gives the transposed matrix's, i.e. (rows 2·(l%4) and 2·(l%4)+1, col l/4).
#include <array>

#include "execute.hpp"
#include "memory_access.hpp"

namespace warpforge::sim {

void exec_ldmatrix(const Inst& in, Warp& w, std::uint32_t /*active: the whole warp*/) {
  const int matrices = in.vec;
  const bool load = in.op == Op::ldmatrix;
  const std::size_t addr_op = load ? 1 : 0;
  const auto& regs = in.ops[load ? 0 : 1];
  // element[i][row][col] of the matrices
  std::array<std::array<std::array<std::uint16_t, 8>, 8>, 4> m{};
  std::array<std::array<std::byte*, 8>, 4> rows{};
  for (int i = 0; i < matrices; ++i)
    for (int r = 0; r < 8; ++r) {
      const int lane = 8 * i + r;
      rows[i][r] = access(w, lane, in.space, address_of(w, in.op0(addr_op), lane), 16, 16, !load);
      note_shared_access(w, lane, rows[i][r], 16, !load);
    }
  auto position = [&](int lane, int half) -> std::pair<int, int> {  // {row, col} in the matrix
    const int a = lane / 4, b = 2 * (lane % 4) + half;
    return in.trans ? std::pair{b, a} : std::pair{a, b};
  };
  if (load) {
    for (int i = 0; i < matrices; ++i)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
          m[i][r][c] = static_cast<std::uint16_t>(load_bytes(rows[i][r] + 2 * c, 2));
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < matrices; ++i) {
        const auto [r0, c0] = position(lane, 0);
        const auto [r1, c1] = position(lane, 1);
        write(w, regs[static_cast<std::size_t>(i)], lane,
              m[i][r0][c0] | (std::uint32_t{m[i][r1][c1]} << 16));
      }
    return;
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < matrices; ++i) {
      const auto v = static_cast<std::uint32_t>(read(w, regs[static_cast<std::size_t>(i)], lane));
      const auto [r0, c0] = position(lane, 0);
      const auto [r1, c1] = position(lane, 1);
      m[i][r0][c0] = static_cast<std::uint16_t>(v);
      m[i][r1][c1] = static_cast<std::uint16_t>(v >> 16);
    }
  for (int i = 0; i < matrices; ++i)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) store_bytes(rows[i][r] + 2 * c, 2, m[i][r][c]);
}

}  // namespace warpforge::sim
