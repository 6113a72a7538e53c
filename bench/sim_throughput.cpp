// Simulator throughput: simulated thread-instructions per second (one
// instruction executed by one thread) on two realistic kernels, an
// integer/float loop and the documented mma.sync bf16 GEMM. Needs no GPU.
// The peer is the simulator's target rate (20 million thread-instructions per
// second on a 2-core machine); the table gives our rate and the ratio. It also
// gives the host CPU time, so that a figure from a machine busy with other
// work can still be read: thread-instructions per CPU-second times the
// worker threads is the rate of an otherwise idle machine.
//
//   ./build/bench/bench_sim_throughput [worker-threads (default: all cores)]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "kernels/bf16_gemm.hpp"
#include "sim/sim_backend.hpp"
#include "warpforge/dsl.hpp"

namespace {

using namespace warpforge;
using namespace warpforge::dsl;

constexpr double kTargetRate = 20e6;

// out[gid] = x and out[n + gid] = bits of f after `iters` rounds of an LCG
// step and an fma.
ptx::Module alu_loop_kernel() {
  Kernel k("alu_loop", Target::sm_80);
  Reg out = k.param_ptr("out", 4);
  Reg iters = k.param(u32, "iters");
  Reg gid = (k.sreg(SReg::ctaid_x) << 8) + k.sreg(SReg::tid_x);
  Reg x = k.mov(u32, gid);
  Reg f = k.mov(f32, imm_f32(0.0f));
  k.for_range(0, iters, 1, [&](Reg i) {
    k.mad(x, x, 1664525, 1013904223);
    k.xor_(x, x, i);
    k.fma(f, f, imm_f32(0.5f), imm_f32(1.0f));
  });
  Reg offset = k.reg(u64);
  k.mul_wide(offset, gid, 4);
  k.st(Space::global, u32, at(out + offset), x);
  k.st(Space::global, f32, at(out + offset, 4 * 256 * 64), f);
  return k.module();
}

runtime::KernelArg arg(const void* p, std::size_t n) {
  runtime::KernelArg a;
  a.bytes.resize(n);
  std::memcpy(a.bytes.data(), p, n);
  return a;
}

struct Result {
  std::uint64_t instructions;
  double seconds;
  double cpu_seconds;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

Result timed_launch(sim::SimBackend& sim, runtime::LoadedModule& m, const std::string& kernel,
                    const runtime::LaunchConfig& cfg, const std::vector<runtime::KernelArg>& args) {
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  sim.launch(m, kernel, cfg, args, nullptr);
  const auto end = std::chrono::steady_clock::now();
  return {sim.last_launch_thread_instructions(), std::chrono::duration<double>(end - start).count(),
          cpu_seconds() - cpu_start};
}

void report(const char* name, const Result& r) {
  const double rate = static_cast<double>(r.instructions) / r.seconds;
  const double cpu_rate = static_cast<double>(r.instructions) / r.cpu_seconds;
  std::printf("%-38s %13llu %8.3f %8.3f %11.1f %9.1f %9.1f %6.2f\n", name,
              static_cast<unsigned long long>(r.instructions), r.seconds, r.cpu_seconds,
              kTargetRate / 1e6, rate / 1e6, cpu_rate / 1e6, rate / kTargetRate);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned workers =
      argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : std::thread::hardware_concurrency();
  sim::SimBackend sim(sim::SimOptions{.worker_threads = workers});
  std::printf("warpforge simulator throughput: %u worker threads on a %u-thread host\n", workers,
              std::thread::hardware_concurrency());
  std::printf("%-38s %13s %8s %8s %11s %9s %9s %6s\n", "kernel", "thread-instr", "wall s", "CPU s",
              "target M/s", "ours M/s", "M/CPU-s", "ratio");

  {
    auto m = sim.load(alu_loop_kernel());
    const runtime::DevicePtr out = sim.allocate(2 * 4 * 256 * 64);
    const std::uint64_t ptr = out;
    const std::uint32_t iters = 2000;
    const runtime::LaunchConfig cfg{.grid = {64, 1, 1}, .block = {256, 1, 1}};
    const std::vector<runtime::KernelArg> args = {arg(&ptr, 8), arg(&iters, 4)};
    report("integer/float loop (64x256, 2000 it)", timed_launch(sim, *m, "alu_loop", cfg, args));
  }
  {
    std::mt19937 rng(1);
    const examples::GemmCase c{256, 256, 256};
    const auto data = examples::bf16_gemm_data(c, rng);
    auto m = sim.load(examples::bf16_gemm_kernel(ptx::Target::sm_80));
    const runtime::DevicePtr a = sim.allocate(data.a.size() * 2),
                             bt = sim.allocate(data.bt.size() * 2),
                             d = sim.allocate(std::size_t{256} * 256 * 4);
    sim.copy_to_device(a, data.a.data(), data.a.size() * 2, nullptr);
    sim.copy_to_device(bt, data.bt.data(), data.bt.size() * 2, nullptr);
    const std::uint64_t pa = a, pb = bt, pd = d;
    const std::uint32_t mm = 256, nn = 256, kk = 256;
    const std::vector<runtime::KernelArg> args = {arg(&pa, 8), arg(&pb, 8), arg(&pd, 8),
                                                  arg(&mm, 4), arg(&nn, 4), arg(&kk, 4)};
    const runtime::LaunchConfig cfg{.grid = {32, 16, 1}, .block = {32, 1, 1}};
    report("mma.sync bf16 GEMM 256x256x256",
           timed_launch(sim, *m, "bf16_gemm_m16n8k16", cfg, args));
  }
  return 0;
}
