#include "warpforge/dsl/isa/atomic.hpp"

#include <algorithm>

#include "../type_names.hpp"

namespace warpforge::dsl {

namespace {
// PTX ISA 9.7.13.7: the types each operation takes.
std::vector<Type> types_for(AtomOp op) {
  switch (op) {
    case AtomOp::add: return {Type::u32, Type::s32, Type::u64, Type::f32, Type::f64, Type::f16x2, Type::bf16x2};
    case AtomOp::min: case AtomOp::max: return {Type::u32, Type::s32, Type::u64, Type::s64};
    case AtomOp::inc: case AtomOp::dec: return {Type::u32};
    case AtomOp::exch: case AtomOp::cas: case AtomOp::and_: case AtomOp::or_: case AtomOp::xor_:
      return {Type::b32, Type::b64};
  }
  return {};
}
using detail::M;
constexpr M kScopes[] = {M::cta, M::cluster, M::gpu, M::sys};
}  // namespace

ptx::Instruction AtomicOps::opcode_for(ptx::Opcode base, Space space, AtomOp op, Type type,
                                       AtomOpts o) {
  ptx::Instruction opcode{base};
  if (o.relaxed) opcode.modifiers.push_back(M::relaxed);
  if (o.scope) {
    opcode.modifiers.push_back(kScopes[static_cast<int>(*o.scope)]);
    if (*o.scope == Scope::cluster) require(opcode, Availability::since(90));
  }
  if (space != Space::global && space != Space::shared)
    fail(opcode, "atomics act on global or shared memory, not ." + std::string(ptx::name(space)));
  opcode.modifiers.push_back(space == Space::global ? M::global : M::shared);
  opcode.modifiers.push_back(ptx::mod(op));
  // required spelling, PTX ISA 9.7.13.7
  if (type == Type::f16x2 || type == Type::bf16x2) opcode.modifiers.push_back(M::noftz);
  opcode.modifiers.push_back(ptx::mod(type));
  auto allowed = types_for(op);
  if (std::find(allowed.begin(), allowed.end(), type) == allowed.end()) {
    std::string list;
    for (Type t : allowed) list += (list.empty() ? "" : ", ") + detail::type_name(t);
    fail(opcode, "type " + detail::type_name(type) + " is not allowed for ." +
                     std::string(ptx::name(op)) + "; allowed: " + list);
  }
  if (type == Type::bf16x2) require(opcode, Availability::since(90));
  return opcode;
}

void AtomicOps::atom(Space space, AtomOp op, Type type, const Reg& d, const Addr& a, const Src& b,
                     std::optional<Src> c, AtomOpts o) {
  const ptx::Instruction opcode = opcode_for(ptx::Opcode::atom, space, op, type, o);
  if ((op == AtomOp::cas) != c.has_value())
    fail(opcode, op == AtomOp::cas ? "cas needs the swap value c" : "only cas takes a third source");
  expect_type(opcode, d, type, "destination");
  expect_type(opcode, b, type, "source b");
  std::vector<ptx::Operand> ops{operand_of(d), operand_of(a), operand_of(b)};
  if (c) {
    expect_type(opcode, *c, type, "source c");
    ops.push_back(operand_of(*c));
  }
  emit(opcode, std::move(ops));
}

void AtomicOps::red(Space space, AtomOp op, Type type, const Addr& a, const Src& b, AtomOpts o) {
  if (op == AtomOp::exch || op == AtomOp::cas)
    fail("red", "red has no ." + std::string(ptx::name(op)) + "; use atom");
  const ptx::Instruction opcode = opcode_for(ptx::Opcode::red, space, op, type, o);
  expect_type(opcode, b, type, "source b");
  emit(opcode, {operand_of(a), operand_of(b)});
}

void AtomicOps::red(Space space, AtomOp op, Type type, const Addr& a, const Regs& b, AtomOpts o) {
  ptx::Instruction opcode = opcode_for(ptx::Opcode::red, space, op, type, o);
  if (b.size() != 2 && b.size() != 4)
    fail(opcode, "vector of " + std::to_string(b.size()) + " registers; .v2 or .v4 only");
  if (space != Space::global)
    fail(opcode, "a vector red acts on global memory only, not ." + std::string(ptx::name(space)));
  if (op != AtomOp::add || type != Type::f32)
    fail(opcode, "a vector red adds f32 (red.global.add.v4.f32); not ." + std::string(ptx::name(op)) + "." +
                     detail::type_name(type));
  require(opcode, Availability::since(90));
  opcode.modifiers.insert(opcode.modifiers.end() - 1, b.size() == 2 ? M::v2 : M::v4);  // before the type
  for (const Reg& r : b) expect_type(opcode, r, type, "source b");
  emit(opcode, {operand_of(a), operand_of(b)});
}

}  // namespace warpforge::dsl
