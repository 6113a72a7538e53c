// parse_layout reads what to_string writes, and refuses everything else
// naming the position and what was expected there.
#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/layout/parse.hpp"

namespace warpforge::layout {
namespace {

std::string refusal(std::string_view text) {
  try {
    parse_layout(text);
  } catch (const LayoutError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ParseLayout, ReadsNestedShapeAndStride) {
  Layout l = parse_layout("((8,4),(2,2)):((4,1),(32,64))");
  EXPECT_EQ(l, Layout({{8, 4}, {2, 2}}, {{4, 1}, {32, 64}}));
  // The offsets, not only the structure: element (row 9, col 3) is row
  // (1, 1), col (1, 1): 1*4 + 1*1 + 1*32 + 1*64.
  EXPECT_EQ(l(9, 3), 101);
}

TEST(ParseLayout, RoundTripsToString) {
  for (const Layout& l : {Layout(8, 1), Layout({4, 8}, {8, 1}), Layout({2, {3, 4}}, {12, {1, 3}}),
                          Layout({{2, 2}, 1}, {{0, 5}, 0})}) {
    EXPECT_EQ(parse_layout(to_string(l)), l) << to_string(l);
  }
}

TEST(ParseLayout, AllowsSpacesBetweenTokens) {
  EXPECT_EQ(parse_layout(" ( 4 , 8 ) : ( 8 , 1 ) "), Layout({4, 8}, {8, 1}));
}

TEST(ParseLayout, ShapeAloneIsColumnMajor) {
  EXPECT_EQ(parse_layout("(4,(2,3))"), Layout({4, {2, 3}}, {1, {4, 8}}));
}

TEST(ParseLayout, RefusesNamingPositionAndExpectation) {
  EXPECT_EQ(refusal("(4,8:(1,4)"),
            "layout expression \"(4,8:(1,4)\": at position 4 found ':', expected ',' or ')'");
  EXPECT_EQ(refusal("(4,8):"),
            "layout expression \"(4,8):\": at position 6 found the end of the text, expected an "
            "integer or '('");
  EXPECT_EQ(refusal("(4,8)x"),
            "layout expression \"(4,8)x\": at position 5 found 'x', expected ':' and a stride, or "
            "the end of the text");
  EXPECT_EQ(refusal("(4,8):(1,4))"),
            "layout expression \"(4,8):(1,4))\": at position 11 found ')', expected the end of "
            "the text");
  EXPECT_EQ(refusal("(-4,8)"),
            "layout expression \"(-4,8)\": at position 1 found '-', expected an integer or '('");
  EXPECT_EQ(refusal(""),
            "layout expression \"\": at position 0 found the end of the text, expected an "
            "integer or '('");
  EXPECT_NE(refusal("99999999999999999999")
                .find("at position 0 found '9', expected an integer "
                      "below 2^63"),
            std::string::npos);
}

TEST(ParseLayout, RefusesWhatLayoutRefuses) {
  EXPECT_NE(refusal("(4,8):(1,(2,3))").find("congruent"), std::string::npos)
      << refusal("(4,8):(1,(2,3))");
  EXPECT_NE(refusal("(4,0)").find("every extent must be >= 1"), std::string::npos);
}

TEST(ParseIntTuple, ReadsTuplesAndRefusesTrailingText) {
  EXPECT_EQ(parse_int_tuple("((2,2),8)"), IntTuple({{2, 2}, 8}));
  EXPECT_EQ(parse_int_tuple("7"), IntTuple(7));
  EXPECT_THROW(parse_int_tuple("(2,2):(1,2)"), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
