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
  for (const Modifier& m : cmps) {
    EXPECT_EQ(name(static_cast<Cmp>(m.value)), name(m.mod));
    EXPECT_EQ(mod(static_cast<Cmp>(m.value)), m.mod);
  }
  const std::vector<Modifier> atomics = modifiers_of(ModifierClass::atomic_op);
  ASSERT_EQ(atomics.size(), 10u);
  for (const Modifier& m : atomics) EXPECT_EQ(name(static_cast<AtomOp>(m.value)), name(m.mod));
  for (const Modifier& m : modifiers_of(ModifierClass::space))
    EXPECT_EQ(name(m.mod).substr(0, name(static_cast<Space>(m.value)).size()),
              name(static_cast<Space>(m.value)));
  for (const Modifier& m : modifiers_of(ModifierClass::type)) {
    EXPECT_EQ(parse_type(name(m.mod)), static_cast<Type>(m.value));
    EXPECT_EQ(type_of(m.mod), static_cast<Type>(m.value));
  }
  EXPECT_TRUE(float_only(Cmp::equ));
  EXPECT_FALSE(float_only(Cmp::hs));
}

// Every word the IR can hold is spelled once and read back to itself, with a
// meaning in some class; the C++ enumerators are the spellings with "::"
// as "_" (the transpiler writes them).
TEST(Vocabulary, EveryModifierWordIsSpelledOnceAndReadBack) {
  std::set<std::string_view> spellings;
  int words = 0;
  for (int i = 0;; ++i) {
    const auto m = static_cast<Mod>(i);
    if (m >= Mod::first_wgmma_shape && !wgmma_shape_of(m)) break;
    const std::string_view word = name(m);
    EXPECT_TRUE(spellings.insert(word).second) << word << " twice";
    EXPECT_EQ(find_mod(word), m) << word;
    bool meant = false;
    for (int c = 0; c < static_cast<int>(ModifierClass::count); ++c)
      meant |= meaning(m, {static_cast<ModifierClass>(c)}).has_value();
    EXPECT_TRUE(meant) << word << " has no meaning";
    if (!type_of(m) && !wgmma_shape_of(m)) {
      std::string expected(word);
      for (std::size_t at; (at = expected.find("::")) != std::string::npos;) expected.replace(at, 2, "_");
      EXPECT_NE(enumerator(m).find(expected), std::string_view::npos) << word;
    }
    ++words;
  }
  EXPECT_GT(words, 500);  // 559 words with PTX ISA 9.0
  EXPECT_EQ(find_mod("q32"), std::nullopt);
  EXPECT_EQ(find_mod("m64n12k16"), std::nullopt);  // N steps by 8
  EXPECT_EQ(wgmma_shape(256, 16), find_mod("m64n256k16"));
  EXPECT_EQ(wgmma_shape_of(*find_mod("m64n8k32"))->k, 32);
  EXPECT_EQ(wgmma_shape(264, 16), std::nullopt);
  EXPECT_EQ(enumerator(Mod::mbarrier_complete_tx_bytes), "mbarrier_complete_tx_bytes");
  EXPECT_EQ(enumerator(Opcode::and_), "and_");
  EXPECT_EQ(mod(Type::u32), find_mod("u32"));
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
