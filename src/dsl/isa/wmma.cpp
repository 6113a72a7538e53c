#include "warpforge/dsl/isa/wmma.hpp"

#include "../type_names.hpp"
#include "warpforge/ptx/variable.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;
using detail::type_name;

namespace {

ptx::MmaShape ptx_shape(WmmaShape s) {
  static constexpr ptx::MmaShape kShapes[] = {ptx::MmaShape::m16n16k16, ptx::MmaShape::m32n8k16,
                                              ptx::MmaShape::m8n32k16, ptx::MmaShape::m16n16k8};
  return kShapes[static_cast<int>(s)];
}

M shape_mod(WmmaShape s) {
  static constexpr M kShapes[] = {M::m16n16k16, M::m32n8k16, M::m8n32k16, M::m16n16k8};
  return kShapes[static_cast<int>(s)];
}

M layout_mod(WmmaLayout l) {
  return l == WmmaLayout::row ? M::row : M::col;
}

M matrix_mod(WmmaMatrix m) {
  static constexpr M kMatrices[] = {M::a, M::b, M::c, M::d};
  return kMatrices[static_cast<int>(m)];
}

// PTX ISA 9.7.14.4, target notes: f16 forms need sm_70, bf16 and tf32 sm_80.
Availability availability(Type input) {
  return Availability::since(input == Type::f16 ? 70 : 80);
}

// A fragment's registers: the count its shape and type take, .f32 for f32
// accumulators and .b32 (packed elements) otherwise.
void check_fragment(const KernelCore& k, const ptx::Instruction& opcode, ptx::MmaShape shape,
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

// [.space].type after a load's or store's shape.
void add_space_and_type(const KernelCore& k, ptx::Instruction& opcode, Space space, Type type) {
  if (space == Space::global || space == Space::shared)
    opcode.modifiers.push_back(space == Space::global ? M::global : M::shared);
  else if (space != Space::generic)
    k.fail(opcode, "state space ." + std::string(ptx::name(space)) +
                       "; wmma loads and stores take global, shared or generic addresses");
  opcode.modifiers.push_back(mod(type));
}

}  // namespace

void WmmaOps::wmma_load(WmmaMatrix matrix, WmmaShape shape, WmmaLayout layout, Space space,
                        Type type, const Regs& frag, const Addr& a, const Src& stride) {
  ptx::Instruction opcode{
      O::wmma, {M::load, matrix_mod(matrix), M::sync, M::aligned, layout_mod(layout), shape_mod(shape)}};
  if (matrix == WmmaMatrix::d) fail(opcode, "wmma loads A, B or C; D is stored (wmma_store)");
  add_space_and_type(*this, opcode, space, type);
  const ptx::MmaShape s = ptx_shape(shape);
  if (const std::string why = ptx::wmma_element_error(s, matrix, type); !why.empty())
    fail(opcode, why);
  require(opcode, availability(matrix == WmmaMatrix::c ? Type::f16 : type));
  check_fragment(*this, opcode, s, matrix, type, frag, "fragment");
  emit(opcode, {operand_of(frag), operand_of(a), operand_of(stride)});
}

void WmmaOps::wmma_store(WmmaShape shape, WmmaLayout layout, Space space, Type type, const Addr& a,
                         const Regs& frag, const Src& stride) {
  ptx::Instruction opcode{
      O::wmma, {M::store, M::d, M::sync, M::aligned, layout_mod(layout), shape_mod(shape)}};
  add_space_and_type(*this, opcode, space, type);
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
  ptx::Instruction opcode{O::wmma, {M::mma, M::sync, M::aligned, layout_mod(a_layout),
                                    layout_mod(b_layout), shape_mod(shape), mod(d_type)}};
  if (input != Type::f16) opcode.modifiers.insert(opcode.modifiers.end(), {mod(input), mod(input)});
  opcode.modifiers.push_back(mod(c_type));
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
