// `warpforge ptx`: list the built-in kernels or print one's PTX.
#include <iostream>

#include "command.hpp"
#include "kernels/registry.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli {
namespace {

int run_ptx(const std::vector<std::string>& args) {
  std::string name;
  std::optional<ptx::Target> target;
  bool list = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list") {
      list = true;
    } else if (args[i] == "--target") {
      if (i + 1 >= args.size()) throw Error("--target needs a value: sm_80, sm_89, sm_90a or sm_100a");
      target = ptx::parse_target(args[++i]);
      if (!target) throw Error("unknown target '" + args[i] + "'; accepted: sm_80, sm_89, sm_90a, sm_100a");
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw Error("unknown option '" + args[i] + "'; see `warpforge ptx --help`");
    } else if (name.empty()) {
      name = args[i];
    } else {
      throw Error("one kernel at a time; got '" + name + "' and '" + args[i] + "'");
    }
  }
  if (list) {
    for (const auto& k : examples::builtin_kernels()) std::cout << k.name << "\t" << k.description << "\n";
    return 0;
  }
  if (name.empty()) throw Error("name a kernel (see `warpforge ptx --list`)");
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
