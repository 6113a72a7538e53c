#include "warpforge/dsl/isa/mma.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::type_name;

ptx::Mod mod(MmaShape s) {
  static constexpr M kMods[] = {M::m16n8k8, M::m16n8k16, M::m16n8k32};
  return kMods[static_cast<int>(s)];
}

std::string_view name(MmaShape s) {
  return ptx::name(mod(s));
}

namespace {

struct Fragments {
  int a, b, c;  // registers per thread
  Availability availability;
};

bool is_half(Type t) { return t == Type::f16 || t == Type::bf16; }
bool is_fp8(Type t) { return t == Type::e4m3 || t == Type::e5m2; }

}  // namespace

void MmaOps::mma_sync(MmaShape shape, Type a_type, Type b_type, Type acc_type, const Regs& d, const Regs& a,
                      const Regs& b, const Regs& c) {
  const ptx::Instruction opcode{ptx::Opcode::mma,
                                {M::sync, M::aligned, mod(shape), M::row, M::col, mod(acc_type),
                                 mod(a_type), mod(b_type), mod(acc_type)}};
  const std::string accepted =
      "accepted: m16n8k8 and m16n8k16 with f16×f16 (f32 or f16 accumulate) or bf16×bf16 (f32 accumulate); "
      "m16n8k32 with e4m3/e5m2 × e4m3/e5m2 (f32 accumulate)";
  Fragments f{};
  if (shape == MmaShape::m16n8k32) {
    if (!is_fp8(a_type) || !is_fp8(b_type) || acc_type != Type::f32)
      fail(opcode, "operand types " + type_name(a_type) + "×" + type_name(b_type) + "→" + type_name(acc_type) +
                       " are not an m16n8k32 form; " + accepted);
    f = {4, 2, 4, Availability::since(89)};
  } else {
    if (!is_half(a_type) || a_type != b_type)
      fail(opcode, "A and B types " + type_name(a_type) + ", " + type_name(b_type) + " are not a " +
                       std::string(dsl::name(shape)) + " form; " + accepted);
    if (acc_type != Type::f32 && !(acc_type == Type::f16 && a_type == Type::f16))
      fail(opcode, "accumulator type " + type_name(acc_type) + " with " + type_name(a_type) + " inputs; " + accepted);
    bool k16 = shape == MmaShape::m16n8k16;
    int acc = acc_type == Type::f32 ? 4 : 2;
    // PTX ISA 9.7.14.5.14, target notes: m16n8k8 f16 needs sm_75; bf16 and
    // every m16n8k16 form need sm_80.
    f = {k16 ? 4 : 2, k16 ? 2 : 1, acc, Availability::since(a_type == Type::bf16 || k16 ? 80 : 75)};
  }
  require(opcode, f.availability);

  auto check = [&](const Regs& regs, int expected, const char* role, Type type) {
    if (static_cast<int>(regs.size()) != expected)
      fail(opcode, std::string(role) + " has " + std::to_string(regs.size()) + " registers; this shape takes " +
                       std::to_string(expected) + " per thread");
    for (const auto& r : regs) {
      // Packed fragments are .b32 registers; ptxas refuses .f32 ones there
      // ("Arguments mismatch for instruction 'mma'"), bit type or not.
      if (type == Type::b32 && (r.type() == Type::f32 || r.type() == Type::f64))
        fail(opcode, std::string(role) + " " + r.name() + " has type " + type_name(r.type()) +
                         "; packed fragments are b32 registers");
      expect_type(opcode, r, type, role);
    }
  };
  Type acc_reg = acc_type == Type::f32 ? Type::f32 : Type::b32;
  check(d, f.c, "D", acc_reg);
  check(a, f.a, "A", Type::b32);
  check(b, f.b, "B", Type::b32);
  check(c, f.c, "C", acc_reg);
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

}  // namespace warpforge::dsl
