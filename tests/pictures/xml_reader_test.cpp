// The test's XML reader refuses what is not well-formed, so the picture
// tests that read SVG back can fail.
#include <gtest/gtest.h>

#include "pictures/xml_reader.hpp"

namespace warpforge::pictures::testing {
namespace {

TEST(XmlReader, ReadsElementsAttributesAndEntities) {
  const XmlElement root = parse_xml(
      "<?xml version=\"1.0\"?>\n<svg a=\"1\"><g class=\"cell\" "
      "data-x=\"&lt;3&amp;\"><text>T0V1</text></g>"
      "<rect/></svg>\n");
  EXPECT_EQ(root.name, "svg");
  ASSERT_EQ(root.all("g", "cell").size(), 1u);
  EXPECT_EQ(root.all("g", "cell")[0]->attribute("data-x"), "<3&");
  EXPECT_EQ(root.all("text")[0]->text, "T0V1");
  EXPECT_EQ(root.all("rect").size(), 1u);
}

TEST(XmlReader, RefusesMalformedDocuments) {
  for (const char* bad :
       {"<svg><g></svg>", "<svg a=1/>", "<svg a=\"1\" a=\"2\"/>", "<svg>&nbsp;</svg>",
        "<svg/><svg/>", "<svg>", "<svg a=\"<\"/>", "<svg>1 < 2</svg>"}) {
    EXPECT_THROW(parse_xml(bad), std::runtime_error) << bad;
  }
}

}  // namespace
}  // namespace warpforge::pictures::testing
