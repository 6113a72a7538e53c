// An exclusive advisory lock (flock) on a lock file, held for the object's
// life: it serializes a read-modify-write of a shared file across threads
// (each FileLock opens its own descriptor) and processes.
#pragma once

#include <filesystem>

namespace warpforge::runtime {

class FileLock {
 public:
  // Creates `path` if absent and waits for the lock. Throws RuntimeError
  // naming the path when it cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace warpforge::runtime
