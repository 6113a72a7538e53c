#include "warpforge/layout/wgmma_smem_layout.hpp"

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {

// Elements per 16 bytes; throws for element sizes wgmma does not read.
int64_t elements_per_16_bytes(int element_bits) {
  if (element_bits != 8 && element_bits != 16 && element_bits != 32) {
    throw LayoutError("wgmma shared-memory layout: " + std::to_string(element_bits) +
                      "-bit elements; wgmma operands in shared memory are 8, 16 or 32 bits");
  }
  return 128 / element_bits;
}

void require_multiple(const char* what, int64_t value, int64_t of, const std::string& context) {
  if (value < of || value % of != 0) {
    throw LayoutError("wgmma_canonical_layout: " + std::string(what) + " = " +
                      std::to_string(value) + " for " + context +
                      "; it must be a positive multiple of " + std::to_string(of));
  }
}

std::string context_text(Major major, SmemSwizzle swizzle, int element_bits) {
  return std::string(major == Major::k ? "K" : "MN") + "-major, " + to_string(swizzle) +
         " swizzle, " + std::to_string(element_bits) + "-bit elements";
}

}  // namespace

SwizzledLayout wgmma_canonical_layout(Major major, SmemSwizzle swizzle, int element_bits,
                                      int64_t mn, int64_t k, int64_t lbo_bytes, int64_t sbo_bytes) {
  const int64_t t = elements_per_16_bytes(element_bits);
  const int64_t w = swizzle_bytes(swizzle) / 16;
  const std::string context = context_text(major, swizzle, element_bits);
  require_multiple("LBO bytes", lbo_bytes, 16, context);
  require_multiple("SBO bytes", sbo_bytes, 16, context);
  const int64_t lbo = lbo_bytes / 16 * t, sbo = sbo_bytes / 16 * t;  // in elements
  const Swizzle sw = smem_swizzle(swizzle, element_bits / 8);
  Layout mn_mode(1, 0), k_mode(1, 0);
  if (major == Major::k) {
    require_multiple("mn", mn, 8, context);
    require_multiple("k", k, t, context);
    if (swizzle != SmemSwizzle::none && k > w * t) {
      throw LayoutError("wgmma_canonical_layout: k = " + std::to_string(k) + " for " + context +
                        "; a K-major swizzled operand spans at most one " + std::to_string(w * 16) +
                        "-byte row, " + std::to_string(w * t) + " elements");
    }
    mn_mode = Layout({8, mn / 8}, {swizzle == SmemSwizzle::none ? t : w * t, sbo});
    k_mode = Layout({t, k / t}, {1, swizzle == SmemSwizzle::none ? lbo : t});
  } else if (swizzle == SmemSwizzle::none) {
    require_multiple("mn", mn, t, context);
    require_multiple("k", k, 8, context);
    mn_mode = Layout({t, mn / t}, {1, sbo});
    k_mode = Layout({8, k / 8}, {t, lbo});
  } else {
    require_multiple("mn", mn, w * t, context);
    require_multiple("k", k, 8, context);
    mn_mode = Layout({t, w, mn / (w * t)}, {1, t, lbo});
    k_mode = Layout({8, k / 8}, {w * t, sbo});
  }
  return SwizzledLayout(sw, make_layout({mn_mode, k_mode}));
}

SwizzledLayout wgmma_smem_atom(Major major, SmemSwizzle swizzle, int element_bits) {
  const int64_t row = swizzle_bytes(swizzle) / 16 * elements_per_16_bytes(element_bits);
  Layout atom = major == Major::k ? Layout({8, row}, {row, 1}) : Layout({row, 8}, {1, row});
  return SwizzledLayout(smem_swizzle(swizzle, element_bits / 8), atom);
}

}  // namespace warpforge::layout
