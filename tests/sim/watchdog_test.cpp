// The simulator's watchdog: a kernel spinning on a flag nobody sets stops
// with a SimError naming the kernel, each warp's PTX line and loop, and how
// to raise the limit, by its instruction budget or by its wall-clock limit.
#include <gtest/gtest.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "../../src/sim/launch_monitor.hpp"
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

// Every thread loops until *flag != 0; nothing ever writes the flag.
KernelSource spinning_kernel() {
  KernelSource k("spin_on_flag");
  k.param(Type::u64, "flag")
      .regs(Type::b32, "%r", 2)
      .regs(Type::b64, "%rd", 2)
      .regs(Type::pred, "%p", 2);
  k.code(R"(
    ld.param.u64 %rd1, [flag];
  wait:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra wait;
    ret;
  )");
  return k;
}

std::string launch_error(SimBackend& sim, runtime::Dim3 grid) {
  const KernelSource k = spinning_kernel();
  const runtime::DevicePtr flag = sim.allocate(4);
  sim.fill(flag, 0, 4, nullptr);
  auto loaded = sim.load(k.module());
  try {
    sim.launch(*loaded, k.name(), {.grid = grid, .block = {64}}, {arg_u64(flag)}, nullptr);
  } catch (const SimError& e) {
    sim.free(flag);
    return e.what();
  }
  sim.free(flag);
  ADD_FAILURE() << "the spinning kernel returned";
  return "";
}

TEST(Watchdog, StopsASpinningKernelAtItsInstructionBudget) {
  SimBackend sim(SimOptions{.worker_threads = 2, .max_thread_instructions = 1'000'000});
  const std::string msg = launch_error(sim, {3});
  const ptx::Module m = spinning_kernel().module();
  const int load = line_of(m, "ld.volatile.global.u32"), branch = line_of(m, "bra wait");
  ASSERT_GT(load, 0);
  EXPECT_NE(msg.find("the simulator's watchdog stopped kernel 'spin_on_flag' after "),
            std::string::npos)
      << msg;
  EXPECT_NE(
      msg.find(
          "past its budget of 1000000 (SimOptions::max_thread_instructions, or the environment "
          "variable WARPFORGE_SIM_MAX_INSTRUCTIONS)"),
      std::string::npos)
      << msg;
  // Both warps of the block, each at a line of the loop, with the loop's extent.
  for (const std::string warp : {"warp 0 at PTX line ", "warp 1 at PTX line "})
    EXPECT_NE(msg.find(warp), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("in the loop of PTX lines " + std::to_string(load) + "-" + std::to_string(branch)),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("raise the limit"), std::string::npos) << msg;
}

TEST(Watchdog, StopsASpinningKernelAtItsTimeLimit) {
  SimBackend sim(SimOptions{.worker_threads = 1, .time_limit_seconds = 1});
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = launch_error(sim, {1});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 1.0);
  EXPECT_LT(seconds, 10.0);
  EXPECT_NE(
      msg.find(
          "past its time limit of 1 s (SimOptions::time_limit_seconds, or the environment variable "
          "WARPFORGE_SIM_TIME_LIMIT in seconds)"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("block (0,0,0): warp 0 at PTX line"), std::string::npos) << msg;
}

TEST(Watchdog, TakesItsLimitsFromTheEnvironment) {
  ::setenv("WARPFORGE_SIM_MAX_INSTRUCTIONS", "200000", 1);
  SimBackend sim(SimOptions{.worker_threads = 1});
  ::unsetenv("WARPFORGE_SIM_MAX_INSTRUCTIONS");
  EXPECT_NE(launch_error(sim, {1}).find("past its budget of 200000"), std::string::npos);

  ::setenv("WARPFORGE_SIM_TIME_LIMIT", "soon", 1);
  try {
    SimBackend refused(SimOptions{});
    ADD_FAILURE() << "WARPFORGE_SIM_TIME_LIMIT=soon was accepted";
  } catch (const SimError& e) {
    EXPECT_STREQ(
        e.what(),
        "environment variable WARPFORGE_SIM_TIME_LIMIT='soon' refused; expected a positive "
        "number from 1 to 1e18");
  }
  ::unsetenv("WARPFORGE_SIM_TIME_LIMIT");
}

// A kernel that finishes within the limits is untouched by them.
TEST(Watchdog, LetsAKernelThatEndsRun) {
  SimBackend sim(SimOptions{.worker_threads = 2, .max_thread_instructions = 1'000'000});
  const KernelSource k = spinning_kernel();
  const runtime::DevicePtr flag = sim.allocate(4);
  sim.fill(flag, 1, 4, nullptr);
  auto loaded = sim.load(k.module());
  EXPECT_NO_THROW(
      sim.launch(*loaded, k.name(), {.grid = {4}, .block = {64}}, {arg_u64(flag)}, nullptr));
  EXPECT_EQ(sim.last_launch_thread_instructions(),
            4u * 64 * 4);  // ld.param, ld, setp, ret (the bra not taken: guard false)
  sim.free(flag);
}

