// `warpforge ptx`: list the built-in kernels or print one's PTX.
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "kernels/registry.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/kernel_samples.hpp"

namespace warpforge::cli::ptx_command {
namespace {

int run_ptx(const std::vector<std::string>& raw) {
  Arguments args("ptx", raw);
  const bool list = args.flag("--list");
  std::optional<ptx::Target> target;
  if (const auto v = args.value("--target")) {
    target = ptx::parse_target(*v);
    if (!target) throw Error("--target '" + *v + "' refused; accepted: sm_80, sm_89, sm_90a, sm_100a");
  }
  if (list) {
    if (target) throw Error("--list names every kernel; --target chooses one kernel's target: give one of them");
    args.finish();  // --list takes nothing else
    for (const auto& k : examples::builtin_kernels()) std::cout << k.name << "\t" << k.description << "\n";
    for (const auto& k : ops::kernel_samples())
      std::cout << k.name << "\t" << k.description << " (" << ptx::name(k.target) << " only)\n";
    return 0;
  }
  const std::string name = args.positionals(1, 1, "kernel name (see `warpforge ptx --list`)")[0];
  args.finish();
  if (const auto* kernel = examples::find_builtin(name)) {
    std::cout << kernel->build(target.value_or(kernel->default_target)).to_ptx();
    return 0;
  }
  for (const auto& k : ops::kernel_samples()) {
    if (k.name != name) continue;
    if (target && *target != k.target)
      throw Error("--target " + std::string(ptx::name(*target)) + " refused for '" + name +
                  "': it is built for " + std::string(ptx::name(k.target)) +
                  " only (its instructions exist there alone); accepted: " +
                  std::string(ptx::name(k.target)));
    std::cout << k.build().to_ptx();
    return 0;
  }
  throw Error("no built-in kernel '" + name + "'; `warpforge ptx --list` shows them");
}

const Registration registration({
    "ptx",
    "print the PTX of a built-in kernel",
    "usage: warpforge ptx --list\n"
    "       warpforge ptx <kernel> [--target sm_80|sm_89|sm_90a|sm_100a]\n\n"
    "--list    names and descriptions of the built-in kernels: the examples, and the ops'\n"
    "          kernels for one sample problem each (the sm_100a ones: gemm_sm100a,\n"
    "          gemm_amax_sm100a)\n"
    "--target  the target to build for (default: the kernel's own, sm_80 for the examples;\n"
    "          the ops' kernels take only their own)\n",
    run_ptx,
});

}  // namespace
}  // namespace warpforge::cli::ptx_command
