#include "warpforge/ptx/variable.hpp"

#include "warpforge/error.hpp"

namespace warpforge::ptx {

std::string_view name(Space s) {
  switch (s) {
    case Space::reg: return "reg";
    case Space::sreg: return "sreg";
    case Space::const_: return "const";
    case Space::global: return "global";
    case Space::local: return "local";
    case Space::param: return "param";
    case Space::shared: return "shared";
    case Space::tex: return "tex";
    case Space::generic:
      return "generic";
  }
  return "";
}

std::string_view name(Linkage l) {
  switch (l) {
    case Linkage::none: return "";
    case Linkage::visible: return "visible";
    case Linkage::extern_: return "extern";
    case Linkage::weak: return "weak";
    case Linkage::common: return "common";
  }
  return "";
}

std::int64_t Variable::size_bytes() const {
  std::int64_t n = (bits(type) + 7) / 8 * (vector_width ? vector_width : 1);
  for (const auto& d : dims) {
    if (!d) throw PtxError("variable '" + name + "' is an unsized array; its size is set at launch");
    n *= *d;
  }
  return n;
}

}  // namespace warpforge::ptx
