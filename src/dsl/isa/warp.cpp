#include "warpforge/dsl/isa/warp.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;

void WarpOps::shfl_sync(Shfl mode, const Reg& d, const Src& a, const Src& b, const Src& c,
                        const Src& member_mask, std::optional<Pred> in_range) {
  static constexpr M kModes[] = {M::up, M::down, M::bfly, M::idx};
  const ptx::Instruction opcode{O::shfl, {M::sync, kModes[static_cast<int>(mode)], mod(Type::b32)}};
  expect_type(opcode, d, Type::b32, "destination");
  expect_type(opcode, a, Type::b32, "source");
  expect_type(opcode, b, Type::b32, "lane/offset");
  expect_type(opcode, c, Type::b32, "clamp/segment mask");
  expect_type(opcode, member_mask, Type::b32, "member mask");
  ptx::Operand dst = operand_of(d);
  if (in_range) dst = ptx::Operand::pair(dst, operand_of(*in_range));
  emit(opcode, {dst, operand_of(a), operand_of(b), operand_of(c), operand_of(member_mask)});
}

void WarpOps::vote_sync(Vote mode, const Pred& d, const PredUse& a, const Src& member_mask) {
  static constexpr M kModes[] = {M::all, M::any, M::uni};
  const ptx::Instruction opcode{O::vote, {M::sync, kModes[static_cast<int>(mode)], mod(Type::pred)}};
  expect_type(opcode, member_mask, Type::b32, "member mask");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(member_mask)});
}

void WarpOps::ballot_sync(const Reg& d, const PredUse& a, const Src& member_mask) {
  const ptx::Instruction form{O::vote, {M::sync, M::ballot, mod(Type::b32)}};
  expect_type(form, d, Type::b32, "destination");
  expect_type(form, member_mask, Type::b32, "member mask");
  emit(form, {operand_of(d), operand_of(a), operand_of(member_mask)});
}

void WarpOps::redux_sync(Redux op, const Reg& d, const Src& a, const Src& member_mask) {
  static constexpr M kOps[] = {M::add, M::min, M::max, M::and_, M::or_, M::xor_};
  bool logic = op == Redux::and_ || op == Redux::or_ || op == Redux::xor_;
  Type t = d.type();
  if (logic) t = Type::b32;
  else if (t == Type::b32) t = Type::u32;
  const ptx::Instruction opcode{O::redux, {M::sync, kOps[static_cast<int>(op)], mod(t)}};
  require(opcode, Availability::since(80));
  if (!logic && t != Type::u32 && t != Type::s32)
    fail(opcode, "destination " + d.name() + " is " + detail::type_name(d.type()) +
                     "; redux.sync add/min/max take u32 or s32");
  expect_type(opcode, d, t, "destination");
  expect_type(opcode, a, t, "source");
  expect_type(opcode, member_mask, Type::b32, "member mask");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(member_mask)});
}

void WarpOps::activemask(const Reg& d) {
  const ptx::Instruction form{O::activemask, {mod(Type::b32)}};
  expect_type(form, d, Type::b32, "destination");
  emit(form, {operand_of(d)});
}

void WarpOps::elect_sync(const Reg& d, const Pred& p, const Src& member_mask) {
  const ptx::Instruction form{O::elect, {M::sync}};
  require(form, Availability::since(90));
  expect_type(form, d, Type::b32, "destination");
  expect_type(form, member_mask, Type::b32, "member mask");
  emit(form, {ptx::Operand::pair(operand_of(d), operand_of(p)), operand_of(member_mask)});
}

}  // namespace warpforge::dsl
