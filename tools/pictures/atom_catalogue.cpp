#include "atom_catalogue.hpp"

#include <functional>

#include "warpforge/error.hpp"
#include "warpforge/layout/ldmatrix_atom.hpp"
#include "warpforge/layout/mfma_atom.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/layout/wgmma_a_fragment.hpp"
#include "warpforge/layout/wgmma_accumulator.hpp"

namespace warpforge::pictures {

namespace {

struct Atom {
  AtomEntry entry;
  std::function<layout::Fragment()> make;
};

const std::vector<Atom>& atoms() {
  using namespace layout;
  static const std::vector<Atom> all = [] {
    std::vector<Atom> out;
    auto mma = [&](const std::string& shape, const std::string& types, MmaAtom (*atom)()) {
      const std::string prefix = "mma." + shape;
      out.push_back({{prefix + ".A", "mma.sync " + shape + " A (" + types + "), row-major M x K"},
                     [=] { return atom().a; }});
      out.push_back({{prefix + ".B", "mma.sync " + shape + " B (" + types + "), K x N"},
                     [=] { return atom().b; }});
      out.push_back(
          {{prefix + ".C", "mma.sync " + shape + " C/D (f32), M x N"}, [=] { return atom().c; }});
    };
    mma("m16n8k8", "f16/bf16", mma_m16n8k8_f16);
    mma("m16n8k16", "f16/bf16", mma_m16n8k16_f16);
    mma("m16n8k32", "e4m3/e5m2", mma_m16n8k32_f8);
    for (bool trans : {false, true}) {
      for (int x : {1, 2, 4}) {
        const std::string name = "ldmatrix.x" + std::to_string(x) + (trans ? ".trans" : "");
        out.push_back({{name, "ldmatrix " + std::to_string(x) + " x 8x8 b16" +
                                  (trans ? ", transposed" : "") + ": registers over the " +
                                  std::to_string(8 * x) + " x 8 stacked rows in memory"},
                       [=] { return ldmatrix(x, trans).result; }});
      }
    }
    out.push_back({{"wgmma.m64k16.A", "wgmma A from registers, 16-bit (bf16/f16), 64 x 16"},
                   [] { return wgmma_a_fragment(16); }});
    out.push_back({{"wgmma.m64k32.A", "wgmma A from registers, 8-bit (e4m3/e5m2), 64 x 32"},
                   [] { return wgmma_a_fragment(8); }});
    for (int n : {8, 16, 64, 256}) {
      out.push_back({{"wgmma.m64n" + std::to_string(n) + "k16.D",
                      "wgmma f32 accumulator, 64 x " + std::to_string(n) +
                          " (any N = 8, 16, ..., 256: wgmma.m64n<N>k16.D)"},
                     [=] { return wgmma_accumulator(n); }});
    }
    out.push_back({{"mfma.32x32x8.A", "AMD v_mfma_f32_32x32x8 bf16 A, 32 x 8 (wave64)"},
                   [] { return mfma_f32_32x32x8_bf16().a; }});
    out.push_back({{"mfma.32x32x8.B", "AMD v_mfma_f32_32x32x8 bf16 B, 8 x 32 (wave64)"},
                   [] { return mfma_f32_32x32x8_bf16().b; }});
    out.push_back({{"mfma.32x32x8.C", "AMD v_mfma_f32_32x32x8 C/D (f32), 32 x 32 (wave64)"},
                   [] { return mfma_f32_32x32x8_bf16().c; }});
    return out;
  }();
  return all;
}

}  // namespace

std::vector<AtomEntry> atom_catalogue() {
  std::vector<AtomEntry> out;
  for (const Atom& a : atoms()) out.push_back(a.entry);
  return out;
}

layout::Fragment find_atom(const std::string& name) {
  for (const Atom& a : atoms()) {
    if (a.entry.name == name) return a.make();
  }
  // wgmma.m64n<N>k16.D for the N not listed: wgmma_accumulator refuses a bad N.
  const std::string head = "wgmma.m64n", tail = "k16.D";
  if (name.size() > head.size() + tail.size() && name.starts_with(head) && name.ends_with(tail)) {
    const std::string n = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (n.find_first_not_of("0123456789") == std::string::npos && n.size() <= 4) {
      return layout::wgmma_accumulator(std::stoll(n));
    }
  }
  std::string names;
  for (const Atom& a : atoms()) names += " " + a.entry.name;
  throw LayoutError("no atom named '" + name + "'; the atoms are:" + names +
                    " (and wgmma.m64n<N>k16.D for N = 8, 16, ..., 256)");
}

}  // namespace warpforge::pictures
