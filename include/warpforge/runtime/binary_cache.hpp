// The cache of compiled binaries (cubins), in memory and on disk. It knows
// nothing of CUDA: a backend hands it a key and a function that builds the
// binary, and gets the bytes back.
//
// On disk each entry is one file, <directory>/<key hex>.bin, holding a header
// (magic, format version, the key, the payload's size and SHA-256) and the
// payload. Entries are written to a temporary file in the same directory and
// renamed into place, which POSIX makes atomic, so processes sharing the
// directory see either no entry or a whole one. An entry whose header or
// checksum does not verify is never used: it is rebuilt and rewritten, with a
// warning on stderr.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "warpforge/runtime/sha256.hpp"

namespace warpforge::runtime {

// What a binary was built from and for: the digest of the source text, the
// target name and the compiler's version (for CUDA, the driver's, since the
// driver's JIT compiles the PTX).
struct CacheKey {
  Digest digest;
  static CacheKey compute(std::string_view source, std::string_view target, int compiler_version);
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
  friend auto operator<=>(const CacheKey&, const CacheKey&) = default;
};

class BinaryCache {
 public:
  using Bytes = std::vector<std::uint8_t>;

  struct Stats {
    int memory_hits = 0;
    int disk_hits = 0;
    int builds = 0;
    int rejected_entries = 0;  // disk entries that failed verification and were rebuilt
  };

  // `directory`: where entries live (created when first written); nullopt
  // keeps the cache in memory only.
  explicit BinaryCache(std::optional<std::filesystem::path> directory);

  // $WARPFORGE_CACHE_DIR, else $XDG_CACHE_HOME/warpforge, else
  // $HOME/.cache/warpforge; nullopt when none of these is set.
  static std::optional<std::filesystem::path> default_directory();

  // The binary for `key`: from memory, else from a verified disk entry, else
  // from build(), which is then stored in both. Failing to write the disk
  // entry only warns. Exceptions from build() propagate and nothing is stored.
  std::shared_ptr<const Bytes> get_or_build(const CacheKey& key, const std::function<Bytes()>& build);

  // Forgets the in-memory entries (the disk keeps them), so that the next
  // get_or_build of each key goes to disk: for benchmarks and tests.
  void clear_memory();

  const std::optional<std::filesystem::path>& directory() const { return directory_; }
  std::filesystem::path entry_path(const CacheKey& key) const;  // needs a directory
  Stats stats() const;

 private:
  std::optional<Bytes> read_entry(const CacheKey& key);
  void write_entry(const CacheKey& key, const Bytes& payload);

  std::optional<std::filesystem::path> directory_;
  mutable std::mutex mutex_;
  std::map<CacheKey, std::shared_ptr<const Bytes>> memory_;
  Stats stats_;
};

}  // namespace warpforge::runtime
