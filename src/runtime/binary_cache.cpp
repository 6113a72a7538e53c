#include "warpforge/runtime/binary_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>
#include <thread>

#include "warpforge/error.hpp"

namespace warpforge::runtime {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'W', 'A', 'R', 'P', 'F', 'B', 'I', 'N'};
constexpr std::uint32_t kFormat = 1;

// The entry header, written field by field in little-endian order.
struct Header {
  std::uint32_t format = kFormat;
  Digest key{};
  std::uint64_t payload_size = 0;
  Digest payload_digest{};
};
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + 4 + 4 + 32 + 8 + 32;

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>(value >> (8 * i));
}

std::uint64_t get_le(const std::uint8_t* p, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{p[i]} << (8 * i);
  return value;
}

std::string encode(const Header& h) {
  std::string out(kMagic, sizeof(kMagic));
  put_le(out, h.format, 4);
  put_le(out, 0, 4);  // reserved
  out.append(reinterpret_cast<const char*>(h.key.data()), h.key.size());
  put_le(out, h.payload_size, 8);
  out.append(reinterpret_cast<const char*>(h.payload_digest.data()), h.payload_digest.size());
  return out;
}

Digest digest_of(const std::uint8_t* data, std::size_t bytes) { return Sha256().update(data, bytes).finish(); }

void warn(const std::string& message) {
  std::ostringstream line;
  line << "warpforge: " << message << "\n";
  std::cerr << line.str() << std::flush;
}

// A writer killed between creating its temporary and renaming it leaves the
// temporary behind; one this old has no live writer.
constexpr auto kStaleTemporary = std::chrono::hours(1);
constexpr const char* kTemporaryMark = ".tmp.";

// A name no other writer (thread or process) uses at the same time.
fs::path temporary_name(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  std::ostringstream name;
  name << target.filename().string() << kTemporaryMark << ::getpid() << "." << std::this_thread::get_id() << "."
       << counter++;
  return target.parent_path() / name.str();
}

}  // namespace

CacheKey CacheKey::compute(std::string_view source, std::string_view target, int compiler_version) {
  // Each field ends with a NUL, which none of them contains, so that no two
  // different triples hash the same bytes.
  Sha256 h;
  auto field = [&h](std::string_view text) { h.update(text).update(std::string_view("\0", 1)); };
  field("warpforge binary cache key 1");
  field(target);
  field(std::to_string(compiler_version));
  field(source);
  return CacheKey{h.finish()};
}

BinaryCache::BinaryCache(std::optional<fs::path> directory, std::uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

std::uint64_t BinaryCache::default_max_bytes() {
  const char* text = std::getenv("WARPFORGE_CACHE_MAX_BYTES");
  if (!text || !*text) return std::uint64_t{2} << 30;
  std::uint64_t v = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, v);
  if (error != std::errc() || stop != end || v == 0)
    throw RuntimeError(std::string("WARPFORGE_CACHE_MAX_BYTES='") + text +
                       "' refused; expected a positive integer number of bytes");
  return v;
}

std::optional<fs::path> BinaryCache::default_directory() {
  if (const char* dir = std::getenv("WARPFORGE_CACHE_DIR"); dir && *dir) return fs::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "warpforge";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "warpforge";
  return std::nullopt;
}

fs::path BinaryCache::entry_path(const CacheKey& key) const { return *directory_ / (to_hex(key.digest) + ".bin"); }

void BinaryCache::clear_memory() {
  std::lock_guard lock(mutex_);
  memory_.clear();
}

BinaryCache::Stats BinaryCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::shared_ptr<const BinaryCache::Bytes> BinaryCache::get_or_build(const CacheKey& key,
                                                                    const std::function<Bytes()>& build) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      ++stats_.memory_hits;
      return it->second;
    }
  }
  // Disk reads and builds run unlocked: two threads missing on one key both
  // build it, which costs time but stays correct (the entries are equal).
  std::optional<Bytes> bytes = directory_ ? read_entry(key) : std::nullopt;
  const bool from_disk = bytes.has_value();
  if (!from_disk) {
    bytes = build();
    if (directory_) write_entry(key, *bytes);
  }
  auto shared = std::make_shared<const Bytes>(std::move(*bytes));
  std::lock_guard lock(mutex_);
  ++(from_disk ? stats_.disk_hits : stats_.builds);
  return memory_.emplace(key, shared).first->second;
}

