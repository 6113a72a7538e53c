// `warpforge amdgpu`: list the built-in AMD (CDNA) kernels, print one's LLVM IR
// or assembly, or write its code object.
#include <fstream>
#include <iostream>
#include <optional>

#include "arguments.hpp"
#include "command.hpp"
#include "kernels/amd_registry.hpp"
#include "warpforge/amdgpu/llvm_ir.hpp"
#include "warpforge/amdgpu/toolchain.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli {
namespace {

int run_amdgpu(const std::vector<std::string>& raw) {
  Arguments args("amdgpu", raw);
  const bool list = args.flag("--list");
  const bool assembly = args.flag("-S");
  const std::string output = args.value("-o").value_or("");
  const auto target_name = args.value("--target");
  const amdgpu::Target target = target_name ? amdgpu::require_target(*target_name) : amdgpu::Target::gfx942;
  if (list) {
    args.finish();  // --list takes nothing else
    for (const auto& e : examples::amd_examples())
      std::cout << e.name << "\t" << e.description << "\n";
    return 0;
  }
  const std::string name = args.positionals(1, 1, "kernel name (see `warpforge amdgpu --list`)")[0];
  args.finish();
  if (assembly && !output.empty())
    throw Error("-S and -o exclude each other: print assembly or write a code object");
  const auto* example = examples::find_amd_example(name);
  if (!example)
    throw Error("no built-in AMD kernel '" + name + "'; `warpforge amdgpu --list` shows them");
  std::string ir = amdgpu::to_llvm_ir(example->build(target), target);
  if (assembly) {
    std::cout << amdgpu::compile_to_assembly(ir, target);
  } else if (!output.empty()) {
    std::vector<char> object = amdgpu::compile_to_code_object(ir, target);
    std::ofstream out(output, std::ios::binary);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out) throw Error("cannot write " + output);
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
}  // namespace warpforge::cli
