// The .npy format, version 1.0 (numpy.lib.format): the magic "\x93NUMPY",
// version 1 0, a little-endian u16 header length, then an ASCII dict
// {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with spaces
// and ended by '\n' so that the data starts on a multiple of 64 bytes.
#include "npy_file.hpp"

#include <fstream>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::cli {

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
  std::string dims;  // "2, 3"; a 1-tuple keeps its comma: "2,"
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t prefix = 10;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot open '" + path.string() + "' for writing");
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  const auto length = static_cast<std::uint16_t>(header.size());
  const char le[2] = {static_cast<char>(length & 0xFF), static_cast<char>(length >> 8)};
  out.write(le, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw Error("writing '" + path.string() + "' failed");
}

}  // namespace warpforge::cli
