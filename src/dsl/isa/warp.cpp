#include "warpforge/dsl/isa/warp.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

void WarpOps::shfl_sync(Shfl mode, const Reg& d, const Src& a, const Src& b, const Src& c,
                        const Src& member_mask, std::optional<Pred> in_range) {
  static constexpr const char* kModes[] = {"up", "down", "bfly", "idx"};
  std::string opcode = std::string("shfl.sync.") + kModes[static_cast<int>(mode)] + ".b32";
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
  static constexpr const char* kModes[] = {"all", "any", "uni"};
  std::string opcode = std::string("vote.sync.") + kModes[static_cast<int>(mode)] + ".pred";
  expect_type(opcode, member_mask, Type::b32, "member mask");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(member_mask)});
}

void WarpOps::ballot_sync(const Reg& d, const PredUse& a, const Src& member_mask) {
  expect_type("vote.sync.ballot.b32", d, Type::b32, "destination");
  expect_type("vote.sync.ballot.b32", member_mask, Type::b32, "member mask");
  emit("vote.sync.ballot.b32", {operand_of(d), operand_of(a), operand_of(member_mask)});
}

void WarpOps::redux_sync(Redux op, const Reg& d, const Src& a, const Src& member_mask) {
  static constexpr const char* kOps[] = {"add", "min", "max", "and", "or", "xor"};
  bool logic = op == Redux::and_ || op == Redux::or_ || op == Redux::xor_;
  Type t = d.type();
  if (logic) t = Type::b32;
  else if (t == Type::b32) t = Type::u32;
  std::string opcode = std::string("redux.sync.") + kOps[static_cast<int>(op)] + detail::dot(t);
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
  expect_type("activemask.b32", d, Type::b32, "destination");
  emit("activemask.b32", {operand_of(d)});
}

void WarpOps::elect_sync(const Reg& d, const Pred& p, const Src& member_mask) {
  require("elect.sync", Availability::since(90));
  expect_type("elect.sync", d, Type::b32, "destination");
  expect_type("elect.sync", member_mask, Type::b32, "member mask");
  emit("elect.sync", {ptx::Operand::pair(operand_of(d), operand_of(p)), operand_of(member_mask)});
}

}  // namespace warpforge::dsl
