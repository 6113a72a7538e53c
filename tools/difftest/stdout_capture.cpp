#include "difftest/stdout_capture.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "warpforge/error.hpp"

namespace warpforge::difftest {

StdoutCapture::StdoutCapture() {
  std::cout.flush();
  std::fflush(stdout);
  file_ = std::tmpfile();
  saved_ = file_ ? ::dup(STDOUT_FILENO) : -1;
  if (!file_ || saved_ < 0 || ::dup2(::fileno(file_), STDOUT_FILENO) < 0) {
    const std::string why = std::strerror(errno);
    if (saved_ >= 0) ::close(saved_);
    if (file_) std::fclose(file_);
    throw Error("cannot redirect stdout to a temporary file to read a kernel's printf: " + why);
  }
}

void StdoutCapture::restore() {
  if (saved_ < 0) return;
  std::cout.flush();
  std::fflush(stdout);
  ::dup2(saved_, STDOUT_FILENO);
  ::close(saved_);
  saved_ = -1;
}

StdoutCapture::~StdoutCapture() {
  restore();
  std::fclose(file_);
}

std::string StdoutCapture::text() {
  restore();
  std::string out;
  std::rewind(file_);
  char chunk[4096];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file_)) > 0;) out.append(chunk, n);
  return out;
}

}  // namespace warpforge::difftest
