#include "npy_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "warpforge/error.hpp"

namespace warpforge::cli {
namespace {

std::vector<std::int64_t> c_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

bool strides_match(const ops::HostTensor& t, const std::vector<std::int64_t>& want) {
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    if (t.shape[i] > 1 && t.strides[i] != want[i]) return false;
  return true;
}

void write_file(const std::filesystem::path& path, const std::string& header, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw Error("could not write " + path.string());
}

}  // namespace

void prepare_save_directory(const std::string& flag, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (dir.empty())
    throw Error(flag + " '' refused: name a directory (created when absent) for the .npy files");
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    throw Error(flag + " '" + dir.string() +
                "' refused: it exists and is not a directory; name a directory (created when "
                "absent) so that no file is overwritten");
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(flag + " '" + dir.string() + "' refused: cannot create the directory: " +
                ec.message());
  // Permissions do not say it (root passes every check; /proc and read-only
  // mounts refuse anyway): write a file and remove it.
  const fs::path probe = dir / ".warpforge-write-test";
  if (!std::ofstream(probe, std::ios::binary | std::ios::trunc).put('\0').flush())
    throw Error(flag + " '" + dir.string() + "' refused: cannot write a file in it: " +
                std::strerror(errno));
  fs::remove(probe, ec);
}

std::string npy_descr(runtime::DType dtype) {
  switch (dtype) {
    case runtime::DType::f32:
      return "<f4";
    case runtime::DType::f16:
      return "<f2";
    case runtime::DType::bf16:
      return "<u2";
    default:
      throw Error(".npy: dtype " + std::string(runtime::name(dtype)) +
                  " is not written; f32, f16 or bf16");
  }
}

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape,
                       bool fortran_order) {
  // Python's tuple spelling: (), (3,), (2, 3).
  std::string tuple = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    tuple += (i ? ", " : "") + std::to_string(shape[i]);
  tuple += shape.size() == 1 ? ",)" : ")";
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                     ", 'shape': " + tuple + ", }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' = a multiple of 64.
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  const auto length = static_cast<std::uint16_t>(dict.size());
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(length & 0xff);
  header += static_cast<char>(length >> 8);
  return header + dict;
}

void write_npy(const std::filesystem::path& path, const ops::HostTensor& t) {
  const std::size_t element = static_cast<std::size_t>(runtime::bits(t.dtype) / 8);
  std::int64_t count = 1;
  for (auto e : t.shape) count *= e;
  const bool c_order = strides_match(t, c_strides(t.shape));
  std::vector<std::int64_t> fortran(t.shape.size(), 1);
  for (std::size_t i = 1; i < t.shape.size(); ++i) fortran[i] = fortran[i - 1] * t.shape[i - 1];
  const bool as_fortran = t.shape.size() == 2 && !c_order && strides_match(t, fortran);

  // The elements in the file's order (the last index fastest, or the first
  // for Fortran order), each read at the tensor's strides.
  std::vector<std::uint8_t> data(static_cast<std::size_t>(count) * element);
  const std::size_t rank = t.shape.size();
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t source = 0, rest = i;
    for (std::size_t n = 0; n < rank; ++n) {
      const std::size_t d = as_fortran ? n : rank - 1 - n;
      source += (rest % t.shape[d]) * t.strides[d];
      rest /= t.shape[d];
    }
    std::memcpy(&data[static_cast<std::size_t>(i) * element],
                &t.bytes[static_cast<std::size_t>(source) * element], element);
  }
  write_file(path, npy_header(npy_descr(t.dtype), t.shape, as_fortran), data.data(), data.size());
}

void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes) {
  std::int64_t count = 1;
  for (auto e : shape) count *= e;
  const std::size_t digits = descr.find_first_of("0123456789");
  const std::size_t item =
      digits == std::string_view::npos ? 0 : std::stoul(std::string(descr.substr(digits)));
  if (item == 0 || static_cast<std::size_t>(count) * item != bytes)
    throw Error("write_npy " + path.string() + ": " + std::to_string(bytes) + " bytes do not hold " +
                std::to_string(count) + " elements of '" + std::string(descr) + "'");
  write_file(path, npy_header(std::string(descr), shape, false), data, bytes);
}

}  // namespace warpforge::cli
