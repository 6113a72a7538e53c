// A reader of NumPy .npy files written independently of tools/npy_file.cpp,
// to check what it writes: the header is parsed field by field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace warpforge::cli::testing {

struct NpyFile {
  int major = 0, minor = 0;
  std::size_t header_bytes = 0;  // magic through '\n': where the data starts
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;
};

inline std::string field(const std::string& dict, const std::string& key) {
  const auto at = dict.find("'" + key + "': ");
  if (at == std::string::npos) throw std::runtime_error("no " + key + " in " + dict);
  const auto start = at + key.size() + 4;
  const char open = dict[start];
  const auto end = open == '('    ? dict.find(')', start) + 1
                   : open == '\'' ? dict.find('\'', start + 1) + 1
                                  : dict.find(',', start);
  return dict.substr(start, end - start);
}

inline NpyFile read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::string(bytes.begin(), bytes.begin() + 6) != "\x93NUMPY")
    throw std::runtime_error(path.string() + ": no .npy magic");
  NpyFile f;
  f.major = bytes[6];
  f.minor = bytes[7];
  const std::size_t length = bytes[8] | (bytes[9] << 8);
  f.header_bytes = 10 + length;
  const std::string dict(bytes.begin() + 10, bytes.begin() + static_cast<long>(f.header_bytes));
  const std::string descr = field(dict, "descr");
  f.descr = descr.substr(1, descr.size() - 2);
  f.fortran_order = field(dict, "fortran_order") == "True";
  std::string shape = field(dict, "shape");
  for (std::size_t i = 1; i < shape.size();) {
    const auto comma = shape.find_first_of(",)", i);
    const std::string number = shape.substr(i, comma - i);
    if (number.find_first_not_of(' ') != std::string::npos) f.shape.push_back(std::stoll(number));
    i = comma + 1;
    if (shape[comma] == ')') break;
  }
  if (dict.back() != '\n')
    throw std::runtime_error(path.string() + ": header does not end in a newline");
  f.data.assign(bytes.begin() + static_cast<long>(f.header_bytes), bytes.end());
  return f;
}

}  // namespace warpforge::cli::testing
