#include "warpforge/dsl/isa/wmma.hpp"

#include "../type_names.hpp"
#include "warpforge/ptx/variable.hpp"

namespace warpforge::dsl {

using detail::dot;
using detail::type_name;

namespace {

ptx::MmaShape ptx_shape(WmmaShape s) {
  switch (s) {
    case WmmaShape::m16n16k16:
      return ptx::MmaShape::m16n16k16;
    case WmmaShape::m32n8k16:
      return ptx::MmaShape::m32n8k16;
    case WmmaShape::m8n32k16:
      return ptx::MmaShape::m8n32k16;
    case WmmaShape::m16n16k8:
      return ptx::MmaShape::m16n16k8;
  }
  return ptx::MmaShape::m16n16k16;
}

std::string shape_name(WmmaShape s) {
  switch (s) {
    case WmmaShape::m16n16k16:
      return "m16n16k16";
    case WmmaShape::m32n8k16:
      return "m32n8k16";
    case WmmaShape::m8n32k16:
      return "m8n32k16";
    case WmmaShape::m16n16k8:
      return "m16n16k8";
  }
  return "";
}

std::string layout_name(WmmaLayout l) {
  return l == WmmaLayout::row ? "row" : "col";
}

char matrix_letter(WmmaMatrix m) {
  return "abcd"[static_cast<int>(m)];
}

// PTX ISA 9.7.14.4, target notes: f16 forms need sm_70, bf16 and tf32 sm_80.
Availability availability(Type input) {
  return Availability::since(input == Type::f16 ? 70 : 80);
}

// A fragment's registers: the count its shape and type take, .f32 for f32
// accumulators and .b32 (packed elements) otherwise.
void check_fragment(const KernelCore& k, const std::string& opcode, ptx::MmaShape shape,
                    WmmaMatrix matrix, Type type, const Regs& frag, const char* role) {
  const int expected = ptx::wmma_fragment_registers(shape, matrix, type);
  if (static_cast<int>(frag.size()) != expected)
    k.fail(opcode, std::string(role) + " has " + std::to_string(frag.size()) +
                       " registers; this fragment takes " + std::to_string(expected) +
                       " per thread");
  const bool f32 = type == Type::f32;
  for (const Reg& r : frag) {
    // ptxas refuses .f32 registers for packed fragments, as for mma.
    if (!f32 && (r.type() == Type::f32 || r.type() == Type::f64))
      k.fail(opcode, std::string(role) + " " + r.name() + " has type " + type_name(r.type()) +
                         "; packed fragments are b32 registers");
    k.expect_type(opcode, r, f32 ? Type::f32 : Type::b32, role);
  }
}

std::string space_suffix(const KernelCore& k, const std::string& opcode, Space space) {
  if (space == Space::generic) return "";
  if (space == Space::global || space == Space::shared) return "." + std::string(ptx::name(space));
  k.fail(opcode, "state space ." + std::string(ptx::name(space)) +
                     "; wmma loads and stores take global, shared or generic addresses");
}

}  // namespace

void WmmaOps::wmma_load(WmmaMatrix matrix, WmmaShape shape, WmmaLayout layout, Space space,
                        Type type, const Regs& frag, const Addr& a, const Src& stride) {
  std::string opcode = std::string("wmma.load.") + matrix_letter(matrix) + ".sync.aligned." +
                       layout_name(layout) + "." + shape_name(shape);
  if (matrix == WmmaMatrix::d) fail(opcode, "wmma loads A, B or C; D is stored (wmma_store)");
  opcode += space_suffix(*this, opcode, space) + dot(type);
  const ptx::MmaShape s = ptx_shape(shape);
  if (const std::string why = ptx::wmma_element_error(s, matrix, type); !why.empty())
    fail(opcode, why);
  require(opcode, availability(matrix == WmmaMatrix::c ? Type::f16 : type));
  check_fragment(*this, opcode, s, matrix, type, frag, "fragment");
  emit(opcode, {operand_of(frag), operand_of(a), operand_of(stride)});
}

void WmmaOps::wmma_store(WmmaShape shape, WmmaLayout layout, Space space, Type type, const Addr& a,
                         const Regs& frag, const Src& stride) {
  std::string opcode = "wmma.store.d.sync.aligned." + layout_name(layout) + "." + shape_name(shape);
  opcode += space_suffix(*this, opcode, space) + dot(type);
  const ptx::MmaShape s = ptx_shape(shape);
  if (const std::string why = ptx::wmma_element_error(s, WmmaMatrix::d, type); !why.empty())
    fail(opcode, why);
  require(opcode, availability(Type::f16));
  check_fragment(*this, opcode, s, WmmaMatrix::d, type, frag, "fragment");
  emit(opcode, {operand_of(a), operand_of(frag), operand_of(stride)});
}

void WmmaOps::wmma_mma(WmmaShape shape, WmmaLayout a_layout, WmmaLayout b_layout, Type input,
                       Type d_type, Type c_type, const Regs& d, const Regs& a, const Regs& b,
                       const Regs& c) {
  // f16 inputs are implied (.dtype.ctype); bf16 and tf32 are spelled out.
  const std::string types = input == Type::f16
                                ? dot(d_type) + dot(c_type)
                                : dot(d_type) + dot(input) + dot(input) + dot(c_type);
  const std::string opcode = "wmma.mma.sync.aligned." + layout_name(a_layout) + "." +
                             layout_name(b_layout) + "." + shape_name(shape) + types;
  const ptx::MmaShape s = ptx_shape(shape);
  for (Type acc : {d_type, c_type})
    if (const std::string why = ptx::wmma_form_error(s, input, acc); !why.empty())
      fail(opcode, why);
  require(opcode, availability(input));
  check_fragment(*this, opcode, s, WmmaMatrix::d, d_type, d, "D");
  check_fragment(*this, opcode, s, WmmaMatrix::a, input, a, "A");
  check_fragment(*this, opcode, s, WmmaMatrix::b, input, b, "B");
  check_fragment(*this, opcode, s, WmmaMatrix::c, c_type, c, "C");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

}  // namespace warpforge::dsl
