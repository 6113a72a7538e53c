#include "warpforge/tile/warp_gemm.hpp"

#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/tile/dispatch.hpp"

namespace warpforge::tile::warp {
namespace {

using dsl::Type;

std::string shape(const RegisterTile& t) { return std::to_string(t.rows()) + "x" + std::to_string(t.cols()); }

struct Operands {
  const RegisterTile& d;
  const RegisterTile& a;
  const RegisterTile& b;
  const std::optional<RegisterTile>& c;
  float alpha, beta;
};

// Why the atom cannot implement the operands; empty when it can.
std::vector<std::string> refusals(const layout::MmaAtom& atom, const Operands& o) {
  std::vector<std::string> why;
  const std::int64_t m = o.d.rows(), n = o.d.cols(), kk = o.a.cols();
  bool shapes_agree = o.a.rows() == m && o.b.rows() == kk && o.b.cols() == n && (!o.c || (o.c->rows() == m && o.c->cols() == n));
  if (!shapes_agree)
    why.push_back("shapes do not chain: D " + shape(o.d) + ", A " + shape(o.a) + ", B " + shape(o.b) +
                  (o.c ? ", C " + shape(*o.c) : std::string()) + " (need A MxK, B KxN, C and D MxN)");
  if (m % atom.m) why.push_back("M = " + std::to_string(m) + " is not a multiple of " + std::to_string(atom.m));
  if (n % atom.n) why.push_back("N = " + std::to_string(n) + " is not a multiple of " + std::to_string(atom.n));
  if (kk % atom.k) why.push_back("K = " + std::to_string(kk) + " is not a multiple of " + std::to_string(atom.k));

  Type in = o.a.dtype();
  if ((in != Type::f16 && in != Type::bf16) || o.b.dtype() != in)
    why.push_back("A and B are " + std::string(ptx::name(o.a.dtype())) + " and " + std::string(ptx::name(o.b.dtype())) +
                  "; needs both f16 or both bf16");
  if (o.d.dtype() != Type::f32) why.push_back("D is " + std::string(ptx::name(o.d.dtype())) + "; needs f32");
  if (o.c && o.c->dtype() != Type::f32) why.push_back("C is " + std::string(ptx::name(o.c->dtype())) + "; needs f32");
  if (o.alpha != 1.0f) why.push_back("alpha = " + std::to_string(o.alpha) + "; mma.sync computes alpha = 1 only");
  if (o.beta != 0.0f && o.beta != 1.0f) why.push_back("beta = " + std::to_string(o.beta) + "; needs 0 or 1");
  if (o.beta == 1.0f && !o.c) why.push_back("beta = 1 needs C");

  // The registers must be laid out as this atom, tiled, lays them out.
  auto layout_matches = [&](const char* role, const RegisterTile& t, const layout::Fragment& f) {
    if (!shapes_agree || t.rows() % f.layout.extent(layout::Axis::row) || t.cols() % f.layout.extent(layout::Axis::col))
      return;
    if (!same_mapping(t.layout(), assemble("expected", tile_steps(f, t.rows(), t.cols()))))
      why.push_back(std::string(role) + " registers are not laid out as " + f.layout.name() + " tiles (" + t.describe() + ")");
  };
  if (why.empty()) {
    layout_matches("A", o.a, atom.a);
    layout_matches("B", o.b, atom.b);
    layout_matches("D", o.d, atom.c);
    if (o.c) layout_matches("C", *o.c, atom.c);
  }
  return why;
}

void emit(dsl::Kernel& k, const layout::MmaAtom& atom, dsl::MmaShape shape, const Operands& o) {
  const std::int64_t am = o.d.rows() / atom.m, an = o.d.cols() / atom.n, ak = o.a.cols() / atom.k;
  const std::int64_t a_values = atom.a.layout.extent(layout::Axis::value);
  const std::int64_t b_values = atom.b.layout.extent(layout::Axis::value);
  const std::int64_t c_values = atom.c.layout.extent(layout::Axis::value);
  bool accumulate_c = o.beta == 1.0f;
  if (!accumulate_c)
    for (const auto& r : o.d.regs()) k.mov(r, dsl::imm_f32(0.0f));
  for (std::int64_t j = 0; j < an; ++j)
    for (std::int64_t i = 0; i < am; ++i) {
      dsl::Regs d = o.d.atom_regs(atom.m, c_values, i, j);
      for (std::int64_t kk = 0; kk < ak; ++kk) {
        dsl::Regs c = (kk == 0 && accumulate_c) ? o.c->atom_regs(atom.m, c_values, i, j) : d;
        k.mma_sync(shape, o.a.dtype(), o.b.dtype(), Type::f32, d, o.a.atom_regs(atom.m, a_values, i, kk),
                   o.b.atom_regs(atom.k, b_values, kk, j), c);
      }
    }
}

}  // namespace

std::string gemm(dsl::Kernel& k, const RegisterTile& d, const RegisterTile& a, const RegisterTile& b,
                 const std::optional<RegisterTile>& c, float alpha, float beta) {
  Operands o{d, a, b, c, alpha, beta};
  static const layout::MmaAtom k16 = layout::mma_m16n8k16_f16(), k8 = layout::mma_m16n8k8_f16();
  return dispatch("warp::gemm", {
                                    {"mma.sync.m16n8k16", [&] { return refusals(k16, o); },
                                     [&] { emit(k, k16, dsl::MmaShape::m16n8k16, o); }},
                                    {"mma.sync.m16n8k8", [&] { return refusals(k8, o); },
                                     [&] { emit(k, k8, dsl::MmaShape::m16n8k8, o); }},
                                });
}

}  // namespace warpforge::tile::warp
