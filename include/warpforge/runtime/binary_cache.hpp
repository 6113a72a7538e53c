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
// warning on stderr; so is anything at an entry's path that is not a regular
// file (a directory, a FIFO: entries are opened non-blocking and checked
// before they are read).
//
// The directory's entries are kept under a size limit (max_bytes, default
// $WARPFORGE_CACHE_MAX_BYTES, else 2 GiB): after each write the entries used
// least recently (a hit refreshes an entry's modification time) are deleted
// until the rest fit. The same pass deletes temporary files that a killed
// writer left behind, once they are an hour old.
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
    int evicted_entries = 0;   // deleted to keep the directory under max_bytes
  };

  // `directory`: where entries live (created when first written); nullopt
  // keeps the cache in memory only. `max_bytes`: the size limit of the
  // directory's entries.
  explicit BinaryCache(std::optional<std::filesystem::path> directory,
                       std::uint64_t max_bytes = default_max_bytes());

  // $WARPFORGE_CACHE_MAX_BYTES (a positive integer; anything else is refused
  // with a RuntimeError naming it), else 2 GiB.
  static std::uint64_t default_max_bytes();

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
  // Deletes stale temporaries and least-recently-used entries over the limit.
  void trim_directory();

  std::optional<std::filesystem::path> directory_;
  std::uint64_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<CacheKey, std::shared_ptr<const Bytes>> memory_;
  Stats stats_;
};

}  // namespace warpforge::runtime
