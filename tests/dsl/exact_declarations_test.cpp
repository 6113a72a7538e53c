// Kernel's exact declarations (declare_reg(s), declare_pred(s), label_named,
// statement, scope): the facility code that reproduces given PTX builds on.
#include <gtest/gtest.h>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"

namespace warpforge::dsl {
namespace {

TEST(ExactDeclarations, DeclareWhereCalledUnderTheGivenNames) {
  Kernel k("exact", Target::sm_80);
  Regs r = k.declare_regs(b32, "%r", 3);
  Reg acc = k.declare_reg(f32, "%acc");
  Pred p = k.declare_pred("done");
  k.mov(r[2].as(u32), SReg::tid_x);
  ptx::Function f = k.function();
  ASSERT_EQ(f.body->body.size(), 5u);  // three declarations, mov, ret
  EXPECT_EQ(std::get<ptx::Variable>(f.body->body[0]),
            (ptx::Variable{.space = Space::reg, .type = b32, .name = "%r", .range = 3}));
  EXPECT_EQ(std::get<ptx::Variable>(f.body->body[1]).name, "%acc");
  EXPECT_EQ(std::get<ptx::Variable>(f.body->body[2]).type, pred);
  EXPECT_EQ(r[2].name(), "%r2");
  EXPECT_EQ(acc.name(), "%acc");
  EXPECT_EQ(p.name(), "done");
  const auto& mov = std::get<ptx::Instruction>(f.body->body[3]);
  EXPECT_EQ(mov.full_opcode(), "mov.u32");
  EXPECT_EQ(mov.operands[1], ptx::Operand::sreg("%tid.x"));
}

TEST(ExactDeclarations, NamesAreCheckedAgainstEveryOtherDeclaration) {
  Kernel k("clash", Target::sm_80);
  k.declare_regs(b32, "%r", 2);
  EXPECT_THROW(k.declare_reg(b32, "%r1"), DslError);
  EXPECT_THROW(k.reg(b32), DslError);  // the automatic %r0 is taken
}

TEST(ExactDeclarations, BlocksScopeTheirNames) {
  Kernel k("blocks", Target::sm_80);
  Label top = k.label_named("$L__BB0_1");
  k.place(top);
  for (int i = 0; i < 2; ++i)
    k.scope([&] {
      Pred done = k.declare_pred("done");
      k.bra_if(!done, top);
    });
  k.statement(ptx::Directive{.name = "pragma", .args = {ptx::Operand::string("nounroll")}, .semicolon = true});
  ptx::Function f = k.function();
  ASSERT_EQ(f.body->body.size(), 5u);  // label, two blocks, pragma, ret
  const auto& block = std::get<ptx::Block>(f.body->body[1]);
  ASSERT_EQ(block.body.size(), 2u);
  EXPECT_EQ(std::get<ptx::Instruction>(block.body[1]).guard, (ptx::Guard{"done", true}));
  EXPECT_EQ(std::get<ptx::Label>(f.body->body[0]).name, "$L__BB0_1");
  EXPECT_EQ(std::get<ptx::Directive>(f.body->body[3]).name, "pragma");
}

TEST(ExactDeclarations, LabelsUsedInBlocksMustBePlaced) {
  Kernel k("unplaced", Target::sm_80);
  Label nowhere = k.label_named("nowhere");
  k.scope([&] { k.bra(nowhere); });
  EXPECT_THROW(k.function(), DslError);
}

TEST(SpecialRegisterOperands, AreRefusedWhereTheTargetLacksThem) {
  Kernel k("sregs", Target::sm_80);
  Reg r = k.declare_reg(b32, "%r");
  EXPECT_THROW(k.mov(r, SReg::cluster_ctarank), TargetError);
  EXPECT_THROW(k.mov(k.declare_reg(b64, "%rd"), SReg::tid_x), DslError);  // 32-bit register into 64 bits
  EXPECT_EQ(k.operand_of(SReg::laneid), ptx::Operand::sreg("%laneid"));
}

TEST(Directives, OneValueIsNotCommaSeparated) {
  Kernel k("directives", Target::sm_80);
  k.minnctapersm(2);
  k.maxntid(128);
  ptx::Function f = k.function();
  EXPECT_FALSE(f.directives[0].comma_separated);
  EXPECT_TRUE(f.directives[1].comma_separated);
}

}  // namespace
}  // namespace warpforge::dsl
