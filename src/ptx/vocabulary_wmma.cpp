#include "warpforge/ptx/vocabulary_wmma.hpp"

namespace warpforge::ptx {

std::optional<WmmaDims> wmma_dims(MmaShape shape) {
  switch (shape) {
    case MmaShape::m16n16k16:
      return WmmaDims{16, 16, 16};
    case MmaShape::m32n8k16:
      return WmmaDims{32, 8, 16};
    case MmaShape::m8n32k16:
      return WmmaDims{8, 32, 16};
    case MmaShape::m16n16k8:
      return WmmaDims{16, 16, 8};
    default:
      return std::nullopt;
  }
}

std::string wmma_form_error(MmaShape shape, Type ab, Type acc) {
  const std::string accepted =
      "wmma takes f16 inputs (f16 or f32 accumulators) or bf16 inputs (f32 accumulators) in "
      "m16n16k16, m32n8k16 and m8n32k16, and tf32 inputs (f32 accumulators) in m16n16k8";
  if (!wmma_dims(shape)) return "the shape is not a floating-point wmma shape; " + accepted;
  const bool tf32_shape = shape == MmaShape::m16n16k8;
  const bool ok = tf32_shape ? ab == Type::tf32 && acc == Type::f32
                             : (ab == Type::f16 && (acc == Type::f16 || acc == Type::f32)) ||
                                   (ab == Type::bf16 && acc == Type::f32);
  if (ok) return "";
  return "inputs ." + std::string(name(ab)) + " with ." + std::string(name(acc)) +
         " accumulators are not a form of this shape; " + accepted;
}

std::string wmma_element_error(MmaShape shape, WmmaMatrix x, Type t) {
  if (!wmma_dims(shape)) return "the shape is not a floating-point wmma shape";
  const bool tf32_shape = shape == MmaShape::m16n16k8;
  const bool input = x == WmmaMatrix::a || x == WmmaMatrix::b;
  const bool ok = input ? (tf32_shape ? t == Type::tf32 : t == Type::f16 || t == Type::bf16)
                        : t == Type::f32 || (t == Type::f16 && !tf32_shape);
  if (ok) return "";
  return "." + std::string(name(t)) + " elements in matrix " +
         std::string(1, "abcd"[static_cast<int>(x)]) +
         " of this shape; A and B hold f16 or bf16 (tf32 in m16n16k8), C and D f32 or (not in "
         "m16n16k8) f16";
}

int wmma_fragment_registers(MmaShape shape, WmmaMatrix x, Type t) {
  const std::optional<WmmaDims> dims = wmma_dims(shape);
  if (!dims) return 0;
  if (t == Type::f16 && (x == WmmaMatrix::a || x == WmmaMatrix::b)) return 8;
  return dims->rows(x) * dims->cols(x) * bits(t) / (32 * 32);
}

}  // namespace warpforge::ptx
