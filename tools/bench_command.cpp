// `warpforge bench <name> [args]`: runs the benchmark program bench_<name>
// built beside this executable (build/bench/), passing the arguments on.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli::bench_command {
namespace {

int run_bench(const std::vector<std::string>& args) {
  if (args.empty())
    throw Error("which benchmark? `warpforge bench gemm` runs build/bench/bench_gemm");
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw Error("cannot find this executable's directory (/proc/self/exe: " + ec.message() + ")");
  const auto program = self.parent_path() / "bench" / ("bench_" + args[0]);
  if (!std::filesystem::exists(program))
    throw Error(program.string() + " does not exist: this build has no '" + args[0] +
                "' benchmark (`cmake --build " + self.parent_path().string() + " --target bench_" + args[0] +
                "` builds it where there is one; `make` builds them only where there is a GPU, "
                "bench_gemm only where CMake finds cuBLAS)");
  std::vector<std::string> argv_strings = {program.string()};
  argv_strings.insert(argv_strings.end(), args.begin() + 1, args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(program.c_str(), argv.data());
  throw Error("could not run " + program.string() + ": " + std::strerror(errno));
}

const Registration registration({
    "bench",
    "run a benchmark program from build/bench (e.g. `warpforge bench gemm`)",
    "usage: warpforge bench <name> [arguments]\n\n"
    "Runs build/bench/bench_<name>, the benchmark built beside this executable, with the\n"
    "arguments given. `warpforge bench gemm [--kernel sm80|sm90a|auto] [--shapes MxNxK,...]\n"
    "[--reps R] [--out-dtype bf16|f32] [--b-layout row|col] [--config TEXT] [--sweep llm]\n"
    "[--timing each|queued] [--block-scaled mxfp8|mxfp4|nvfp4 [--tile MxN] [--cluster MxN]]`\n"
    "compares ops::gemm (or ops::GemmAmax) with cuBLAS's bf16 GEMM (built only where CMake\n"
    "finds cuBLAS); --config\n"
    "takes a kernel configuration as `warpforge gemm` prints it, e.g. '128x256x64 s3 w2x1\n"
    "c2x1'; --tile and --cluster the block-scaled op's mma tile and cluster shape.\n",
    run_bench,
});

}  // namespace
}  // namespace warpforge::cli::bench_command
