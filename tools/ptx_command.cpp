// `warpforge ptx`: list the built-in kernels or print one's PTX.
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "kernels/registry.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli {
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
    args.finish();  // --list takes nothing else
    for (const auto& k : examples::builtin_kernels()) std::cout << k.name << "\t" << k.description << "\n";
    return 0;
  }
  const std::string name = args.positionals(1, 1, "kernel name (see `warpforge ptx --list`)")[0];
  args.finish();
  const auto* kernel = examples::find_builtin(name);
  if (!kernel) throw Error("no built-in kernel '" + name + "'; `warpforge ptx --list` shows them");
  std::cout << kernel->build(target.value_or(kernel->default_target)).to_ptx();
  return 0;
}

const Registration registration({
    "ptx",
    "print the PTX of a built-in kernel",
    "usage: warpforge ptx --list\n"
    "       warpforge ptx <kernel> [--target sm_80|sm_89|sm_90a|sm_100a]\n\n"
    "--list    names and descriptions of the built-in kernels\n"
    "--target  the target to build for (default: the kernel's own, sm_80 for the examples)\n",
    run_ptx,
});

}  // namespace
}  // namespace warpforge::cli
