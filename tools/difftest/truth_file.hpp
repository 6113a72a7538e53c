// Recorded GPU results (tests/gpu_truth/<family>.truth): one file per
// family, a text header naming the GPU, its driver, its SM count and the
// recording's seed, then one entry per
// unit: a line
//   unit <bytes> <seed> <cases> <fingerprint> <ok|refused> <name>
// followed by <bytes> raw bytes (the outputs, or the GPU's refusal as text)
// and a newline. Inputs are not stored: they are regenerated from the seed
// by the generator whose version the header names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "warpforge/error.hpp"

namespace warpforge::difftest {

// A truth file that cannot be read or does not fit the harness.
class TruthError : public Error {
 public:
  using Error::Error;
};

// The version of the input generator (values.cpp and every family's inputs).
// Any change to what a seed generates bumps it, and recordings of another
// version are refused: their outputs belong to other inputs.
inline constexpr int kGeneratorVersion = 1;

struct TruthEntry {
  std::string unit;
  std::uint64_t seed = 0;
  std::int64_t cases = 0;
  std::string fingerprint;  // of the kernel that ran
  bool refused = false;     // the device refused the unit: bytes hold its message
  std::vector<std::uint8_t> bytes;
};

struct TruthFile {
  std::string family;
  std::string device;  // "NVIDIA H100 80GB HBM3 (sm_90a)"
  std::string driver;  // "13000"
  // The GPU's SMs (its "sms" line; 0 in a file that has none): the replay's
  // simulator reports as many (replay_device), since persistent kernels size
  // their grids by it, and stream-K splits its k-blocks among those CTAs.
  int sm_count = 0;
  // The recording's seed (its "seed" line; 0 in a file that has none):
  // 0 for the committed recordings, another number for an out-of-sample
  // one; every unit's inputs come from unit_seed(family, unit, seed).
  std::uint64_t seed = 0;
  std::string recorded;  // UTC date and time
  int generator = kGeneratorVersion;
  std::vector<TruthEntry> entries;
};

void write_truth(const std::filesystem::path& path, const TruthFile& file);
// Throws TruthError naming the file and what is wrong with it.
TruthFile read_truth(const std::filesystem::path& path);

}  // namespace warpforge::difftest
