#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include "warpforge/error.hpp"
#include "warpforge/runtime/binary_cache.hpp"

namespace warpforge::runtime {
namespace {

namespace fs = std::filesystem;
using Bytes = BinaryCache::Bytes;

Bytes payload(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 31);
  return b;
}

class BinaryCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("warpforge-cache-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A builder that counts its calls.
  std::function<Bytes()> builder(const Bytes& bytes) {
    return [this, bytes] {
      ++builds_;
      return bytes;
    };
  }

  void rewrite(const fs::path& path, const std::function<void(Bytes&)>& change) {
    std::ifstream in(path, std::ios::binary);
    Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    change(file);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  }

  // Damages the stored entry with `change`, then loads it through a fresh
  // cache: the entry must be rejected with `warning`, rebuilt and repaired.
  void expect_rebuilt_after(const std::function<void(Bytes&)>& change, const std::string& warning) {
    const CacheKey key = CacheKey::compute("ptx text", "sm_90a", 13000);
    const Bytes good = payload(1000, 7);
    BinaryCache(dir_).get_or_build(key, builder(good));
    rewrite(BinaryCache(dir_).entry_path(key), change);

    BinaryCache cache(dir_);
    ::testing::internal::CaptureStderr();
    auto bytes = cache.get_or_build(key, builder(good));
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(*bytes, good);
    EXPECT_EQ(builds_, 2);
    EXPECT_EQ(cache.stats().rejected_entries, 1);
    EXPECT_NE(err.find("warpforge: cache entry " + cache.entry_path(key).string() + " " + warning +
                       "; rebuilding it"),
              std::string::npos)
        << err;

    BinaryCache again(dir_);  // the rewritten entry verifies
    EXPECT_EQ(*again.get_or_build(key, builder(good)), good);
    EXPECT_EQ(again.stats().disk_hits, 1);
    EXPECT_EQ(builds_, 2);
  }

  fs::path dir_;
  int builds_ = 0;
};

TEST_F(BinaryCacheTest, BuildsOnceThenAnswersFromMemory) {
  BinaryCache cache(dir_);
  const CacheKey key = CacheKey::compute("a", "sm_80", 12080);
  auto first = cache.get_or_build(key, builder(payload(10, 1)));
  auto second = cache.get_or_build(key, builder(payload(10, 2)));
  EXPECT_EQ(*first, payload(10, 1));
  EXPECT_EQ(first, second);
  EXPECT_EQ(builds_, 1);
  EXPECT_EQ(cache.stats().memory_hits, 1);
  EXPECT_EQ(cache.stats().builds, 1);
  EXPECT_TRUE(fs::exists(cache.entry_path(key)));
}

TEST_F(BinaryCacheTest, ANewCacheLoadsTheEntryFromDisk) {
  const CacheKey key = CacheKey::compute("a", "sm_80", 12080);
  BinaryCache(dir_).get_or_build(key, builder(payload(4096, 3)));
  BinaryCache cache(dir_);
  EXPECT_EQ(*cache.get_or_build(key, builder(payload(1, 0))), payload(4096, 3));
  EXPECT_EQ(builds_, 1);
  EXPECT_EQ(cache.stats().disk_hits, 1);
}

TEST_F(BinaryCacheTest, AfterClearingMemoryGoesToDisk) {
  BinaryCache cache(dir_);
  const CacheKey key = CacheKey::compute("a", "sm_80", 12080);
  cache.get_or_build(key, builder(payload(100, 4)));
  cache.clear_memory();
  EXPECT_EQ(*cache.get_or_build(key, builder(payload(1, 0))), payload(100, 4));
  EXPECT_EQ(cache.stats().disk_hits, 1);
  EXPECT_EQ(builds_, 1);
}

TEST_F(BinaryCacheTest, KeysDependOnSourceTargetAndCompilerVersion) {
  const CacheKey key = CacheKey::compute("ptx", "sm_90a", 13000);
  EXPECT_EQ(key, CacheKey::compute("ptx", "sm_90a", 13000));
  EXPECT_NE(key, CacheKey::compute("ptx ", "sm_90a", 13000));
  EXPECT_NE(key, CacheKey::compute("ptx", "sm_100a", 13000));
  EXPECT_NE(key, CacheKey::compute("ptx", "sm_90a", 12080));
  EXPECT_EQ(BinaryCache(dir_).entry_path(key).filename().string(), to_hex(key.digest) + ".bin");
}

TEST_F(BinaryCacheTest, RebuildsACorruptEntry) {
  expect_rebuilt_after([](Bytes& f) { f.back() ^= 0x40; }, "is corrupt (payload checksum mismatch)");
}

TEST_F(BinaryCacheTest, RebuildsAnEntryTruncatedInItsPayload) {
  expect_rebuilt_after([](Bytes& f) { f.resize(f.size() - 10); },
                       "is truncated or overlong (990 payload bytes, header says 1000)");
}

TEST_F(BinaryCacheTest, RebuildsAnEntryTruncatedInItsHeader) {
  expect_rebuilt_after([](Bytes& f) { f.resize(20); }, "is truncated (20 bytes, shorter than its header)");
}

TEST_F(BinaryCacheTest, RebuildsAFileThatIsNoEntry) {
  expect_rebuilt_after([](Bytes& f) { f[0] = 'X'; }, "is not a warpforge cache entry (bad magic)");
}

TEST_F(BinaryCacheTest, RebuildsAnEntryOfAnotherFormat) {
  expect_rebuilt_after([](Bytes& f) { f[8] = 7; }, "has format 7, not 1");
}

TEST_F(BinaryCacheTest, RebuildsAnEntryOfAnotherKey) {
  const CacheKey a = CacheKey::compute("a", "sm_90a", 13000);
  const CacheKey b = CacheKey::compute("b", "sm_90a", 13000);
  BinaryCache writer(dir_);
  writer.get_or_build(a, builder(payload(64, 1)));
  fs::copy_file(writer.entry_path(a), writer.entry_path(b));

  BinaryCache cache(dir_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(*cache.get_or_build(b, builder(payload(64, 2))), payload(64, 2));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("holds the binary of another key; rebuilding it"),
            std::string::npos);
  EXPECT_EQ(cache.stats().rejected_entries, 1);
}

TEST_F(BinaryCacheTest, WithoutADirectoryKeepsToMemory) {
  BinaryCache cache(std::nullopt);
  const CacheKey key = CacheKey::compute("a", "sm_80", 1);
  cache.get_or_build(key, builder(payload(8, 1)));
  cache.get_or_build(key, builder(payload(8, 1)));
  EXPECT_EQ(builds_, 1);
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(BinaryCacheTest, AnUnusableDirectoryOnlyWarns) {
  std::ofstream(dir_.string()) << "a file where the directory should be";
  BinaryCache cache(dir_ / "sub");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(*cache.get_or_build(CacheKey::compute("a", "sm_80", 1), builder(payload(8, 5))), payload(8, 5));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("cannot create the cache directory " +
                                                          (dir_ / "sub").string()),
            std::string::npos);
  fs::remove(dir_);
}

TEST_F(BinaryCacheTest, ABuildErrorStoresNothing) {
  BinaryCache cache(dir_);
  const CacheKey key = CacheKey::compute("bad", "sm_80", 1);
  EXPECT_THROW(cache.get_or_build(key, []() -> Bytes { throw std::runtime_error("ptxas refused"); }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(cache.entry_path(key)));
  EXPECT_EQ(*cache.get_or_build(key, builder(payload(3, 3))), payload(3, 3));
}

// Several processes, each with threads, build and read one key at once: every
// reader gets the right bytes, none ever sees a partial entry, and one valid
// entry and no temporary files remain.
TEST_F(BinaryCacheTest, ConcurrentWritersAndReadersAgree) {
  const CacheKey key = CacheKey::compute("shared kernel", "sm_90a", 13000);
  const Bytes expected = payload(1 << 20, 9);
  constexpr int kProcesses = 4, kThreads = 3, kRounds = 5;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      std::vector<std::thread> threads;
      std::vector<int> thread_ok(kThreads, 1);
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          for (int r = 0; r < kRounds; ++r) {
            BinaryCache cache(dir_);  // a fresh cache: every round goes to disk
            if (*cache.get_or_build(key, [&] { return expected; }) != expected) thread_ok[t] = 0;
            if (cache.stats().rejected_entries != 0) thread_ok[t] = 0;
          }
        });
      }
      for (auto& t : threads) t.join();
      for (int v : thread_ok) ok = ok && v;
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw wrong bytes or a partial entry";
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{to_hex(key.digest) + ".bin"});
  BinaryCache cache(dir_);
  EXPECT_EQ(*cache.get_or_build(key, builder(Bytes{})), expected);
  EXPECT_EQ(cache.stats().disk_hits, 1);
}