std::optional<BinaryCache::Bytes> BinaryCache::read_entry(const CacheKey& key) {
  const fs::path path = entry_path(key);
  auto reject = [&](const std::string& why) -> std::optional<Bytes> {
    warn("cache entry " + path.string() + " " + why + "; rebuilding it");
    std::lock_guard lock(mutex_);
    ++stats_.rejected_entries;
    return std::nullopt;
  };
  // Non-blocking: a FIFO at the path must not wait for a writer; fstat then
  // refuses anything but a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;  // no entry: an ordinary miss
    return reject(std::string("cannot be opened (") + std::strerror(errno) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return reject("is not a regular file");
  Bytes file(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < file.size()) {
    const ssize_t n = ::read(fd, file.data() + got, file.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  file.resize(got);
  ::futimens(fd, nullptr);  // used now: the eviction keeps recently used entries
  if (file.size() < kHeaderBytes)
    return reject("is truncated (" + std::to_string(file.size()) + " bytes, shorter than its header)");
  const std::uint8_t* p = file.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return reject("is not a warpforge cache entry (bad magic)");
  p += sizeof(kMagic);
  if (get_le(p, 4) != kFormat) return reject("has format " + std::to_string(get_le(p, 4)) + ", not 1");
  p += 8;
  if (std::memcmp(p, key.digest.data(), key.digest.size()) != 0) return reject("holds the binary of another key");
  p += 32;
  const std::uint64_t payload_size = get_le(p, 8);
  p += 8;
  if (file.size() - kHeaderBytes != payload_size)
    return reject("is truncated or overlong (" + std::to_string(file.size() - kHeaderBytes) +
                  " payload bytes, header says " + std::to_string(payload_size) + ")");
  const Digest actual = digest_of(file.data() + kHeaderBytes, payload_size);
  if (std::memcmp(p, actual.data(), actual.size()) != 0) return reject("is corrupt (payload checksum mismatch)");
  return Bytes(file.begin() + kHeaderBytes, file.end());
}

void BinaryCache::write_entry(const CacheKey& key, const Bytes& payload) {
  const fs::path path = entry_path(key);
  std::error_code ec;
  fs::create_directories(*directory_, ec);
  if (ec) {
    warn("cannot create the cache directory " + directory_->string() + ": " + ec.message() +
         "; the compiled module is not cached on disk");
    return;
  }
  Header header;
  header.key = key.digest;
  header.payload_size = payload.size();
  header.payload_digest = digest_of(payload.data(), payload.size());
  const std::string head = encode(header);

  const fs::path temporary = temporary_name(path);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    out.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      fs::remove(temporary, ec);
      warn("cannot write the cache entry " + temporary.string() + "; the compiled module is not cached on disk");
      return;
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(temporary, ec);
    warn("cannot move the cache entry into place at " + path.string() + ": " + why);
  }
  trim_directory();
}

void BinaryCache::trim_directory() {
  struct Entry {
    fs::file_time_type used;
    std::uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(*directory_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    const auto used = it->last_write_time(entry_ec);
    if (entry_ec) continue;
    if (name.find(kTemporaryMark) != std::string::npos) {
      if (now - used > kStaleTemporary) fs::remove(p, entry_ec);
      continue;
    }
    if (p.extension() != ".bin") continue;
    const std::uint64_t bytes = it->file_size(entry_ec);
    if (entry_ec) continue;
    entries.push_back({used, bytes, p});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  int evicted = 0;
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    // Another process may have deleted it already; either way it is gone.
    fs::remove(e.path, ec);
    total -= e.bytes;
    ++evicted;
  }
  std::lock_guard lock(mutex_);
  stats_.evicted_entries += evicted;
}

}  // namespace warpforge::runtime
