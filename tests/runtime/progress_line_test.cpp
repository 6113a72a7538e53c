// runtime::ProgressLine: drawn on a terminal after its quiet time, with the
// count, the elapsed time and an estimate; nothing when stderr is not a
// terminal or before the quiet time; clear() erases it.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "warpforge/runtime/progress_line.hpp"

namespace warpforge::runtime {
namespace {

// What `body` writes to stderr when stderr is a pseudo-terminal.
template <typename Body>
std::string on_a_terminal(Body body) {
  int terminal = -1;
  const pid_t child = ::forkpty(&terminal, nullptr, nullptr, nullptr);
  if (child < 0) return "forkpty failed";
  if (child == 0) {
    body();
    ::_exit(0);
  }
  std::string shown;
  char buffer[256];
  for (ssize_t n; (n = ::read(terminal, buffer, sizeof buffer)) > 0;) shown.append(buffer, n);
  ::waitpid(child, nullptr, 0);
  ::close(terminal);
  return shown;
}

TEST(ProgressLine, DrawsCountTimeAndEstimateOnATerminal) {
  const std::string shown = on_a_terminal([] {
    ProgressLine line("bench", 4, "shapes", true, 0.0);
    line.show(1);
    line.clear();
  });
  EXPECT_NE(shown.find("\r\033[Kbench: 1/4 shapes, 0."), std::string::npos) << shown;
  EXPECT_NE(shown.find("s left"), std::string::npos) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 4), "\r\033[K") << "clear() erases the line";
}

TEST(ProgressLine, QuietBeforeItsTimeAndWhenDisabled) {
  EXPECT_EQ(on_a_terminal([] {
              ProgressLine line("bench", 4, "shapes", true, 60.0);
              line.show(1);
            }),
            "");
  EXPECT_EQ(on_a_terminal([] {
              ProgressLine line("bench", 4, "shapes", false, 0.0);
              line.show(1);
            }),
            "");
}

TEST(ProgressLine, NothingWhenStderrIsNotATerminal) {
  ::testing::internal::CaptureStderr();  // a file
  {
    ProgressLine line("bench", 4, "shapes", true, 0.0);
    line.show(2);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace warpforge::runtime
