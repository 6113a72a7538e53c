// `warpforge amdgpu`: list the built-in AMD (CDNA) kernels, print one's LLVM IR
// or assembly, or write its code object.
#include <iostream>
#include <optional>

#include "arguments.hpp"
#include "command.hpp"
#include "command_files.hpp"
#include "kernels/amd_registry.hpp"
#include "warpforge/amdgpu/llvm_ir.hpp"
#include "warpforge/amdgpu/toolchain.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli::amdgpu_command {
namespace {

int run_amdgpu(const std::vector<std::string>& raw) {
  Arguments args("amdgpu", raw);
  const bool list = args.flag("--list");
  const bool assembly = args.flag("-S");
  const auto output = args.value("-o");
  const auto target_name = args.value("--target");
  const amdgpu::Target target = target_name ? amdgpu::require_target(*target_name) : amdgpu::Target::gfx942;
  if (list) {
    if (target_name) throw Error("--list names every kernel; --target chooses one kernel's target: give one of them");
    args.finish();  // --list takes nothing else
    for (const auto& e : examples::amd_examples())
      std::cout << e.name << "\t" << e.description << "\n";
    return 0;
  }
  const std::string name = args.positionals(1, 1, "kernel name (see `warpforge amdgpu --list`)")[0];
  args.finish();
  if (assembly && output)
    throw Error("-S and -o exclude each other: print assembly or write a code object");
  if (output) require_file_name("-o", *output);
  const auto* example = examples::find_amd_example(name);
  if (!example)
    throw Error("no built-in AMD kernel '" + name + "'; `warpforge amdgpu --list` shows them");
  std::string ir = amdgpu::to_llvm_ir(example->build(target), target);
  if (assembly) {
    std::cout << amdgpu::compile_to_assembly(ir, target);
  } else if (output) {
    const std::vector<char> object = amdgpu::compile_to_code_object(ir, target);
    write_named_file("-o", *output, std::string_view(object.data(), object.size()));
  } else {
    std::cout << ir;
  }
  return 0;
}

const Registration registration({
    "amdgpu",
    "AMD CDNA kernels: print LLVM IR or assembly, or write a code object",
    "usage: warpforge amdgpu --list\n"
    "       warpforge amdgpu <kernel> [--target gfx90a|gfx942] [-S | -o file.hsaco]\n\n"
    "--list    names and descriptions of the built-in AMD kernels\n"
    "--target  the processor to build for (default gfx942)\n"
    "-S        print the target assembly (LLVM's opt and llc)\n"
    "-o FILE   write the linked code object (opt, llc, ld.lld)\n"
    "without -S or -o the kernel's LLVM IR is printed\n",
    run_amdgpu,
});

}  // namespace
}  // namespace warpforge::cli::amdgpu_command
