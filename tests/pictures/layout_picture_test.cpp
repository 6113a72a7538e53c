// Every fragment atom drawn as SVG and read back: one cell per element of
// the tile, each naming the thread and value that the layout itself says
// hold that element; and the terminal form of the same grid.
#include <gtest/gtest.h>

#include <set>

#include "pictures/atom_catalogue.hpp"
#include "pictures/docs_image.hpp"
#include "pictures/layout_grids.hpp"
#include "pictures/xml_reader.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/parse.hpp"

namespace warpforge::pictures {
namespace {

using layout::Axis;
using testing::parse_xml;

int64_t number(const testing::XmlElement& e, const std::string& key) {
  return std::stoll(e.attribute(key));
}

void expect_svg_matches(const std::string& name) {
  SCOPED_TRACE(name);
  const layout::Fragment f = find_atom(name);
  const layout::NamedLayout& l = f.layout;
  const int64_t rows = l.extent(Axis::row), cols = l.extent(Axis::col);
  const auto svg = parse_xml(to_svg(thread_value_grid(l)));
  const auto cells = svg.all("g", "cell");
  ASSERT_EQ(static_cast<int64_t>(cells.size()), rows * cols);
  ASSERT_EQ(static_cast<int64_t>(cells.size()), l.layout().size()) << "one cell per element";
  std::set<std::pair<int64_t, int64_t>> owners, places;
  for (const auto* cell : cells) {
    const int64_t row = number(*cell, "data-row"), col = number(*cell, "data-col");
    const layout::AxisPoint owner = l.inverse({{Axis::row, row}, {Axis::col, col}});
    const int64_t thread =
        owner.at(Axis::lane) + (owner.count(Axis::warp) ? 32 * owner.at(Axis::warp) : 0);
    const int64_t value = owner.at(Axis::value);
    EXPECT_EQ(number(*cell, "data-thread"), thread) << "row " << row << " col " << col;
    EXPECT_EQ(number(*cell, "data-value"), value) << "row " << row << " col " << col;
    ASSERT_EQ(cell->all("text").size(), 1u);
    EXPECT_EQ(cell->all("text")[0]->text,
              "T" + std::to_string(thread) + "V" + std::to_string(value));
    places.insert({row, col});
    owners.insert({thread, value});
  }
  EXPECT_EQ(static_cast<int64_t>(places.size()), rows * cols) << "every element drawn once";
  EXPECT_EQ(static_cast<int64_t>(owners.size()), rows * cols) << "every (thread, value) once";
}

TEST(LayoutPicture, EveryAtomReadsBackAsItsLayout) {
  const auto atoms = atom_catalogue();
  ASSERT_EQ(atoms.size(), 24u);
  for (const AtomEntry& e : atoms) expect_svg_matches(e.name);
  expect_svg_matches("wgmma.m64n128k16.D");  // an N the list does not name
}

TEST(LayoutPicture, CatalogueHasEveryAtomTheIssueNames) {
  std::set<std::string> names;
  for (const AtomEntry& e : atom_catalogue()) names.insert(e.name);
  for (const char* want :
       {"mma.m16n8k8.A",     "mma.m16n8k8.B",     "mma.m16n8k8.C",     "mma.m16n8k16.A",
        "mma.m16n8k16.B",    "mma.m16n8k16.C",    "mma.m16n8k32.A",    "mma.m16n8k32.B",
        "mma.m16n8k32.C",    "ldmatrix.x1",       "ldmatrix.x2",       "ldmatrix.x4",
        "ldmatrix.x1.trans", "ldmatrix.x2.trans", "ldmatrix.x4.trans", "wgmma.m64k16.A",
        "wgmma.m64k32.A",    "mfma.32x32x8.A",    "mfma.32x32x8.B",    "mfma.32x32x8.C"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
}

TEST(LayoutPicture, UnknownAtomIsRefusedWithTheNames) {
  try {
    find_atom("mma.m16n8k4.A");
    FAIL() << "accepted";
  } catch (const LayoutError& e) {
    EXPECT_NE(
        std::string(e.what()).find("no atom named 'mma.m16n8k4.A'; the atoms are: mma.m16n8k8.A"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(find_atom("wgmma.m64n12k16.D"), LayoutError);  // N not a multiple of 8
}

TEST(LayoutPicture, TerminalGridOfTheM16n8k16Accumulator) {
  const Grid grid = thread_value_grid(find_atom("mma.m16n8k16.C").layout);
  const std::string plain = to_terminal(grid, false);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  // Row 9 is groupID 1 (lanes 4..7) with c2, c3: T4V2 T4V3 T5V2 ... T7V3.
  EXPECT_NE(plain.find("\n 9     T4V2    T4V3    T5V2    T5V3    T6V2    T6V3    T7V2    T7V3\n"),
            std::string::npos)
      << plain;
  const std::string coloured = to_terminal(grid, true);
  EXPECT_NE(coloured.find("\x1b[30;48;5;"), std::string::npos);
  EXPECT_NE(coloured.find("T7V3\x1b[0m"), std::string::npos);
}

TEST(LayoutPicture, ExpressionAsOffsetsAndAsThreadValueLayout) {
  const layout::Layout l = layout::parse_layout("((8,4),(2,2)):((4,1),(32,64))");
  const auto offset_svg = parse_xml(to_svg(offset_grid(l)));
  const auto offsets = offset_svg.all("g", "cell");
  ASSERT_EQ(offsets.size(), 128u);
  for (const auto* cell : offsets) {
    EXPECT_EQ(number(*cell, "data-offset"),
              l(number(*cell, "data-row"), number(*cell, "data-col")));
  }
  // The same layout read as (thread, value) -> row + 32 * col of a 32 x 4 tile.
  const layout::NamedLayout tv("tv", {Axis::lane, Axis::value}, l,
                               {{Axis::row, 32}, {Axis::col, 4}});
  const auto tv_svg = parse_xml(to_svg(thread_value_grid(tv)));
  for (const auto* cell : tv_svg.all("g", "cell")) {
    const int64_t offset = number(*cell, "data-row") + 32 * number(*cell, "data-col");
    EXPECT_EQ(l(layout::IntTuple{number(*cell, "data-thread"), number(*cell, "data-value")}),
              offset);
  }
  EXPECT_THROW(offset_grid(layout::parse_layout("(2,2,2):(1,2,4)")), LayoutError);
}

TEST(LayoutPicture, NonBijectiveLayoutMarksSharedAndEmptyCells) {
  // 4 threads, 2 values, into a 4 x 4 tile: value strides 0 put both values
  // of a thread on one element, and half the tile is held by nobody.
  const layout::NamedLayout l("broadcast", {Axis::lane, Axis::value},
                              layout::Layout({4, 2}, {1, 0}), {{Axis::row, 4}, {Axis::col, 4}});
  const Grid grid = thread_value_grid(l);
  EXPECT_EQ(grid.at(0, 0).label, "T0V0+1");
  EXPECT_EQ(grid.at(0, 1).label, "-");
  EXPECT_EQ(grid.notes.back(), "12 elements held by no thread, 4 by several (+n: n more owners)");
}

TEST(LayoutPicture, ReadmePictureIsWhatTheAtomDraws) {
  EXPECT_EQ(testing::docs_image("mma-m16n8k16-a.svg"),
            to_svg(thread_value_grid(find_atom("mma.m16n8k16.A").layout)))
      << "run scripts/draw-docs-pictures.sh";
}

}  // namespace
}  // namespace warpforge::pictures
