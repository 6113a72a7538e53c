// `warpforge transpile`: PTX in, warpforge C++ out (tools/transpiler).
#include <cctype>
#include <filesystem>
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "command_files.hpp"
#include "ptx_file.hpp"
#include "transpiler/transpile.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::cli::transpile_command {
namespace {

constexpr const char* kUsage = "usage: warpforge transpile <in.ptx> [-o out.cpp] [--name NAME] [--main]\n";

// build_<name>: the file's stem with everything but letters and digits made '_'.
std::string name_from_path(const std::string& path) {
  std::string name;
  for (char c : std::filesystem::path(path).stem().string())
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "m_" + name;
  return name;
}

int run_transpile(const std::vector<std::string>& raw) {
  Arguments args("transpile", raw);
  transpiler::TranspileOptions options;
  const auto output = args.value("-o");
  const auto name = args.value("--name");
  options.with_main = args.flag("--main");
  const std::string input = args.positionals(1, 1, "<in.ptx>")[0];
  args.finish();
  if (output) require_file_name("-o", *output);
  options.name = name ? *name : name_from_path(input);
  options.source = std::filesystem::path(input).filename().string();
  // The transpiler writes what the module says; a module the verifier
  // rejects (a branch to no label, a register never declared) would give C++
  // that builds a broken module, so it is refused as `check` refuses it.
  const ptx::Module module = ptx::parse(read_ptx_file(input), input);
  if (report_problems("transpile", input, ptx::verify(module))) return 1;
  std::string source = transpiler::transpile(module, options);
  if (output)
    write_named_file("-o", *output, source);
  else
    std::cout << source;
  return 0;
}

const Registration registration({
    .name = "transpile",
    .summary = "turn a PTX file into warpforge C++ that rebuilds it",
    .help = std::string(kUsage) +
            "\n"
            "Parses and verifies the PTX file (a module `warpforge check` rejects is\n"
            "refused, with its problems) and writes C++ (to stdout, or to out.cpp with -o) that\n"
            "builds the same module with warpforge's DSL: a function\n"
            "`warpforge::ptx::Module build_<name>()` whose result compares equal to the\n"
            "parsed input. NAME defaults to the input file's stem; --main adds a main()\n"
            "that prints the module's PTX. Registers and labels keep their PTX names,\n"
            "exactly repetitive runs of instructions become C++ for loops, and typed\n"
            "wrappers replace k.inst(...) where they emit the identical instruction.\n"
            "Compile the output against warpforge's headers and library.\n",
    .run = run_transpile,
});

}  // namespace
}  // namespace warpforge::cli::transpile_command
