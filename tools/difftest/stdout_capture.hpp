// What a kernel's printf prints: a GPU's driver writes it to the process's
// standard output when the host synchronizes, and so does the simulator by
// default (sim::SimOptions::printf_output empty), so the nvcc family reads
// it the same way on both devices, from file descriptor 1.
#pragma once

#include <cstdio>
#include <string>

namespace warpforge::difftest {

// Redirects file descriptor 1 (stdout, flushed first) to a temporary file
// from construction to text() or destruction, which restore it. Throws
// Error where it cannot.
class StdoutCapture {
 public:
  StdoutCapture();
  ~StdoutCapture();
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;
  // Restores stdout and returns what was written to it meanwhile.
  std::string text();

 private:
  void restore();
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace warpforge::difftest
