// The `warpforge` program's subcommands. Each lives in its own tools/*.cpp
// file and registers itself with a static Registration object; main.cpp only
// dispatches. A command file keeps its names in a namespace of its own
// (cli::<file name>), so that the unity build, which compiles several
// command files as one unit, sees no two `registration` or `Options`.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace warpforge::cli {

struct Command {
  std::string name;     // "demo", "ptx", ...
  std::string summary;  // one line for `warpforge --help`
  std::string help;     // the full text for `warpforge <name> --help`
  // Receives the arguments after the command name; returns the exit code.
  std::function<int(const std::vector<std::string>& args)> run;
};

const std::vector<Command>& commands();

struct Registration {
  explicit Registration(Command command);
};

}  // namespace warpforge::cli
