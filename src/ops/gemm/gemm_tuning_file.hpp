// The autotuner's memory: which kernel and configuration won for a problem on
// a device, kept in a small text file beside the compiled-binary cache
// (runtime::BinaryCache::default_directory(), so $WARPFORGE_CACHE_DIR moves
// both). One line per problem:
//
//   # warpforge gemm autotune v1
//   sm80 128 128 32 4 2 2 1 1<TAB>NVIDIA H100 80GB HBM3 | 4096x4096x4096 L1 bf16->bf16 A row B row
//   D row
//
// (kernel, tile m n k, stages, warps m n, cluster m n, then the key). A file
// that does not parse is ignored with a warning on stderr, and replaced on the
// next store; stores hold gemm-autotune.txt.lock (flock) while they read the
// file, add their line and rename a temporary file into place, so that
// concurrent stores from threads and processes all keep their lines.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "warpforge/ops/gemm.hpp"

namespace warpforge::ops {

struct TunedChoice {
  GemmKernel kernel = GemmKernel::sm80;
  GemmConfig config;
  friend bool operator==(const TunedChoice&, const TunedChoice&) = default;
};

class GemmTuningFile {
 public:
  // <binary cache directory>/gemm-autotune.txt; nullopt where the cache has
  // no directory (then tuning results are not remembered).
  static std::optional<std::filesystem::path> default_path();

  explicit GemmTuningFile(std::filesystem::path path) : path_(std::move(path)) {}
  const std::filesystem::path& path() const { return path_; }

  std::optional<TunedChoice> find(const std::string& key) const;
  // Adds or replaces the key's line. Failing to write only warns.
  void store(const std::string& key, const TunedChoice& choice) const;

 private:
  std::filesystem::path path_;
};

}  // namespace warpforge::ops