// What a launch of the spinning kernel on `blocks` blocks draws on a terminal
// in `seconds` (its time limit), the line shown after 0.1 s.
std::string progress_on_a_terminal(unsigned blocks, double seconds) {
  int terminal = -1;
  const pid_t child = ::forkpty(&terminal, nullptr, nullptr, nullptr);
  if (child < 0) return "forkpty failed";
  if (child == 0) {  // stderr is the pseudo-terminal's other end
    SimBackend sim(SimOptions{.worker_threads = 1, .time_limit_seconds = seconds,
                              .progress_after_seconds = 0.1});
    const KernelSource k = spinning_kernel();
    const runtime::DevicePtr flag = sim.allocate(4);
    auto loaded = sim.load(k.module());
    try {
      sim.launch(*loaded, k.name(), {.grid = {blocks}, .block = {32}}, {arg_u64(flag)}, nullptr);
    } catch (const SimError&) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  std::string shown;
  char buffer[256];
  for (ssize_t n; (n = ::read(terminal, buffer, sizeof buffer)) > 0;) shown.append(buffer, n);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(terminal);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return shown;
}

// The thread-instruction counts of the drawn lines, in order.
std::vector<double> counts(const std::string& shown) {
  std::vector<double> out;
  for (std::size_t at = 0; (at = shown.find(" s, ", at)) != std::string::npos; at += 4) {
    const std::size_t end = shown.find(" thread-instructions", at);
    if (end == std::string::npos) break;
    std::string number = shown.substr(at + 4, end - at - 4);
    double scale = 1;
    for (const auto& [prefix, factor] : {std::pair{" k", 1e3}, {" M", 1e6}, {" G", 1e9}})
      if (number.ends_with(prefix)) {
        scale = factor;
        number.resize(number.size() - 2);
      }
    out.push_back(std::stod(number) * scale);
  }
  return out;
}

// A long launch draws a progress line on a terminal that moves while no block
// has finished (a persistent kernel's few blocks finish last): the
// thread-instructions run and their rate, redrawn four times a second.
TEST(Progress, MovesOnATerminalBeforeAnyBlockFinishes) {
  const std::string shown = progress_on_a_terminal(2, 1.6);
  EXPECT_NE(shown.find("\r\033[Ksimulator: kernel 'spin_on_flag': 0/2 blocks, 0."), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("thread-instructions at "), std::string::npos) << shown;
  EXPECT_NE(shown.find("/s, an estimate once one of the 2 blocks finishes"), std::string::npos) << shown;
  const std::vector<double> seen = counts(shown);
  ASSERT_GE(seen.size(), 4u) << shown;  // 1.5 s of lines, four a second
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]) << shown;
}

TEST(Progress, NothingWhenStderrIsNotATerminal) {
  SimBackend sim(SimOptions{.worker_threads = 1, .time_limit_seconds = 0.5, .progress_after_seconds = 0});
  ::testing::internal::CaptureStderr();  // a file, not a terminal
  launch_error(sim, {1});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// Once blocks have finished, their average is extrapolated to the launch.
TEST(Progress, EstimatesFromTheBlocksThatFinished) {
  // 2 of 8 blocks done with 1.2 M thread-instructions each: about 9.6 M in
  // all; 3 M run in 2 s is 1.5 M/s, so 6.6 M are left: 4.4 s.
  EXPECT_EQ(progress_detail(3'000'000, 2.0, 2, 2'400'000, 8, "blocks"),
            "3.0 M of about 9.6 M thread-instructions at 1.5 M/s, about 4 s left");
  EXPECT_EQ(progress_detail(2'500'000'000, 58.0, 0, 0, 4, "clusters"),
            "2.5 G thread-instructions at 43 M/s, an estimate once one of the 4 clusters finishes");
  EXPECT_EQ(progress_detail(900'000, 1.0, 0, 0, 1, "blocks"),
            "900 k thread-instructions at 900 k/s, no estimate: the launch is one block");
  // Past the extrapolated total (the last blocks run longer): nothing left, not a negative time.
  EXPECT_EQ(progress_detail(12'000'000, 4.0, 7, 8'400'000, 8, "blocks"),
            "12 M of about 9.6 M thread-instructions at 3.0 M/s, about 0 s left");
}

}  // namespace
}  // namespace warpforge::sim::testing