// Something other than a regular file at an entry's path: read non-blocking
// (a FIFO with no writer must not hang), rejected with a warning, and the
// binary built; a FIFO is then replaced by the entry, a directory only warns.
TEST_F(BinaryCacheTest, AFifoOrDirectoryAtAnEntrysPathIsRebuiltNotWaitedOn) {
  const CacheKey fifo_key = CacheKey::compute("fifo", "sm_80", 1), dir_key = CacheKey::compute("dir", "sm_80", 1);
  BinaryCache cache(dir_);
  fs::create_directories(dir_);
  ASSERT_EQ(::mkfifo(cache.entry_path(fifo_key).c_str(), 0600), 0);
  fs::create_directories(cache.entry_path(dir_key));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(*cache.get_or_build(fifo_key, builder(payload(16, 1))), payload(16, 1));
  EXPECT_EQ(*cache.get_or_build(dir_key, builder(payload(16, 2))), payload(16, 2));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cache entry " + cache.entry_path(fifo_key).string() + " is not a regular file; rebuilding it"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("cache entry " + cache.entry_path(dir_key).string() + " is not a regular file; rebuilding it"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("cannot move the cache entry into place at " + cache.entry_path(dir_key).string()),
            std::string::npos)
      << err;
  EXPECT_EQ(builds_, 2);
  EXPECT_EQ(cache.stats().rejected_entries, 2);
  EXPECT_TRUE(fs::is_regular_file(cache.entry_path(fifo_key)));  // the FIFO was replaced
  BinaryCache again(dir_);
  EXPECT_EQ(*again.get_or_build(fifo_key, builder(Bytes{})), payload(16, 1));
  EXPECT_EQ(again.stats().disk_hits, 1);
}

