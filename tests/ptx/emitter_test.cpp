#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"

namespace warpforge::ptx {
namespace {

TEST(Operand, SpellsEveryKind) {
  EXPECT_EQ(to_string(Operand::reg("%p1", true)), "!%p1");
  EXPECT_EQ(to_string(Operand::f32(1.0f)), "0f3F800000");
  EXPECT_EQ(to_string(Operand::f64(1.0)), "0d3FF0000000000000");
  EXPECT_EQ(to_string(Operand::address(Operand::reg("%rd1"), 8)), "[%rd1+8]");
  EXPECT_EQ(to_string(Operand::address(Operand::reg("%rd1"), -8)), "[%rd1+-8]");
  EXPECT_EQ(to_string(Operand::vector({Operand::reg("%r1"), Operand::sink()})), "{%r1, _}");
  EXPECT_EQ(to_string(Operand::pair(Operand::reg("%p1"), Operand::reg("%p2"))), "%p1|%p2");
  EXPECT_EQ(to_string(Operand::list({Operand::symbol("param0")})), "(param0)");
  EXPECT_EQ(to_string(Operand::string("a.cu")), "\"a.cu\"");
}

TEST(Operand, ReadsImmediatesInEverySpelling) {
  EXPECT_EQ(Operand::imm_text(Operand::Kind::imm_int, "0x1F").int_value(), 31);
  EXPECT_EQ(Operand::imm_text(Operand::Kind::imm_int, "017").int_value(), 15);
  EXPECT_EQ(Operand::imm_text(Operand::Kind::imm_int, "0b101").int_value(), 5);
  EXPECT_EQ(Operand::imm_text(Operand::Kind::imm_int, "-42").int_value(), -42);
  EXPECT_EQ(Operand::imm_text(Operand::Kind::imm_int, "7U").int_value(), 7);
  EXPECT_DOUBLE_EQ(Operand::imm_text(Operand::Kind::imm_float, "0f3FC00000").float_value(), 1.5);
  EXPECT_DOUBLE_EQ(Operand::imm_text(Operand::Kind::imm_float, "0d4000000000000000").float_value(), 2.0);
  EXPECT_THROW(Operand::reg("%r1").int_value(), PtxError);
  EXPECT_THROW(Operand::imm_text(Operand::Kind::imm_int, "12z").int_value(), PtxError);
}

TEST(Emitter, WritesAModuleDeterministically) {
  Module m;
  m.version_major = 8;
  m.version_minor = 4;
  m.target = {"sm_90a"};
  Variable smem{.space = Space::shared, .type = Type::b8, .name = "smem", .align = 16, .dims = {1024}};
  m.items.push_back(smem);
  Function f;
  f.name = "k";
  Variable a{.space = Space::param, .type = Type::u64, .name = "A"};
  a.ptr = true;
  a.ptr_space = Space::global;
  a.ptr_align = 16;
  Variable tmap{.space = Space::param, .type = Type::b8, .name = "tmap", .align = 64, .dims = {128}};
  f.params = {a, tmap};
  f.directives.push_back({.name = "maxntid", .args = {Operand::imm(128), Operand::imm(1), Operand::imm(1)},
                          .comma_separated = true});
  Block body;
  body.body.push_back(Variable{.space = Space::reg, .type = Type::b32, .name = "%r", .range = 3});
  body.body.push_back(Label{"$L_top"});
  Instruction bra = Instruction::parse_opcode("bra.uni");
  bra.operands = {Operand::label("$L_top")};
  bra.guard = Guard{"%p1", true};
  body.body.push_back(bra);
  body.body.push_back(Block{{Instruction::parse_opcode("ret")}});
  f.body = body;
  m.items.push_back(f);

  const std::string expected =
      ".version 8.4\n.target sm_90a\n.address_size 64\n\n"
      ".shared .align 16 .b8 smem[1024];\n\n"
      "\t// .globl\tk\n"
      ".visible .entry k(\n\t.param .u64 .ptr .global .align 16 A,\n\t.param .align 64 .b8 tmap[128]\n)\n"
      ".maxntid 128, 1, 1\n"
      "{\n\t.reg .b32 %r<3>;\n$L_top:\n\t@!%p1 bra.uni $L_top;\n\t{\n\t\tret;\n\t}\n}\n";
  EXPECT_EQ(emit(m), expected);
  EXPECT_EQ(m.to_ptx(), emit(m));
}

TEST(Instruction, SplitsAndJoinsOpcodes) {
  Instruction i = Instruction::parse_opcode("ld.global.v4.b32");
  EXPECT_EQ(i.opcode, Opcode::ld);
  EXPECT_EQ(i.modifiers, (std::vector<Mod>{Mod::global, Mod::v4, mod(Type::b32)}));
  EXPECT_EQ(i.full_opcode(), "ld.global.v4.b32");
  EXPECT_TRUE(i.has(Mod::v4));
  EXPECT_EQ(i.types(), std::vector<Type>{Type::b32});
  const Instruction wgmma = Instruction::parse_opcode("wgmma.mma_async.sync.aligned.m64n256k16.f32");
  EXPECT_EQ(wgmma.modifiers.at(3), *wgmma_shape(256, 16));
  EXPECT_EQ(wgmma.full_opcode(), "wgmma.mma_async.sync.aligned.m64n256k16.f32");
}

TEST(Instruction, RefusesWordsThatAreNotPtxs) {
  std::string why;
  EXPECT_FALSE(Instruction::parse_opcode("frobnicate.f32", why));
  EXPECT_NE(why.find("'frobnicate' is not a PTX opcode"), std::string::npos) << why;
  EXPECT_FALSE(Instruction::parse_opcode("add.q32", why));
  EXPECT_NE(why.find("'.q32' is not a modifier"), std::string::npos) << why;
  EXPECT_FALSE(Instruction::parse_opcode("ld.", why));
  EXPECT_FALSE(Instruction::parse_opcode("m64n8k16", why));
  EXPECT_THROW(Instruction::parse_opcode("mma.sync.aligned.m16n8k17"), PtxError);
}

TEST(Types, KnowTheirWidthsAndStorage) {
  EXPECT_EQ(bits(Type::bf16x2), 32);
  EXPECT_EQ(storage_type(Type::f16), Type::b16);
  EXPECT_EQ(storage_type(Type::u64), Type::b64);
  EXPECT_EQ(storage_type(Type::f32), Type::f32);
  EXPECT_EQ(parse_type("e4m3x2"), Type::e4m3x2);
  EXPECT_EQ(parse_type("q32"), std::nullopt);
  for (int i = 0; i <= static_cast<int>(Type::e2m1x2); ++i)
    EXPECT_EQ(parse_type(name(static_cast<Type>(i))), static_cast<Type>(i));
}

}  // namespace
}  // namespace warpforge::ptx
