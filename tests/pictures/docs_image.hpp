// The committed pictures under docs/img, which scripts/draw-docs-pictures.sh
// draws: the tests compare them with what the code draws now.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace warpforge::pictures::testing {

inline std::filesystem::path docs_dir() {
  return std::filesystem::path(WARPFORGE_SOURCE_DIR) / "docs";
}

// The text of docs/img/<name>, or "" when the file is missing.
inline std::string docs_image(const std::string& name) {
  std::ifstream in(docs_dir() / "img" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace warpforge::pictures::testing
