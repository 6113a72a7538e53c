#include "gemm_tuning_file.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "warpforge/error.hpp"
#include "warpforge/runtime/binary_cache.hpp"
#include "warpforge/runtime/file_lock.hpp"

namespace warpforge::ops {
namespace {

constexpr const char* kHeader = "# warpforge gemm autotune v3";

std::optional<GemmKernel> parse_kernel(const std::string& s) {
  for (GemmKernel k : {GemmKernel::sm80, GemmKernel::sm90a, GemmKernel::sm100a})
    if (name(k) == s) return k;
  return std::nullopt;
}

// The file's entries, or nullopt (after a warning) when it exists but does
// not parse. A missing file is an empty map.
std::optional<std::map<std::string, TunedChoice>> read_entries(const std::filesystem::path& path) {
  std::map<std::string, TunedChoice> entries;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return entries;
  std::string line;
  int number = 0;
  auto corrupt = [&](const std::string& why) {
    std::cerr << "warpforge: autotune file " << path.string() << " " << why
              << "; ignoring the file (it is rewritten by the next autotune)\n";
    return std::nullopt;
  };
  // A FIFO or a directory there would block or fail the read.
  if (!std::filesystem::is_regular_file(status)) return corrupt("is not a regular file");
  std::ifstream in(path);
  if (!in) return corrupt("cannot be opened");
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (line != kHeader)
        return corrupt("line 1 is not the header '" + std::string(kHeader) + "'");
      continue;
    }
    const auto tab = line.find('\t');
    if (tab == std::string::npos)
      return corrupt("line " + std::to_string(number) +
                     " has no tab between the choice and the key");
    std::istringstream fields(line.substr(0, tab));
    std::string kernel_name, rest;
    TunedChoice choice;
    GemmConfig& c = choice.config;
    fields >> kernel_name >> c.tile_m >> c.tile_n >> c.tile_k >> c.stages >> c.warps_m >>
        c.warps_n >> c.cluster_m >> c.cluster_n >> c.pingpong >> c.stream_k;
    auto kernel = parse_kernel(kernel_name);
    if (!fields || (fields >> rest) || !kernel)
      return corrupt(
          "line " + std::to_string(number) +
          " is not 'kernel tile_m tile_n tile_k stages warps_m warps_n cluster_m cluster_n pingpong stream_k'");
    choice.kernel = *kernel;
    entries[line.substr(tab + 1)] = choice;
  }
  if (number == 0) return corrupt("is empty");
  return entries;
}

}  // namespace

std::optional<std::filesystem::path> GemmTuningFile::default_path() {
  auto dir = runtime::BinaryCache::default_directory();
  if (!dir) return std::nullopt;
  return *dir / "gemm-autotune.txt";
}

std::optional<TunedChoice> GemmTuningFile::find(const std::string& key) const {
  auto entries = read_entries(path_);
  if (!entries) return std::nullopt;
  auto it = entries->find(key);
  if (it == entries->end()) return std::nullopt;
  return it->second;
}

void GemmTuningFile::store(const std::string& key, const TunedChoice& choice) const {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
  // The read-modify-write below holds the lock file, so that concurrent
  // stores (threads or processes) each add their line to the other's.
  std::optional<runtime::FileLock> lock;
  try {
    lock.emplace(path_.string() + ".lock");
  } catch (const RuntimeError& e) {
    std::cerr << "warpforge: " << e.what() << "; the autotune result is not remembered\n";
    return;
  }
  auto entries = read_entries(path_).value_or(std::map<std::string, TunedChoice>{});
  entries[key] = choice;
  static std::atomic<unsigned> counter{0};  // one temporary per store, even within a process
  const auto temporary =
      path_.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << kHeader << "\n";
    for (const auto& [k, v] : entries) {
      const GemmConfig& c = v.config;
      out << name(v.kernel) << ' ' << c.tile_m << ' ' << c.tile_n << ' ' << c.tile_k << ' '
          << c.stages << ' ' << c.warps_m << ' ' << c.warps_n << ' ' << c.cluster_m << ' '
          << c.cluster_n << ' ' << c.pingpong << ' ' << c.stream_k << '\t' << k << "\n";
    }
    if (!out) {
      std::cerr << "warpforge: could not write autotune file " << temporary
                << "; the result is not remembered\n";
      return;
    }
  }
  std::filesystem::rename(temporary, path_, ec);
  if (ec)
    std::cerr << "warpforge: could not rename " << temporary << " to " << path_.string() << " ("
              << ec.message() << "); the result is not remembered\n";
}

}  // namespace warpforge::ops
