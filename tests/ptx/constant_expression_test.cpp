// Constant expressions (PTX ISA 4.6) in immediates and address offsets: the
// parser folds them to a value, the IR keeps the value, the emitter writes it,
// and ptxas makes the same machine code of the folded PTX as of the original.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "warpforge/error.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::ptx {
namespace {

std::string in_kernel(const std::string& body) {
  return ".version 8.4\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
         ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n" +
         body + "\nret;\n}\n";
}

const Instruction& first_instruction(const Module& m) {
  for (const auto& s : m.entries().at(0)->body->body)
    if (const auto* inst = std::get_if<Instruction>(&s)) return *inst;
  throw std::runtime_error("no instruction");
}

// The immediate that `mov.u64 %rd1, <expression>;` parses to.
Operand folded(const std::string& expression) {
  return first_instruction(parse(in_kernel("mov.u64 %rd1, " + expression + ";"))).operands.at(1);
}

struct Case {
  std::string expression;
  std::string value;  // the emitted immediate
};

class Folds : public ::testing::TestWithParam<Case> {};

TEST_P(Folds, ToTheValuePtxGives) {
  const Operand op = folded(GetParam().expression);
  EXPECT_EQ(op.kind, Operand::Kind::imm_int);
  EXPECT_EQ(op.text, GetParam().value) << GetParam().expression;
}

INSTANTIATE_TEST_SUITE_P(
    ConstantExpressions, Folds,
    ::testing::Values(
        // Precedence and associativity, PTX ISA 4.6.1.
        Case{"1+2*3-4", "3"}, Case{"(1+2)*3", "9"}, Case{"100/10/5", "2"}, Case{"2-3-4", "-5"},
        Case{"1 << 2 + 3", "32"}, Case{"1 | 2 ^ 3 & 4", "3"}, Case{"1 < 2 == 1", "1"},
        Case{"1 || 0 && 0", "1"}, Case{"1 ? 2 : 0 ? 3 : 4", "2"}, Case{"0 ? 1 : 2 + 3", "5"},
        Case{"((128 >> 4) << 16)", "524288"}, Case{"288*2", "576"},
        // Unary operators and casts; ~ gives .u64 (PTX ISA 4.6.2).
        Case{"-(3*4)", "-12"}, Case{"- -5", "5"}, Case{"+7*2", "14"}, Case{"!5", "0"},
        Case{"!0", "1"}, Case{"~0", "18446744073709551615U"}, Case{"~0 >> 60", "15U"},
        Case{"(-1) >> 60", "-1"}, Case{"(.u64)-1 >> 60", "15U"}, Case{"(.s64)~0 >> 60", "-1"},
        Case{"(.s64)-1U < 0", "1"},
        // Signedness: one unsigned operand makes the operation unsigned.
        Case{"-1 < 0U", "0"}, Case{"-1U / 2", "9223372036854775807U"}, Case{"3 == 3U", "1"},
        Case{"18446744073709551615 >> 63", "1U"}, Case{"-7 / 2", "-3"}, Case{"7 / -2", "-3"},
        // Wrap-around and ptxas's rules where C leaves the result undefined.
        Case{"9223372036854775807+1", "-9223372036854775808"}, Case{"0x7FFFFFFFFFFFFFFF*2", "-2"},
        Case{"(-9223372036854775807-1)/-1U", "0U"},
        Case{"(-9223372036854775807-1) % -1", "-9223372036854775808"}, Case{"1 << 64", "1"},
        Case{"1 << 70", "64"}, Case{"1 << -1", "-9223372036854775808"}, Case{"-7 % 2", "1"},
        Case{"-7 % 3", "0"}, Case{"7 % -3", "7"}, Case{"0x10 + 010 + 0b10 + 1U", "27U"}),
    [](const ::testing::TestParamInfo<Case>& info) { return "case" + std::to_string(info.index); });

TEST(ConstantExpressions, LiteralsKeepTheirSpelling) {
  // One literal, with or without its sign, is not an expression: it keeps the
  // text it was written with (the round trip of nvcc's output relies on it).
  EXPECT_EQ(folded("0x1F").text, "0x1F");
  EXPECT_EQ(folded("-1").text, "-1");
  EXPECT_EQ(folded("017").text, "017");
}

TEST(ConstantExpressions, FoldIntoAddressOffsets) {
  const Module m =
      parse(in_kernel("st.shared.b32 [%r1+288*2], %r2;\nld.u32 %r3, [%rd1-4+2];\n"
                      "ld.u32 %r3, [%rd1+(8-8)];\nld.u32 %r3, [out+2*4];"));
  std::vector<const Instruction*> insts;
  for (const auto& s : m.entries().at(0)->body->body)
    if (const auto* inst = std::get_if<Instruction>(&s)) insts.push_back(inst);
  EXPECT_EQ(insts.at(0)->operands.at(0).offset, 576);
  EXPECT_EQ(insts.at(1)->operands.at(1).offset, -2);
  EXPECT_EQ(insts.at(2)->operands.at(1).offset, 0);
  EXPECT_TRUE(insts.at(2)->operands.at(1).explicit_zero_offset);
  EXPECT_EQ(insts.at(3)->operands.at(1).offset, 8);
  EXPECT_EQ(emit(*insts.at(0)), "st.shared.b32 [%r1+576], %r2;");
  EXPECT_EQ(emit(*insts.at(1)), "ld.u32 %r3, [%rd1+-2];");
}

TEST(ConstantExpressions, ParenthesisedListsStayLists) {
  // `(1)` is a call's operand list; `(%r1, 2)` too.
  const Module m = parse(in_kernel("mov.u64 %rd1, (1);"));
  EXPECT_EQ(first_instruction(m).operands.at(1).kind, Operand::Kind::list);
}

struct Refused {
  std::string expression;
  int column;  // of the token named, in `mov.u64 %rd1, <expression>;`
  std::string token;
  std::string expected;  // a part of ParseError::expected()
};

class RefusesExpression : public ::testing::TestWithParam<Refused> {};

TEST_P(RefusesExpression, NamingTheExpression) {
  const Refused& r = GetParam();
  try {
    parse(in_kernel("mov.u64 %rd1, " + r.expression + ";"), "bad.ptx");
    FAIL() << r.expression << " parsed";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 8) << e.what();
    EXPECT_EQ(e.column(), r.column) << e.what();
    EXPECT_EQ(e.token(), r.token) << e.what();
    EXPECT_NE(e.expected().find(r.expected), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    ConstantExpressions, RefusesExpression,
    ::testing::Values(
        // PTX forbids division by zero (ptxas: "Constant expression has division by zero").
        Refused{"10/0", 17, "/", "the constant expression '10 / 0' divides by zero"},
        Refused{"1 + 10 % (2-2)", 22, "%", "'1 + 10 % ( 2 - 2 )' divides by zero"},
        Refused{"(1+2", 19, ";", "')'"},
        Refused{"(-9223372036854775807-1)/-1", 39, "/", "divides -2^63 by -1"},
        Refused{"1 ? 2", 20, ";", "':'"},
        Refused{"2 * %r1", 19, "%r1", "an integer, '(' or a unary operator"},
        Refused{"1 + 99999999999999999999", 19, "99999999999999999999", "fits in 64 bits"},
        Refused{"3 * 1.5", 19, "1.5", "an integer"}),
    [](const ::testing::TestParamInfo<Refused>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(ConstantExpressions, RemainderOperatorNeedsASpaceBeforeItsOperand) {
  // `%2` is a register name (PTX ISA 4.4), as ptxas reads it too.
  EXPECT_THROW(parse(in_kernel("mov.u64 %rd1, 7%2;")), ParseError);
  EXPECT_EQ(folded("7 %(2)").text, "1");
}

// ptxas assembles the folded PTX to the same machine code as the original,
// which also checks the folding rules against ptxas's own evaluation.
TEST(ConstantExpressions, FoldedPtxAssemblesToTheSameCode) {
  const std::string original =
      ".version 8.4\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n"
      ".shared .align 16 .b8 tile[1024];\n"
      "ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, tile;\n"
      "mov.u32 %r2, 7 * 3 + 1;\nst.shared.b32 [%r1+288*2], %r2;\nld.shared.b32 %r3, "
      "[%r1+(1<<4)-4];\n"
      "or.b64 %rd2, %rd1, ((128 >> 4) << 16);\nmov.u64 %rd3, ~0 >> 60;\n"
      "mov.u64 %rd4, (-9223372036854775807-1)/-1U + (-8 % 3) + (1 << 70) + (-1 >> 64);\n"
      "mov.u64 %rd5, -1U / 2 + (.s64)~0;\nmov.u64 %rd6, 2 > 1 ? 0x100 : 7;\n"
      "add.u64 %rd7, %rd2, %rd3;\nadd.u64 %rd7, %rd7, %rd4;\nadd.u64 %rd7, %rd7, %rd5;\n"
      "add.u64 %rd7, %rd7, %rd6;\nst.global.u64 [%rd1+2*8], %rd7;\nst.global.u32 [%rd1], "
      "%r3;\nret;\n}\n";
  const Module parsed = parse(original);
  const std::string emitted = emit(parsed);
  EXPECT_EQ(parse(emitted), parsed);
  EXPECT_NE(emitted.find("[%r1+576]"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("524288"), std::string::npos) << emitted;

  auto ptxas = find_cuda_tool("ptxas");
  if (!ptxas)
    GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: the machine-code check "
                    "needs the CUDA toolkit";
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("warpforge-cexpr-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto assemble = [&](const std::string& text, const std::string& stem) {
    std::ofstream(dir / (stem + ".ptx")) << text;
    ToolRun run = run_tool(*ptxas, {"-arch=sm_90a", (dir / (stem + ".ptx")).string(), "-o",
                                    (dir / (stem + ".cubin")).string()});
    EXPECT_EQ(run.exit_code, 0) << run.status() << "\n" << run.output;
    std::ifstream in(dir / (stem + ".cubin"), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  };
  const std::string want = assemble(original, "original"), got = assemble(emitted, "emitted");
  fs::remove_all(dir);
  ASSERT_FALSE(want.empty());
  EXPECT_TRUE(want == got) << "the cubins differ; emitted:\n" << emitted;
}

}  // namespace
}  // namespace warpforge::ptx
