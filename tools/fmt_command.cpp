// `warpforge fmt`: parse a PTX file and write it back in the emitter's
// canonical form.
#include <iostream>

#include "arguments.hpp"
#include "command.hpp"
#include "ptx_file.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::cli::fmt_command {
namespace {

int run_fmt(const std::vector<std::string>& raw) {
  Arguments args("fmt", raw);
  const std::string path = args.positionals(1, 1, "<in.ptx>")[0];
  args.finish();
  std::cout << ptx::emit(ptx::parse(read_ptx_file(path), path));
  return 0;
}

const Registration registration({
    .name = "fmt",
    .summary = "re-emit a PTX file in canonical form",
    .help = "usage: warpforge fmt <in.ptx>\n\n"
            "Parses the PTX file into warpforge's IR and writes it back to stdout as the\n"
            "emitter writes it: one statement per line, tabs for nesting, comments dropped,\n"
            "`.reg .b32 a, b;` split into one declaration per name. The result assembles\n"
            "to the same machine code. A parse error names file:line:column, the token\n"
            "found and what was expected, and exits with status 1.\n",
    .run = run_fmt,
});

}  // namespace
}  // namespace warpforge::cli::fmt_command
