#include "warpforge/runtime/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "warpforge/error.hpp"

namespace warpforge::runtime {

FileLock::FileLock(const std::filesystem::path& path)
    : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644)) {
  if (fd_ < 0)
    throw RuntimeError("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
  int r;
  while ((r = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw RuntimeError("cannot lock " + path.string() + ": " + why);
  }
}

FileLock::~FileLock() {
  ::close(fd_);
}  // closing the descriptor releases the lock

}  // namespace warpforge::runtime
