// `warpforge check`: parse a PTX file, verify its structure, count what it
// holds, and assemble it with ptxas when the CUDA toolkit is present.
#include <unistd.h>
#include <filesystem>
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "ptx_file.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/ptxas.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::cli::check_command {
namespace {

struct Counts {
  int entries = 0, functions = 0, declarations = 0, variables = 0, extern_functions = 0;
};

Counts count(const ptx::Module& m) {
  Counts c;
  for (const auto& item : m.items) {
    if (const auto* f = std::get_if<ptx::Function>(&item)) {
      if (!f->body) {
        ++c.declarations;
        if (f->linkage == ptx::Linkage::extern_) ++c.extern_functions;
      } else if (f->is_entry) {
        ++c.entries;
      } else {
        ++c.functions;
      }
    } else if (std::holds_alternative<ptx::Variable>(item)) {
      ++c.variables;
    }
  }
  return c;
}

// ptxas for the module's own target; relocatable (-c) when it declares
// extern functions that another object would provide.
int assemble(const std::string& path, const ptx::Module& m, const Counts& c, bool quiet) {
  auto ptxas = ptx::find_ptxas();
  if (!ptxas) {
    std::cout << "ptxas: not found on PATH or in /usr/local/cuda/bin; skipped\n";
    return 0;
  }
  const std::string cubin = (std::filesystem::temp_directory_path() /
                             ("warpforge-check-" + std::to_string(::getpid()) + ".cubin"))
                                .string();
  std::vector<std::string> args = {"-arch=" + m.target.at(0), path, "-o", cubin};
  if (c.extern_functions) args.insert(args.begin(), "-c");
  ptx::ToolRun run = ptx::run_tool(*ptxas, args);
  std::filesystem::remove(cubin);
  if (run.exit_code != 0) {
    std::cerr << "warpforge check: " << path << ": ptxas failed (" << run.status() << ")\n"
              << run.output;
    return 1;
  }
  std::cout << "ptxas: ok (" << m.target.at(0) << (c.extern_functions ? ", relocatable" : "")
            << ")\n";
  if (!quiet) std::cout << run.output;
  return 0;
}

int run_check(const std::vector<std::string>& raw) {
  Arguments args("check", raw);
  const bool use_ptxas = !args.flag("--no-ptxas");
  const std::string path = args.positionals(1, 1, "<in.ptx>")[0];
  args.finish();
  const ptx::Module m = ptx::parse(read_ptx_file(path), path);
  const Counts c = count(m);
  std::cout << path << ": PTX " << m.version_major << "." << m.version_minor << ", target";
  for (const auto& t : m.target) std::cout << " " << t;
  std::cout << "\n  " << c.entries << " entries, " << c.functions << " functions, "
            << c.declarations << " declarations, " << c.variables << " module variables\n";
  if (report_problems("check", path, ptx::verify(m))) return 1;
  std::cout << "structure: ok\n";
  return use_ptxas ? assemble(path, m, c, true) : 0;
}

const Registration registration({
    .name = "check",
    .summary = "parse, verify and assemble a PTX file",
    .help = "usage: warpforge check [--no-ptxas] <in.ptx>\n\n"
            "Parses the PTX file, reports its version, target and how many entries,\n"
            "functions, declarations and module variables it has, and verifies it:\n"
            "functions and variables defined once, labels unique, branch and call targets\n"
            "that exist, registers declared before use; a .version and .target of the PTX\n"
            "ISA, opcodes that are instructions, instructions the target has, and register\n"
            "operands whose types fit the instruction's type (PTX ISA 6.1). Then, unless\n"
            "--no-ptxas is given, assembles it with ptxas (found on PATH or in\n"
            "/usr/local/cuda/bin) for the module's target, relocatable when it declares\n"
            "extern functions; without ptxas that step is skipped, saying so.\n\n"
            "The report goes to stdout; each problem, and ptxas's errors, to stderr.\n"
            "Exit status: 0 when every step passed, 1 on bad usage, a file that is not a\n"
            "regular file (or over 256 MiB), a parse error, a problem found or a ptxas\n"
            "failure (a crash is named by its signal; WARPFORGE_TOOL_TIMEOUT limits\n"
            "ptxas's time, 600 s by default).\n",
    .run = run_check,
});

}  // namespace
}  // namespace warpforge::cli::check_command
