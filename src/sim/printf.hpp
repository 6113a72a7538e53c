// Device printf: a call of vprintf(format, arguments), the CUDA ABI's printf
// (nvcc packs the arguments into a local buffer, each aligned to its size,
// and passes the buffer's generic address). The simulator formats each call
// on the host and hands a warp's lines, in lane order, to one sink.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace warpforge::sim {

class PrintfSink {
 public:
  // `output` receives each thread's formatted text; empty writes to stdout.
  explicit PrintfSink(std::function<void(std::string_view)> output);
  // One warp's printf: its threads' texts, in lane order, with no other
  // warp's text between them (launches run CTAs on several host threads).
  void write(const std::vector<std::string>& texts);

 private:
  std::mutex mutex_;
  std::function<void(std::string_view)> output_;
};

// Formats `format` as C's printf would with the arguments that nvcc packed:
// integers of int width or less take 4 bytes, long/long long/size_t 8,
// floating point is a double (8 bytes, floats promoted), %s and %p a 64-bit
// generic address; each argument aligned to its size. `argument(offset,
// size)` reads the buffer and `string_at(address)` a NUL-terminated string of
// device memory. Throws SimError naming a conversion printf lacks or one the
// simulator does not format (%n, long double).
struct FormattedPrintf {
  std::string text;
  int arguments = 0;  // what CUDA's printf returns: the arguments it read
};
FormattedPrintf format_device_printf(
    std::string_view format,
    const std::function<std::uint64_t(std::uint64_t, std::uint32_t)>& argument,
    const std::function<std::string(std::uint64_t)>& string_at);

}  // namespace warpforge::sim
