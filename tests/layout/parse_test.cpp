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

// Hostile input: nesting bounded as the PTX parser bounds its own (a stack
// overflow otherwise), a long expression quoted by its start and length.
TEST(ParseLayout, RefusesNestingDeeperThan200Levels) {
  const std::string ok = std::string(200, '(') + "8" + std::string(200, ')');
  EXPECT_EQ(parse_layout(ok).size(), 8);
  EXPECT_EQ(refusal(std::string(100000, '(')),
            "layout expression \"" + std::string(60, '(') +
                "...\" (100000 characters): at position 200 found '(', expected at most 200 levels "
                "of nesting");
  EXPECT_NE(refusal("(" + ok + ")").find("expected at most 200 levels of nesting"), std::string::npos);
}

// Sizes and offsets are int64_t: a layout they do not fit is refused, never
// wrapped around (a size of 2^64 - 2, an offset of -2).
TEST(ParseLayout, RefusesSizesAndOffsetsPastInt64) {
  EXPECT_EQ(refusal("(9223372036854775807,2):(1,1)"),
            "Layout: shape (9223372036854775807,2) has more than 2^63 - 1 coordinates; the "
            "product of the extents must fit a signed 64-bit integer");
  EXPECT_EQ(refusal("(9223372036854775807,2)"), refusal("(9223372036854775807,2):(1,1)"));
  EXPECT_EQ(refusal("(2,2):(9223372036854775807,9223372036854775807)"),
            "Layout: shape (2,2) with stride (9223372036854775807,9223372036854775807) reaches "
            "past the largest offset a signed 64-bit integer holds (the sum of (extent - 1) * "
            "stride, plus one, must be below 2^63)");
  // At the limits, accepted: a size of 2^63 - 2, a cosize of 2^63 - 1.
  EXPECT_EQ(parse_layout("(4611686018427387903,2):(1,4611686018427387903)").size(),
            int64_t{9223372036854775806});
  EXPECT_EQ(parse_layout("(2,2):(4611686018427387903,1)").cosize(), int64_t{4611686018427387905});
  EXPECT_EQ(parse_layout("2:9223372036854775806").cosize(), INT64_MAX);
  EXPECT_NE(refusal("2:9223372036854775807").find("reaches past the largest offset"), std::string::npos);
}

TEST(ParseIntTuple, ReadsTuplesAndRefusesTrailingText) {
  EXPECT_EQ(parse_int_tuple("((2,2),8)"), IntTuple({{2, 2}, 8}));
  EXPECT_EQ(parse_int_tuple("7"), IntTuple(7));
  EXPECT_THROW(parse_int_tuple("(2,2):(1,2)"), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
