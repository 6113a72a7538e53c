// EXPECT_CONTAINS(text, part): a refusal's or a description's text names
// `part`, the failure showing both (the ops tests' checks of messages; gmock's
// HasSubstr is not built here).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace warpforge::ops::testing {

inline void EXPECT_CONTAINS(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' lacks '" << part << "'";
}

}  // namespace warpforge::ops::testing
