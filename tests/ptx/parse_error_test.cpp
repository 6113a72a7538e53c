// Malformed PTX: the parser throws ParseError naming the line, column and
// token where reading stopped and what it expected there.
#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::ptx {
namespace {

struct Malformed {
  std::string what;
  std::string text;
  int line;
  int column;
  std::string token;     // empty: end of input
  std::string expected;  // a part of ParseError::expected()
};

// Three header lines, then `.entry k()` on line 4, `{` on 5, the body from 6.
std::string in_bare_kernel(const std::string& body) {
  return ".version 8.4\n.target sm_90a\n.address_size 64\n.entry k()\n{\n" + body + "\n}\n";
}

class ParseErrors : public ::testing::TestWithParam<Malformed> {};

TEST_P(ParseErrors, NameThePositionTokenAndExpectation) {
  const Malformed& m = GetParam();
  try {
    parse(m.text, "bad.ptx");
    FAIL() << m.what << ": parsed without error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), m.line) << e.what();
    EXPECT_EQ(e.column(), m.column) << e.what();
    EXPECT_EQ(e.token(), m.token) << e.what();
    EXPECT_NE(e.expected().find(m.expected), std::string::npos) << e.what();
    const std::string prefix =
        "bad.ptx:" + std::to_string(m.line) + ":" + std::to_string(m.column) + ": expected ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(m.token.empty() ? "end of input" : "'" + m.token + "'"),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParseErrors,
    ::testing::Values(
        Malformed{"empty input", "", 1, 1, "", "'.version'"},
        Malformed{"version without minor", ".version 8\n", 1, 10, "8", "major.minor"},
        Malformed{"target missing", ".version 8.4\n.address_size 64\n", 2, 1, ".address_size",
                  "'.target'"},
        Malformed{"address size", ".version 8.4\n.target sm_90\n.address_size 48\n", 3, 15, "48",
                  "32 or 64"},
        Malformed{"unterminated comment", ".version 8.4 /* no end\n", 1, 14, "/*", "'*/'"},
        Malformed{"short hex float", in_bare_kernel("mov.f32 %f1, 0f3F80;"), 6, 14, "0f3F80",
                  "hex float"},
        Malformed{"octal with 9", in_bare_kernel("mov.u32 %r1, 019;"), 6, 14, "019", "octal digits"},
        Malformed{"missing semicolon", in_bare_kernel("add.s32 %r1, %r2, 1\nret;"), 7, 1, "ret", "';'"},
        Malformed{"stray character", in_bare_kernel("add.s32 %r1, %r2, #1;"), 6, 19, "#", "a PTX token"},
        Malformed{"unterminated string", in_bare_kernel(".pragma \"nounroll;"), 6, 9, "\"",
                  "closing the string"},
        Malformed{"declaration without type", in_bare_kernel(".reg %r<4>;"), 6, 6, "%r", "a type"},
        Malformed{"unclosed body", ".version 8.4\n.target sm_90a\n.entry k()\n{\nret;\n", 6, 1, "",
                  "'}'"},
        Malformed{"unclosed address", in_bare_kernel("ld.u32 %r1, [%rd1+4;"), 6, 20, ";", "']'"},
        Malformed{"guard without instruction", in_bare_kernel("@%p1 ;"), 6, 6, ";", "an instruction"},
        Malformed{"linkage without space", ".version 8.4\n.target sm_90a\n.visible .foo x;\n", 3,
                  10, ".foo", "a state space"},
        Malformed{"register as opcode", in_bare_kernel("%r1 = 5;"), 6, 1, "%r1", "a statement"},
        Malformed{"too deep", in_bare_kernel(std::string(300, '{')), 6, 201, "{", "levels of nesting"},
        Malformed{"integer past 64 bits", in_bare_kernel("mov.u32 %r1, 999999999999999999999999999999;"),
                  6, 14, "999999999999999999999999999999", "an integer that fits in 64 bits"},
        Malformed{"hex integer past 64 bits", in_bare_kernel("add.s64 %rd1, %rd2, 0x10000000000000000;"),
                  6, 21, "0x10000000000000000", "an integer that fits in 64 bits"},
        Malformed{"negative integer past 64 bits",
                  in_bare_kernel("mov.s64 %rd1, -18446744073709551616;"), 6, 16, "18446744073709551616",
                  "an integer that fits in 64 bits"},
        Malformed{"address offset past 64 bits",
                  in_bare_kernel("ld.u32 %r1, [%rd1+99999999999999999999];"), 6, 19,
                  "99999999999999999999", "an integer that fits in 64 bits"}),
    [](const ::testing::TestParamInfo<Malformed>& info) {
      std::string n = info.param.what;
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

// The largest 64-bit literals still parse (PTX ISA 4.5.1: 64-bit constants).
TEST(ParseError, SixtyFourBitLiteralsAreInRange) {
  EXPECT_NO_THROW(
      parse(in_bare_kernel("mov.u64 %rd1, 18446744073709551615;\nmov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;")));
}

TEST(ParseError, IsAPtxError) {
  EXPECT_THROW(parse(".version"), PtxError);
  EXPECT_THROW(parse(".version"), Error);
}

}  // namespace
}  // namespace warpforge::ptx
