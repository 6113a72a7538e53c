#include <gtest/gtest.h>

#include "layout_samples.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/coalesce.hpp"
#include "warpforge/layout/composition.hpp"
#include "warpforge/layout/inverse.hpp"

namespace warpforge::layout {
namespace {

TEST(Coalesce, MergesAndDropsModes) {
  EXPECT_EQ(to_string(coalesce(Layout({2, {1, 6}}, {1, {7, 2}}))), "12:1");
  EXPECT_EQ(to_string(coalesce(Layout({4, 2}, {2, 8}))), "8:2");
  EXPECT_EQ(to_string(coalesce(Layout({4, 2}, {2, 16}))), "(4,2):(2,16)");
  EXPECT_EQ(to_string(coalesce(Layout({1, 1}, {3, 5}))), "1:0");
  EXPECT_EQ(to_string(coalesce(Layout({2, 3}, {0, 0}))), "6:0");
}

TEST(Coalesce, PreservesTheFunctionOnManyLayouts) {
  for (const Layout& l : testing::arbitrary_layouts(500, 2)) {
    Layout c = coalesce(l);
    ASSERT_EQ(c.size(), l.size()) << to_string(l);
    ASSERT_LE(c.depth(), 1);
    for (int64_t i = 0; i < l.size(); ++i)
      ASSERT_EQ(c(i), l(i)) << to_string(l) << " -> " << to_string(c);
    // Nothing left to merge: no size-1 mode (unless the layout is 1:0), no
    // neighbours with d1 == s0*d0.
    const auto& s = c.flat_shape();
    const auto& d = c.flat_stride();
    for (size_t k = 0; k < s.size(); ++k) {
      if (s.size() > 1) {
        ASSERT_GT(s[k], 1) << to_string(c);
      }
      if (k > 0) {
        ASSERT_NE(d[k], s[k - 1] * d[k - 1]) << to_string(c);
      }
    }
  }
}

TEST(Composition, MatchesTheCuteDocumentationExample) {
  // CUTLASS "CuTe Layout Algebra", Composition: (6,2):(8,2) o (4,3):(3,1).
  EXPECT_EQ(to_string(composition(Layout({6, 2}, {8, 2}), Layout({4, 3}, {3, 1}))),
            "((2,2),3):((24,2),8)");
  EXPECT_EQ(to_string(composition(Layout(20, 2), Layout({5, 4}, {4, 1}))), "(5,4):(8,2)");
  EXPECT_EQ(to_string(composition(Layout({4, 8}, {8, 1}), Layout(6, 0))), "6:0");
}

TEST(Composition, EvaluatesAsFunctionCompositionOnManyPairs) {
  int composed = 0, refused = 0;
  std::vector<Layout> lefts = testing::arbitrary_layouts(120, 3);
  std::vector<Layout> rights = testing::arbitrary_layouts(120, 4);
  for (const Layout& a : lefts) {
    for (const Layout& b : rights) {
      // B must land inside A's domain, and its modes must not overlap (see
      // composition.hpp).
      if (b.cosize() > a.size() || !is_injective(b)) continue;
      Layout r(1, 0);
      try {
        r = composition(a, b);
      } catch (const LayoutError&) {
        ++refused;
        continue;
      }
      ASSERT_EQ(r.size(), b.size()) << to_string(a) << " o " << to_string(b);
      ASSERT_EQ(r.rank(), b.rank());
      for (int i = 0; i < b.rank(); ++i) ASSERT_EQ(r.mode(i).size(), b.mode(i).size());
      for (int64_t i = 0; i < b.size(); ++i) {
        ASSERT_EQ(r(i), a(b(i))) << to_string(a) << " o " << to_string(b) << " = " << to_string(r);
      }
      ++composed;
    }
  }
  EXPECT_GT(composed, 1000);
  EXPECT_GT(refused, 0);  // the divisibility conditions do bite on this family
}

TEST(Composition, RefusesIndivisibleStridesAndShapes) {
  try {
    composition(Layout({3, 4}, {4, 1}), Layout(2, 2));
    FAIL() << "stride 2 cannot step through a mode of extent 3";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("mode 3:4 and the remaining stride 2"), std::string::npos);
  }
  try {
    composition(Layout({4, 3}, {3, 1}), Layout(3, 1));
    FAIL() << "3 coordinates cannot tile a mode of extent 4";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("3 coordinates do not tile mode 4:3"), std::string::npos);
  }
  EXPECT_THROW(composition(Layout({2, 3}, {3, 1}), Layout(3, 1)), LayoutError);
}

TEST(Composition, ByModeKeepsUntouchedModes) {
  Layout a({8, 6}, {6, 1});
  Layout r = composition(a, std::vector<Layout>{Layout(4, 2)});
  EXPECT_EQ(to_string(r), "(4,6):(12,1)");
  EXPECT_THROW(composition(a, std::vector<Layout>{Layout(2, 1), Layout(2, 1), Layout(2, 1)}),
               LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
