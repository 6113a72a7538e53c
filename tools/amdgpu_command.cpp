// `warpforge amdgpu`: list the built-in AMD (CDNA) kernels, print one's LLVM IR
// or assembly, or write its code object.
#include <fstream>
#include <iostream>
#include <optional>

#include "command.hpp"
#include "kernels/amd_registry.hpp"
#include "warpforge/amdgpu/llvm_ir.hpp"
#include "warpforge/amdgpu/toolchain.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli {
namespace {

int run_amdgpu(const std::vector<std::string>& args) {
  std::string name, output;
  amdgpu::Target target = amdgpu::Target::gfx942;
  bool list = false, assembly = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list") {
      list = true;
    } else if (args[i] == "-S") {
      assembly = true;
    } else if (args[i] == "--target" || args[i] == "-o") {
      if (i + 1 >= args.size())
        throw Error(
            args[i] + " needs a value: " +
            (args[i] == "-o" ? std::string("the code object's path") : amdgpu::accepted_targets()));
      if (args[i] == "-o")
        output = args[i + 1];
      else
        target = amdgpu::require_target(args[i + 1]);
      ++i;
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw Error("unknown option '" + args[i] + "'; see `warpforge amdgpu --help`");
    } else if (name.empty()) {
      name = args[i];
    } else {
      throw Error("one kernel at a time; got '" + name + "' and '" + args[i] + "'");
    }
  }
  if (list) {
    for (const auto& e : examples::amd_examples())
      std::cout << e.name << "\t" << e.description << "\n";
    return 0;
  }
  if (name.empty()) throw Error("name a kernel (see `warpforge amdgpu --list`)");
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
