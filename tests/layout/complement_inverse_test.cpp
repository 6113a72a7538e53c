#include <gtest/gtest.h>

#include <set>

#include "layout_samples.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/complement.hpp"
#include "warpforge/layout/inverse.hpp"

namespace warpforge::layout {
namespace {

TEST(Complement, MatchesHandComputedExamples) {
  EXPECT_EQ(to_string(complement(Layout(4, 1), 24)), "6:4");
  EXPECT_EQ(to_string(complement(Layout(6, 4), 24)), "4:1");
  EXPECT_EQ(to_string(complement(Layout({2, 2}, {1, 6}), 24)), "(3,2):(2,12)");
  EXPECT_EQ(to_string(complement(Layout({4, 6}, {1, 4}))), "1:0");
  // M not a multiple of the span: the last mode rounds up.
  EXPECT_EQ(to_string(complement(Layout(2, 2), 5)), "(2,2):(1,4)");
}

TEST(Complement, IsDisjointAndCoversOnManyLayouts) {
  for (const Layout& a : testing::injective_layouts(400, 5)) {
    for (int64_t extra : {1, 2, 3}) {
      int64_t cotarget = a.cosize() * extra;
      Layout c = complement(a, cotarget);
      Layout both = make_layout({a, c});
      // (A, A*) is a bijection onto [0, size) with size >= M: the images are
      // disjoint apart from offset 0, and together they reach every offset below M.
      ASSERT_TRUE(is_bijective(both)) << to_string(a) << " with " << to_string(c);
      ASSERT_GE(both.size(), cotarget);
      ASSERT_EQ(both.size() % a.size(), 0);
      std::set<int64_t> image;
      for (int64_t i = 0; i < a.size(); ++i) image.insert(a(i));
      for (int64_t j = 1; j < c.size(); ++j) ASSERT_FALSE(image.count(c(j))) << to_string(a);
      // The complement is ordered: its offsets increase with its index.
      for (int64_t j = 1; j < c.size(); ++j) ASSERT_GT(c(j), c(j - 1)) << to_string(c);
    }
  }
}

TEST(Complement, RefusesOverlappingModesAndBadCotargets) {
  try {
    complement(Layout({2, 2}, {2, 3}), 12);
    FAIL() << "overlapping modes have no complement";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("stride 3 is not a multiple of 4"), std::string::npos);
  }
  EXPECT_THROW(complement(Layout(4, 1), 0), LayoutError);
}

TEST(Injectivity, DetectsOverlapsExactly) {
  EXPECT_TRUE(is_injective(Layout({4, 8}, {8, 1})));
  EXPECT_TRUE(is_injective(Layout({3, 2}, {2, 3})));  // not nested, still injective
  EXPECT_FALSE(is_injective(Layout({2, 2}, {1, 1})));
  EXPECT_FALSE(is_injective(Layout({4, 2}, {1, 0})));
  EXPECT_TRUE(is_injective(Layout({4, 1}, {1, 0})));
  // Against brute force on a broad family.
  int injective = 0;
  for (const Layout& l : testing::arbitrary_layouts(500, 6)) {
    std::set<int64_t> seen;
    for (int64_t i = 0; i < l.size(); ++i) seen.insert(l(i));
    bool expected = static_cast<int64_t>(seen.size()) == l.size();
    ASSERT_EQ(is_injective(l), expected) << to_string(l);
    injective += expected;
  }
  EXPECT_GT(injective, 50);
}

TEST(RightInverse, RoundTripsOnManyLayouts) {
  for (const Layout& l : testing::arbitrary_layouts(500, 7)) {
    Layout r = right_inverse(l);
    for (int64_t i = 0; i < r.size(); ++i)
      ASSERT_EQ(l(r(i)), i) << to_string(l) << " " << to_string(r);
    // A bijection is inverted in full.
    if (is_bijective(l)) {
      ASSERT_EQ(r.size(), l.size()) << to_string(l);
    }
  }
  EXPECT_EQ(to_string(right_inverse(Layout({4, 8}, {8, 1}))), "(8,4):(4,1)");
}

TEST(LeftInverse, RoundTripsOnManyInjectiveLayouts) {
  for (const Layout& l : testing::injective_layouts(400, 8)) {
    Layout r = left_inverse(l);
    for (int64_t i = 0; i < l.size(); ++i)
      ASSERT_EQ(r(l(i)), i) << to_string(l) << " " << to_string(r);
  }
  EXPECT_THROW(left_inverse(Layout({2, 2}, {1, 1})), LayoutError);
  EXPECT_THROW(left_inverse(Layout({3, 2}, {2, 3})), LayoutError);  // injective, no complement
}

TEST(IndexOf, FindsEveryImageAndNothingElse) {
  for (const Layout& l : testing::injective_layouts(300, 9)) {
    std::vector<int64_t> preimage(l.cosize(), -1);
    for (int64_t i = 0; i < l.size(); ++i) preimage[l(i)] = i;
    for (int64_t offset = 0; offset < l.cosize(); ++offset) {
      std::optional<int64_t> found = index_of(l, offset);
      if (preimage[offset] < 0) {
        ASSERT_FALSE(found.has_value()) << to_string(l) << " offset " << offset;
      } else {
        ASSERT_EQ(found, preimage[offset]) << to_string(l) << " offset " << offset;
      }
    }
    ASSERT_FALSE(index_of(l, l.cosize()).has_value());
  }
  EXPECT_THROW(index_of(Layout({2, 2}, {1, 1}), 1), LayoutError);
}

TEST(CoordinateOf, GivesTheNaturalCoordinate) {
  Layout l({{2, 4}, 3}, {{1, 24}, 4});  // offsets c0 + 24 c1 + 4 c2
  EXPECT_EQ(coordinate_of(l, 1 + 24 * 3 + 4 * 2), (IntTuple{{1, 3}, 2}));
  EXPECT_FALSE(coordinate_of(l, 2).has_value());  // c0 only reaches 0 and 1
  for (int64_t i = 0; i < l.size(); ++i) EXPECT_EQ(coordinate_of(l, l(i)), l.coordinate(i));
}

}  // namespace
}  // namespace warpforge::layout
