// Reading a PTX file for the commands that take one (check, fmt).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::cli {

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "' for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace warpforge::cli
