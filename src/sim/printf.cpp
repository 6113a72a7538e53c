#include "printf.hpp"

#include <cstdio>
#include <cstring>

#include "execute.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {

PrintfSink::PrintfSink(std::function<void(std::string_view)> output) : output_(std::move(output)) {}

void PrintfSink::write(const std::vector<std::string>& texts) {
  std::lock_guard lock(mutex_);
  for (const std::string& t : texts) {
    if (output_) {
      output_(t);
    } else {
      std::fwrite(t.data(), 1, t.size(), stdout);
    }
  }
  if (!output_) std::fflush(stdout);
}

namespace {

// snprintf of one conversion whose specification is `spec` ("%-08.3f").
template <class T>
std::string printf_one(const std::string& spec, T value) {
  const int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, spec.c_str(), value);
  return out;
}

}  // namespace

FormattedPrintf format_device_printf(
    std::string_view format,
    const std::function<std::uint64_t(std::uint64_t, std::uint32_t)>& argument,
    const std::function<std::string(std::uint64_t)>& string_at) {
  std::string out;
  int arguments = 0;
  std::uint64_t offset = 0;  // into the argument buffer
  const auto next = [&](std::uint32_t size) {
    ++arguments;
    offset = (offset + size - 1) / size * size;
    const std::uint64_t v = argument(offset, size);
    offset += size;
    return v;
  };
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    const std::size_t start = i++;
    if (i < format.size() && format[i] == '%') {
      out += '%';
      continue;
    }
    std::string spec = "%";
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos)
      spec += format[i++];
    // Width and precision, `*` taking an int argument.
    for (int part = 0; part < 2; ++part) {
      if (part == 1) {
        if (i >= format.size() || format[i] != '.') break;
        spec += format[i++];
      }
      if (i < format.size() && format[i] == '*') {
        spec += std::to_string(static_cast<std::int32_t>(next(4)));
        ++i;
      }
      while (i < format.size() && format[i] >= '0' && format[i] <= '9') spec += format[i++];
    }
    std::string length;
    while (i < format.size() &&
           std::string_view("hlzjtL").find(format[i]) != std::string_view::npos)
      length += format[i++];
    if (i >= format.size())
      throw SimError("printf format \"" + std::string(format) + "\" ends inside a conversion");
    const char conversion = format[i];
    const bool wide =
        length == "l" || length == "ll" || length == "z" || length == "j" || length == "t";
    if (length == "L")
      throw SimError("printf conversion " + std::string(format.substr(start, i + 1 - start)) +
                     " (long double) is not simulated");
    switch (conversion) {
      case 'd':
      case 'i': {
        const std::uint64_t v = next(wide ? 8 : 4);
        const long long value = wide ? static_cast<long long>(v) : static_cast<std::int32_t>(v);
        out += printf_one(spec + (length == "h" || length == "hh" ? length : "ll") + conversion,
                          length == "h" || length == "hh" ? static_cast<int>(value) : value);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        const std::uint64_t v = next(wide ? 8 : 4);
        const unsigned long long value = wide ? v : static_cast<std::uint32_t>(v);
        out += printf_one(spec + (length == "h" || length == "hh" ? length : "ll") + conversion,
                          length == "h" || length == "hh" ? static_cast<unsigned>(value) : value);
        break;
      }
      case 'c':
        out += printf_one(spec + 'c', static_cast<int>(static_cast<std::int32_t>(next(4))));
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        const std::uint64_t bits = next(8);
        double value;
        static_assert(sizeof value == sizeof bits);
        std::memcpy(&value, &bits, sizeof value);
        out += printf_one(spec + conversion, value);
        break;
      }
      case 's': {
        const std::string text = string_at(next(8));
        out += printf_one(spec + 's', text.c_str());
        break;
      }
      case 'p':
        out +=
            printf_one(spec + 'p', reinterpret_cast<void*>(static_cast<std::uintptr_t>(next(8))));
        break;
      default:
        throw SimError("printf conversion " + std::string(format.substr(start, i + 1 - start)) +
                       " is not simulated; d i u o x X c s p f F e E g G a A and %% are");
    }
  }
  return {out, arguments};
}

namespace {

// A NUL-terminated string at a generic address, read byte by byte so that a
// string running off its allocation is the access fault it would be.
std::string string_in_memory(Warp& w, int lane, std::uint64_t address) {
  constexpr std::size_t kMaxLength = 1 << 16;
  std::string s;
  for (std::size_t i = 0; i < kMaxLength; ++i) {
    const auto c = static_cast<char>(*access(w, lane, Space::generic, address + i, 1, 1, false));
    if (c == '\0') return s;
    s += c;
  }
  throw AccessFault{lane, "printf string at " + std::to_string(address) + " has no NUL within " +
                              std::to_string(kMaxLength) + " bytes"};
}

}  // namespace

// vprintf's operands (decode.cpp): the return value's frame address (or _),
// then the frame addresses of its two 64-bit parameters, which hold the
// format's and the argument buffer's generic addresses.
void exec_vprintf(const Inst& inst, Warp& w, std::uint32_t active) {
  std::vector<std::string> texts;
  for_lanes(active, [&](int l) {
    const auto parameter = [&](std::size_t i) {
      return load_bytes(access(w, l, Space::local, address_of(w, inst.op0(i), l), 8, 8, false), 8);
    };
    const std::uint64_t format = parameter(1), buffer = parameter(2);
    FormattedPrintf printed = format_device_printf(
        string_in_memory(w, l, format),
        [&](std::uint64_t offset, std::uint32_t size) {
          return load_bytes(access(w, l, Space::generic, buffer + offset, size, size, false), size);
        },
        [&](std::uint64_t address) { return string_in_memory(w, l, address); });
    if (inst.op0(0).kind != Arg::Kind::sink)
      store_bytes(access(w, l, Space::local, address_of(w, inst.op0(0), l), 4, 4, true), 4,
                  static_cast<std::uint32_t>(printed.arguments));
    texts.push_back(std::move(printed.text));
  });
  PrintfSink* sink = w.cta->launch->printf_sink;
  if (!sink) {  // a launch state built without a backend (unit tests of one CTA)
    static PrintfSink stdout_sink({});
    sink = &stdout_sink;
  }
  sink->write(texts);
}

}  // namespace warpforge::sim
