#include <gtest/gtest.h>

#include "layout_samples.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/layout.hpp"
#include "warpforge/layout/table.hpp"

namespace warpforge::layout {
namespace {

TEST(IntTuple, MeasuresTrees) {
  IntTuple t{{2, 2}, 8};
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(IntTuple(5).depth(), 0);
  EXPECT_EQ(product(t), 32);
  EXPECT_EQ(flatten(t), (std::vector<int64_t>{2, 2, 8}));
  EXPECT_TRUE(congruent(t, IntTuple{{1, 4}, 16}));
  EXPECT_FALSE(congruent(t, IntTuple{4, 8}));
  EXPECT_EQ(to_string(t), "((2,2),8)");
  EXPECT_EQ(product(IntTuple()), 1);
}

TEST(IntTuple, RefusesBadAccessWithTheValues) {
  IntTuple t{4, 8};
  try {
    (void)t.value();
    FAIL() << "value() of a tuple must throw";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("(4,8) is a tuple"), std::string::npos);
  }
  EXPECT_THROW((void)t[2], LayoutError);
  EXPECT_THROW((void)t[-1], LayoutError);
}

TEST(Layout, MeasuresAndPrints) {
  Layout l({{2, 4}, 8}, {{1, 16}, 2});
  EXPECT_EQ(to_string(l), "((2,4),8):((1,16),2)");
  EXPECT_EQ(l.rank(), 2);
  EXPECT_EQ(l.depth(), 2);
  EXPECT_EQ(l.size(), 64);
  EXPECT_EQ(l.cosize(), 1 + 1 * 1 + 3 * 16 + 7 * 2);
  EXPECT_EQ(to_string(l.mode(0)), "(2,4):(1,16)");
  EXPECT_EQ(to_string(column_major({4, 8})), "(4,8):(1,4)");
  EXPECT_EQ(to_string(row_major({4, {2, 8}})), "(4,(2,8)):(16,(8,1))");
  EXPECT_EQ(to_string(Layout(8, 2)), "8:2");
}

TEST(Layout, EvaluatesEveryCoordinateForm) {
  Layout l({{2, 4}, 8}, {{1, 16}, 2});
  // Natural coordinate, partly flattened coordinate, 1-D index: the same point.
  EXPECT_EQ(l(IntTuple{{1, 2}, 5}), 1 + 32 + 10);
  EXPECT_EQ(l(IntTuple{5, 5}), 1 + 32 + 10);  // 5 in (2,4) is (1,2)
  EXPECT_EQ(l(5 + 8 * 5), 1 + 32 + 10);
  EXPECT_EQ(l(5, 5), 1 + 32 + 10);
  EXPECT_EQ(l.coordinate(45), (IntTuple{{1, 2}, 5}));
}

TEST(Layout, NaturalCoordinatesRoundTripOnManyLayouts) {
  int checked = 0;
  for (const Layout& l : testing::arbitrary_layouts(300, 1)) {
    for (int64_t i = 0; i < l.size(); ++i) {
      IntTuple c = l.coordinate(i);
      ASSERT_TRUE(congruent(c, l.shape())) << to_string(l);
      ASSERT_EQ(l(c), l(i)) << to_string(l) << " at " << i;
      ++checked;
    }
  }
  EXPECT_GT(checked, 3000);
}

TEST(Layout, RefusesMalformedLayoutsWithTheValues) {
  try {
    Layout({4, 8}, {1, {2, 2}});
    FAIL() << "incongruent layout must throw";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("(4,8) and stride (1,(2,2)) are not congruent"),
              std::string::npos);
  }
  EXPECT_THROW(Layout({4, 0}, {1, 4}), LayoutError);
  EXPECT_THROW(Layout({4, 8}, {1, -4}), LayoutError);
}

TEST(Layout, RefusesOutOfRangeCoordinates) {
  Layout l = column_major({4, 8});
  EXPECT_THROW(l(32), LayoutError);
  EXPECT_THROW(l(-1), LayoutError);
  EXPECT_THROW(l(4, 0), LayoutError);
  EXPECT_THROW(l(IntTuple{1, 2, 3}), LayoutError);
  EXPECT_THROW(l.coordinate(32), LayoutError);
  try {
    l(IntTuple{{1, 1}, 0});
    FAIL() << "a tuple coordinate for a leaf mode must throw";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("((1,1),0) is not in shape (4,8)"), std::string::npos);
  }
}

TEST(Layout, ConcatenatesModes) {
  Layout l = make_layout({Layout(4, 2), Layout({2, 2}, {1, 8})});
  EXPECT_EQ(to_string(l), "(4,(2,2)):(2,(1,8))");
}

TEST(Table, DrawsRankTwoAndRankOne) {
  EXPECT_EQ(to_table(Layout({2, 3}, {3, 1})),
            "(2,3):(3,1)\n"
            "    0 1 2\n"
            "  +------\n"
            "0 | 0 1 2\n"
            "1 | 3 4 5\n");
  EXPECT_EQ(to_table(Layout(3, 4)),
            "3:4\n"
            "    0\n"
            "  +--\n"
            "0 | 0\n"
            "1 | 4\n"
            "2 | 8\n");
}

TEST(Table, RefusesRankThree) {
  EXPECT_THROW(to_table(column_major({2, 2, 2})), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
