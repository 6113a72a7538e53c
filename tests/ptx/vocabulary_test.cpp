// The PTX vocabulary (ptx/vocabulary.hpp, ptx/modifiers.hpp,
// ptx/special_register.hpp): one entry per opcode, found by its spelling; a
// modifier word's meaning chosen by the opcode's classes; the enumerations'
// spellings agree with the words the table gives them.
#include <gtest/gtest.h>

#include <set>

#include "warpforge/ptx/special_register.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::ptx {
namespace {

TEST(Vocabulary, EveryOpcodeIsFoundByItsSpellingOnce) {
  std::set<std::string_view> names;
  for (const OpcodeInfo& i : vocabulary()) {
    EXPECT_TRUE(names.insert(i.name).second) << i.name << " twice";
    ASSERT_EQ(find_opcode(i.name), &i) << i.name;
    EXPECT_EQ(&info(i.opcode), &i) << i.name;
    EXPECT_LE(i.arity.min, i.arity.max) << i.name;
  }
  EXPECT_EQ(find_opcode("tcgen99"), nullptr);
  EXPECT_EQ(find_opcode("mma")->arity.min, 4);
  EXPECT_FALSE(find_opcode("wgmma")->availability.has(Target::sm_100a));  // sm_90a only
  EXPECT_TRUE(find_opcode("wgmma")->availability.has(Target::sm_90a));
  EXPECT_FALSE(find_opcode("elect")->availability.has(Target::sm_80));
}

// A word with meanings in several classes means what the opcode takes.
TEST(Vocabulary, AModifierMeansWhatItsOpcodeTakes) {
  const auto meaning = [](std::string_view opcode, std::string_view word) {
    return find_modifier(word, find_opcode(opcode)->modifiers);
  };
  EXPECT_EQ(meaning("vote", "uni")->cls, ModifierClass::vote_mode);
  EXPECT_EQ(meaning("bra", "uni")->cls, ModifierClass::sync);
  EXPECT_EQ(meaning("setp", "and")->cls, ModifierClass::bool_op);
  EXPECT_EQ(meaning("atom", "and")->value, static_cast<std::uint8_t>(AtomOp::and_));
  EXPECT_EQ(meaning("atom", "and")->cls, ModifierClass::atomic_op);
  EXPECT_EQ(meaning("setp", "lo")->value, static_cast<std::uint8_t>(Cmp::lo));
  EXPECT_EQ(meaning("mul", "lo")->value, static_cast<std::uint8_t>(MulMode::lo));
  EXPECT_EQ(meaning("ld", "shared::cluster")->value, static_cast<std::uint8_t>(Space::shared));
  EXPECT_EQ(meaning("cvt", "rzi")->cls, ModifierClass::integral_rounding);
  EXPECT_EQ(meaning("cvt", "bf16x2")->value, static_cast<std::uint8_t>(Type::bf16x2));
  EXPECT_EQ(meaning("mma", "m16n8k32")->value, static_cast<std::uint8_t>(MmaShape::m16n8k32));
  EXPECT_FALSE(meaning("add", "lo"));    // add has no .lo
  EXPECT_FALSE(meaning("mov", "rn"));    // nor mov a rounding
  EXPECT_FALSE(meaning("setp", "q32"));  // no such word
}

TEST(Vocabulary, EnumerationsAreSpelledAsTheirWords) {
  const std::vector<Modifier> cmps = modifiers_of(ModifierClass::comparison);
  ASSERT_EQ(cmps.size(), 18u);
  for (const Modifier& m : cmps) EXPECT_EQ(name(static_cast<Cmp>(m.value)), m.word);
  const std::vector<Modifier> atomics = modifiers_of(ModifierClass::atomic_op);
  ASSERT_EQ(atomics.size(), 10u);
  for (const Modifier& m : atomics) EXPECT_EQ(name(static_cast<AtomOp>(m.value)), m.word);
  for (const Modifier& m : modifiers_of(ModifierClass::space))
    EXPECT_EQ(m.word.substr(0, name(static_cast<Space>(m.value)).size()),
              name(static_cast<Space>(m.value)));
  for (const Modifier& m : modifiers_of(ModifierClass::type))
    EXPECT_EQ(parse_type(m.word), static_cast<Type>(m.value));
  EXPECT_TRUE(float_only(Cmp::equ));
  EXPECT_FALSE(float_only(Cmp::hs));
}

TEST(Vocabulary, EveryClassOfAnOpcodeHasWords) {
  for (const OpcodeInfo& i : vocabulary())
    for (ModifierClass c : i.modifiers.list())
      EXPECT_FALSE(modifiers_of(c).empty()) << i.name << " " << name(c);
}

TEST(SpecialRegisters, EachIsFoundByNameWithItsTypeAndTargets) {
  for (const SRegInfo& r : all_sregs()) {
    EXPECT_EQ(parse_sreg(r.name), r.reg) << r.name;
    EXPECT_EQ(&info(r.reg), &r) << r.name;
  }
  EXPECT_EQ(info(SReg::gridid).type, Type::u64);
  EXPECT_EQ(info(SReg::is_explicit_cluster).type, Type::pred);
  EXPECT_FALSE(info(SReg::cluster_ctarank).availability.has(Target::sm_80));
  EXPECT_EQ(parse_sreg("%tid.w"), std::nullopt);
}

}  // namespace
}  // namespace warpforge::ptx
