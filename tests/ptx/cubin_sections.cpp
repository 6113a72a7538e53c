#include "ptx/cubin_sections.hpp"

#include <cstring>
#include <stdexcept>

namespace warpforge::testing {
namespace {

// ELF64 layout (System V ABI, "ELF Header" and "Sections").
constexpr std::size_t kShOff = 0x28, kShEntSize = 0x3a, kShNum = 0x3c, kShStrNdx = 0x3e;
constexpr std::uint32_t kNoBits = 8, kSymTab = 2;
// ptxas's type for .nv_debug.shared (relocatable code that uses shared
// memory): in the processor-specific range, and like SHT_NOBITS without file data.
constexpr std::uint32_t kCudaDebugSharedNoBits = 0x7000000a;

template <typename T>
T read_at(const std::vector<std::uint8_t>& b, std::size_t at) {
  if (at + sizeof(T) > b.size()) throw std::runtime_error("cubin: read past the end of the file");
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

std::string c_string(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::string out;
  while (at < b.size() && b[at]) out += static_cast<char>(b[at++]);
  return out;
}

struct SectionHeader {
  std::uint32_t name, type;
  std::uint64_t offset, size, link, entsize;
};

}  // namespace

Cubin read_cubin(const std::vector<std::uint8_t>& b) {
  if (b.size() < 64 || std::memcmp(b.data(),
                                   "\x7f"
                                   "ELF\x02\x01",
                                   6) != 0)
    throw std::runtime_error("cubin: not a little-endian ELF64 file");
  auto shoff = read_at<std::uint64_t>(b, kShOff);
  auto entsize = read_at<std::uint16_t>(b, kShEntSize);
  auto count = read_at<std::uint16_t>(b, kShNum);
  auto strndx = read_at<std::uint16_t>(b, kShStrNdx);
  std::vector<SectionHeader> headers;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t h = shoff + i * entsize;
    headers.push_back({read_at<std::uint32_t>(b, h), read_at<std::uint32_t>(b, h + 4),
                       read_at<std::uint64_t>(b, h + 24), read_at<std::uint64_t>(b, h + 32),
                       read_at<std::uint32_t>(b, h + 40), read_at<std::uint64_t>(b, h + 56)});
  }
  if (strndx >= headers.size()) throw std::runtime_error("cubin: no section-name table");
  Cubin cubin;
  for (const auto& h : headers) {
    std::string name = c_string(b, headers[strndx].offset + h.name);
    auto& data = cubin.sections[name];
    if (h.type != kNoBits && h.type != kCudaDebugSharedNoBits) {
      if (h.offset + h.size > b.size())
        throw std::runtime_error("cubin: section " + name + " past the end");
      data.assign(b.begin() + static_cast<std::ptrdiff_t>(h.offset),
                  b.begin() + static_cast<std::ptrdiff_t>(h.offset + h.size));
    }
    if (h.type == kSymTab && h.entsize && h.link < headers.size()) {
      for (std::size_t s = 0; s < h.size / h.entsize; ++s) {
        std::size_t entry = h.offset + s * h.entsize;
        if (entry + h.entsize > b.size() || h.entsize < 4)
          throw std::runtime_error("cubin: symbol past the end");
        Symbol sym;
        sym.name = c_string(b, headers[h.link].offset + read_at<std::uint32_t>(b, entry));
        sym.fields.assign(b.begin() + static_cast<std::ptrdiff_t>(entry + 4),
                          b.begin() + static_cast<std::ptrdiff_t>(entry + h.entsize));
        cubin.symbols.push_back(std::move(sym));
      }
    }
  }
  return cubin;
}

}  // namespace warpforge::testing
