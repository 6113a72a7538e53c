#include "mufu_table.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::sim {

namespace {

class BitReader {
 public:
  explicit BitReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  unsigned bit() {
    if (at_ >= bytes_.size() * 8) throw SimError("mufu table: the bit stream ends early");
    const unsigned b = bytes_[at_ / 8] >> (7 - at_ % 8) & 1u;
    ++at_;
    return b;
  }
  std::uint64_t unary() {  // ones before a zero
    std::uint64_t n = 0;
    while (bit()) ++n;
    return n;
  }
  std::uint64_t bits(int k) {
    std::uint64_t v = 0;
    for (int i = 0; i < k; ++i) v = v << 1 | bit();
    return v;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

std::uint32_t u32_at(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

}  // namespace

MufuTable decode_mufu_table(std::span<const std::uint8_t> encoded, std::uint32_t expected) {
  if (encoded.size() < 16 || std::memcmp(encoded.data(), "WFMC", 4) != 0 || encoded[4] != 2)
    throw SimError("mufu table: not a version-2 WFMC table");
  const int k = encoded[5];
  MufuTable t;
  t.interval_bits = encoded[6];
  const std::uint32_t entries = u32_at(encoded, 8), nonzero = u32_at(encoded, 12);
  if (k > 31 || t.interval_bits > 16)
    throw SimError("mufu table: Rice parameter " + std::to_string(k) + " (at most 31), " +
                   std::to_string(t.interval_bits) + " interval bits (at most 16)");
  if (entries != expected || (entries >> t.interval_bits) << t.interval_bits != entries)
    throw SimError("mufu table: " + std::to_string(entries) + " entries, not " +
                   std::to_string(expected));
  const std::size_t intervals = std::size_t{1} << t.interval_bits, stream = 16 + 24 * intervals;
  if (encoded.size() < stream) throw SimError("mufu table: the coefficients end early");
  t.coefficients.resize(intervals);
  std::memcpy(t.coefficients.data(), encoded.data() + 16,
              24 * intervals);  // little-endian IEEE doubles
  t.residual.assign(entries, 0);
  BitReader in(encoded.subspan(stream));
  std::uint64_t at = 0;
  for (std::uint32_t i = 0; i < nonzero; ++i) {
    at += in.unary() << k | in.bits(k);
    const bool negative = in.bit();
    const std::uint64_t magnitude = in.unary() + 1;
    if (at >= entries || magnitude > 127)
      throw SimError("mufu table: entry " + std::to_string(at) + " of " + std::to_string(entries) +
                     " with magnitude " + std::to_string(magnitude));
    t.residual[at] = static_cast<std::int8_t>(negative ? -static_cast<int>(magnitude)
                                                       : static_cast<int>(magnitude));
    ++at;
  }
  return t;
}

float MufuTable::result(std::uint32_t i, double F) const {
  const std::uint32_t per = static_cast<std::uint32_t>(residual.size()) >> interval_bits;
  const double t = static_cast<double>(i % per) / per * 2.0 - 1.0;
  const auto& c = coefficients[i / per];
  const double e = (c[0] + c[1] * t) + c[2] * (t * t);
  const double unit = F < 1.0 ? 0x1p24 : 0x1p23;
  const double y = std::floor(F * unit + e + 0.5) + residual[i];
  return static_cast<float>(y / unit);
}

}  // namespace warpforge::sim
