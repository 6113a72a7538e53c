#include "npy_file.hpp"

#include <fstream>

#include "warpforge/error.hpp"

namespace warpforge::cli {

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape,
                       bool fortran_order) {
  std::string dims;  // Python's tuple: (), (5,), (2, 3)
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': " + (fortran_order ? "True" : "False") + ", 'shape': (" +
                     dims + "), }";
  // magic (6) + version (2) + length (2) + dict + spaces + '\n': a multiple of 64 bytes.
  dict.append(63 - (10 + dict.size()) % 64, ' ');
  dict += '\n';
  const auto length = static_cast<std::uint16_t>(dict.size());
  const char prefix[10] = {'\x93',
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<char>(length & 0xFF),
                           static_cast<char>(length >> 8)};
  return std::string(prefix, 10) + dict;
}

void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes) {
  std::int64_t count = 1;
  for (auto e : shape) count *= e;
  const std::size_t digits = descr.find_first_of("0123456789");
  const std::size_t item =
      digits == std::string_view::npos ? 0 : std::stoul(std::string(descr.substr(digits)));
  if (item == 0 || static_cast<std::size_t>(count) * item != bytes)
    throw Error("write_npy " + path.string() + ": " + std::to_string(bytes) +
                " bytes do not hold " + std::to_string(count) + " elements of '" +
                std::string(descr) + "'");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string header = npy_header(std::string(descr), shape, false);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw Error("could not write " + path.string());
}

}  // namespace warpforge::cli
