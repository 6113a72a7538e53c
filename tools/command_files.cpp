#include "command_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "warpforge/error.hpp"

namespace warpforge::cli {

std::string read_regular_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of
  // waiting for one; fstat on what was opened then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open '" + path + "' for reading: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("cannot stat '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error("'" + path + "' is not a regular file (" +
                (S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                                        : "a block device or socket") +
                "); name a file");
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes)
    throw Error("'" + path + "' has " + std::to_string(size) + " bytes; " + what + " up to " +
                std::to_string(max_bytes) + " bytes are read");
  std::string text(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, text.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while being read
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

void require_file_name(const std::string& flag, const std::string& path) {
  if (path.empty()) throw Error(flag + " '' refused: name the file to write");
}

void write_named_file(const std::string& flag, const std::string& path, std::string_view bytes) {
  require_file_name(flag, path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (out) out.flush();
  if (!out) throw Error(flag + " '" + path + "' refused: cannot write the file: " + std::strerror(errno));
}

}  // namespace warpforge::cli
