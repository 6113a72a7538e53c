// External tools (ptxas, LLVM's opt/llc/ld.lld) run under a time limit, and a
// tool killed by a signal is reported by the signal's name, not as "exit -1".
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "warpforge/error.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ptx {
namespace {

namespace fs = std::filesystem;

TEST(ExternalTool, NamesTheSignalThatKilledIt) {
  const ToolRun r = run_tool("/bin/sh", {"-c", "echo about to crash; kill -SEGV $$"});
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.status(), "killed by signal SIGSEGV (Segmentation fault)");
  EXPECT_EQ(r.output, "about to crash\n");
}

TEST(ExternalTool, ReportsItsExitStatus) {
  const ToolRun r = run_tool("/bin/sh", {"-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.status(), "exit 3");
}

TEST(ExternalTool, IsKilledAtItsTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const ToolRun r = run_tool("/bin/sh", {"-c", "exec sleep 30"}, 0.5);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(r.status(),
            "timed out after 0 s (killed; WARPFORGE_TOOL_TIMEOUT sets the limit in seconds)");
}

TEST(ExternalTool, TakesItsTimeLimitFromTheEnvironment) {
  ::setenv("WARPFORGE_TOOL_TIMEOUT", "1", 1);
  const ToolRun r = run_tool("/bin/sh", {"-c", "exec sleep 30"});
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status(),
            "timed out after 1 s (killed; WARPFORGE_TOOL_TIMEOUT sets the limit in seconds)");
  ::setenv("WARPFORGE_TOOL_TIMEOUT", "forever", 1);
  try {
    tool_timeout_seconds();
    ADD_FAILURE() << "WARPFORGE_TOOL_TIMEOUT=forever was accepted";
  } catch (const PtxError& e) {
    EXPECT_STREQ(e.what(),
                 "WARPFORGE_TOOL_TIMEOUT='forever' refused; expected a positive number of seconds "
                 "up to 1e9");
  }
  ::unsetenv("WARPFORGE_TOOL_TIMEOUT");
  EXPECT_EQ(tool_timeout_seconds(), 600);
}

// ptxas crashing (as it does on a 10-million-character identifier): the
// result's log says which signal.
TEST(ExternalTool, APtxasCrashIsNamedInItsLog) {
  const fs::path fake =
      fs::temp_directory_path() / ("warpforge-crashing-ptxas-" + std::to_string(::getpid()));
  std::ofstream(fake) << "#!/bin/sh\nkill -SEGV $$\n";
  fs::permissions(fake, fs::perms::owner_all);
  const char* saved = std::getenv("WARPFORGE_PTXAS");
  const std::string old = saved ? saved : "";
  ::setenv("WARPFORGE_PTXAS", fake.c_str(), 1);
  const PtxasResult r = run_ptxas(".version 7.0\n.target sm_80\n.address_size 64\n", "sm_80");
  saved ? ::setenv("WARPFORGE_PTXAS", old.c_str(), 1) : ::unsetenv("WARPFORGE_PTXAS");
  fs::remove(fake);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("ptxas killed by signal SIGSEGV (Segmentation fault)"), std::string::npos)
      << r.log;
}

}  // namespace
}  // namespace warpforge::ptx
