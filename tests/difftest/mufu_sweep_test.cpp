// The multifunction unit's sweep (tools/difftest/mufu_sweep.hpp) on the
// simulator: its correctly rounded references are the nearest f32 (checked
// against quad precision), and a thinned sweep writes every set's arrays,
// the simulator's results within 2 ulps of the correctly rounded ones (its
// tables of the H200's unit; src/sim/mufu_f32.cpp), and the results outside
// the int8 range listed with their bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "difftest/mufu_sweep.hpp"
#include "difftest/values.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::difftest {
namespace {

namespace fs = std::filesystem;

// 1/sqrt(x) in quad precision (a Newton step from long double), rounded once.
std::uint32_t rsqrt_quad(float x) {
  const __float128 q = x;
  __float128 s = std::sqrt(static_cast<long double>(x));
  s = (s + q / s) / 2;
  return std::bit_cast<std::uint32_t>(static_cast<float>(1 / s));
}

TEST(DifftestMufu, ReferencesAreTheNearestF32) {
  Rng rng(45);
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t a = (rng.u32() & 0x7FFFFF) | static_cast<std::uint32_t>(1 + rng.below(253))
                                                         << 23;
    EXPECT_EQ(correctly_rounded_f32("rsqrt.approx.ftz.f32", a), rsqrt_quad(std::bit_cast<float>(a)))
        << std::hex << a;
  }
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  EXPECT_EQ(correctly_rounded_f32("rsqrt.approx.ftz.f32", bits(0.25f)), bits(2.0f));
  EXPECT_EQ(correctly_rounded_f32("ex2.approx.ftz.f32", bits(-3.0f)), bits(0.125f));
  EXPECT_EQ(correctly_rounded_f32("lg2.approx.ftz.f32", bits(0x1p-100f)), bits(-100.0f));
  EXPECT_EQ(correctly_rounded_f32("rcp.approx.ftz.f32", bits(3.0f)), bits(1.0f / 3.0f));
  EXPECT_EQ(correctly_rounded_f32("div.full.f32", bits(1.0f), bits(3.0f)), bits(1.0f / 3.0f));
  // .ftz flushes a subnormal operand (1/+0) and a subnormal result.
  EXPECT_EQ(correctly_rounded_f32("rcp.approx.ftz.f32", 0x00000001), 0x7F800000u);
  EXPECT_EQ(correctly_rounded_f32("rcp.approx.f32", 0x7F000000), bits(0x1p-127f));
  EXPECT_EQ(correctly_rounded_f32("rcp.approx.ftz.f32", 0x7F000000), 0u);
  EXPECT_EQ(correctly_rounded_f32("lg2.approx.f32", bits(-1.0f)), 0x7FFFFFFFu);
  EXPECT_EQ(correctly_rounded_f32("tanh.approx.f32", bits(0.5f)), bits(0.46211716f));  // tanh(0.5) = 0.4621171572...
  EXPECT_EQ(correctly_rounded_f32("tanh.approx.f32", bits(-20.0f)), bits(-1.0f));
  EXPECT_THROW(correctly_rounded_f32("sin.approx.f32", 0), Error);
}

// The elements of a one-dimensional .npy file.
template <typename T>
std::vector<T> read_array(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY") << path;
  const std::size_t start =
      10 + static_cast<std::uint8_t>(bytes[8]) + 256 * static_cast<std::uint8_t>(bytes[9]);
  std::vector<T> v((bytes.size() - start) / sizeof(T));
  std::memcpy(v.data(), bytes.data() + start, v.size() * sizeof(T));
  return v;
}

TEST(DifftestMufu, AThinnedSweepOnTheSimulatorWritesEverySet) {
  const fs::path dir = fs::temp_directory_path() / ("warpforge_mufu_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  sim::SimOptions options;
  options.sm_count = 132;
  mufu_sweep(runtime::Device(sim::make_backend(options)), dir, 4096);
  int sets = 0;
  for (const char* folder : {"rcp", "sqrt", "rsqrt", "ex2", "lg2", "tanh", "div"}) {
    std::ifstream index(dir / folder / "sets.txt");
    std::string line;
    while (std::getline(index, line)) {
      std::istringstream fields(line);
      std::string name, opcode, rule;
      std::getline(fields, name, '\t');
      std::getline(fields, opcode, '\t');
      std::getline(fields, rule);
      EXPECT_EQ(rule, "listed") << line;  // thinned: every input is stored
      ++sets;
      const auto d = read_array<std::int8_t>(dir / folder / (name + ".d.npy"));
      const auto a = read_array<std::uint32_t>(dir / folder / (name + ".a.npy"));
      const auto xi = read_array<std::uint32_t>(dir / folder / (name + ".xi.npy"));
      const auto xb = read_array<std::uint32_t>(dir / folder / (name + ".xb.npy"));
      ASSERT_EQ(d.size(), a.size()) << line;
      ASSERT_EQ(xi.size(), xb.size()) << line;
      EXPECT_GT(d.size(), 0u) << line;
      std::size_t outside = 0, rounded = 0;
      for (std::size_t i = 0; i < d.size(); ++i) {
        outside += d[i] == -128;
        rounded += d[i] == 0;
        // The simulator's multifunction unit (the H200's tables) is within
        // 2 ulps of the correctly rounded results; lg2 and tanh it computes
        // rounded once.
        if (opcode.starts_with("lg2") || opcode.starts_with("tanh")) {
          EXPECT_EQ(d[i], 0) << line << " input " << i;
        } else if (!opcode.starts_with("div")) {
          EXPECT_LE(std::abs(d[i]), 2) << line << " input " << i;
        }
      }
      EXPECT_EQ(outside, xi.size()) << line;
      if (opcode.starts_with("ex2") && name == "ftz_grid") {
        EXPECT_LT(rounded, d.size()) << line;  // not the correctly rounded function
      }
      // div.approx flushes the reciprocal of |b| > 2^126: quotients far
      // from the correctly rounded ones, listed with their bits.
      if (opcode.starts_with("div.approx")) {
        EXPECT_TRUE(std::any_of(xb.begin(), xb.end(), [](std::uint32_t b) {
          return (b & 0x7FFFFFFF) == 0;
        })) << line;
      }
    }
  }
  EXPECT_EQ(sets, 30);
  fs::remove_all(dir);
}

TEST(DifftestMufu, SweepsOnlyTheFunctionsNamedAndRefusesAnUnknownOne) {
  const fs::path dir = fs::temp_directory_path() / ("warpforge_mufu_some_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  sim::SimOptions options;
  options.sm_count = 132;
  const runtime::Device device(sim::make_backend(options));
  mufu_sweep(device, dir, 65536, {"tanh"});
  EXPECT_TRUE(fs::exists(dir / "tanh" / "sets.txt"));
  EXPECT_FALSE(fs::exists(dir / "lg2"));
  try {
    mufu_sweep(device, dir, 65536, {"tan"});
    ADD_FAILURE() << "expected an Error for the function 'tan'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no function 'tan' (accepted: div, ex2, lg2, rcp, rsqrt, sqrt, tanh)"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warpforge::difftest