// Entries past the size limit go, least recently used first (a disk hit
// counts as a use); the newest entry stays.
TEST_F(BinaryCacheTest, KeepsTheDirectoryUnderItsLimitEvictingTheLeastRecentlyUsed) {
  const CacheKey a = CacheKey::compute("a", "sm_80", 1), b = CacheKey::compute("b", "sm_80", 1),
                 c = CacheKey::compute("c", "sm_80", 1);
  const std::uint64_t entry = 1000 + 88;  // payload and header
  BinaryCache(dir_, 2 * entry).get_or_build(a, builder(payload(1000, 1)));
  BinaryCache(dir_, 2 * entry).get_or_build(b, builder(payload(1000, 2)));
  // a is older than b; reading it makes it the more recently used.
  const auto past = fs::file_time_type::clock::now() - std::chrono::minutes(10);
  fs::last_write_time(BinaryCache(dir_).entry_path(a), past - std::chrono::minutes(1));
  fs::last_write_time(BinaryCache(dir_).entry_path(b), past);
  BinaryCache reader(dir_, 2 * entry);
  reader.get_or_build(a, builder(Bytes{}));
  EXPECT_EQ(reader.stats().disk_hits, 1);

  BinaryCache writer(dir_, 2 * entry);
  writer.get_or_build(c, builder(payload(1000, 3)));
  EXPECT_EQ(writer.stats().evicted_entries, 1);
  EXPECT_TRUE(fs::exists(writer.entry_path(a)));
  EXPECT_FALSE(fs::exists(writer.entry_path(b)));
  EXPECT_TRUE(fs::exists(writer.entry_path(c)));
}

TEST_F(BinaryCacheTest, SweepsTemporariesThatAKilledWriterLeft) {
  fs::create_directories(dir_);
  const fs::path stale = dir_ / "0123.bin.tmp.4242.1.0", fresh = dir_ / "4567.bin.tmp.4242.1.1";
  std::ofstream(stale) << "half an entry";
  std::ofstream(fresh) << "a writer at work";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  BinaryCache(dir_).get_or_build(CacheKey::compute("x", "sm_80", 1), builder(payload(8, 1)));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // an hour's grace: its writer may still be running
}

TEST(BinaryCacheLimit, FollowsTheEnvironmentAndRefusesNonsense) {
  ::setenv("WARPFORGE_CACHE_MAX_BYTES", "1048576", 1);
  EXPECT_EQ(BinaryCache::default_max_bytes(), 1048576u);
  ::setenv("WARPFORGE_CACHE_MAX_BYTES", "1GB", 1);
  try {
    BinaryCache::default_max_bytes();
    ADD_FAILURE() << "WARPFORGE_CACHE_MAX_BYTES=1GB was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "WARPFORGE_CACHE_MAX_BYTES='1GB' refused; expected a positive integer number of bytes");
  }
  ::unsetenv("WARPFORGE_CACHE_MAX_BYTES");
  EXPECT_EQ(BinaryCache::default_max_bytes(), std::uint64_t{2} << 30);
}

TEST(BinaryCacheDirectory, FollowsTheEnvironment) {
  auto saved = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto own = saved("WARPFORGE_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");

  ::setenv("WARPFORGE_CACHE_DIR", "/tmp/wf-own", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  ::setenv("HOME", "/tmp/home", 1);
  EXPECT_EQ(BinaryCache::default_directory(), fs::path("/tmp/wf-own"));
  ::unsetenv("WARPFORGE_CACHE_DIR");
  EXPECT_EQ(BinaryCache::default_directory(), fs::path("/tmp/xdg/warpforge"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(BinaryCache::default_directory(), fs::path("/tmp/home/.cache/warpforge"));
  ::unsetenv("HOME");
  EXPECT_EQ(BinaryCache::default_directory(), std::nullopt);

  auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v) ::setenv(name, v->c_str(), 1);
    else ::unsetenv(name);
  };
  restore("WARPFORGE_CACHE_DIR", own);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

}  // namespace
}  // namespace warpforge::runtime
