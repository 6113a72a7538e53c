// SHA-256 (FIPS 180-4), for the compiled-module cache: the key of an entry is
// the digest of what it was compiled from, and each entry carries the digest
// of its payload so that a damaged file is recognised.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace warpforge::runtime {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, std::size_t bytes);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  Digest finish();  // the digest; the object is spent afterwards

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> pending_{};
  std::size_t pending_bytes_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Digest sha256(std::string_view text);
std::string to_hex(const Digest& digest);

}  // namespace warpforge::runtime
