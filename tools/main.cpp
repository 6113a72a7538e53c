// warpforge: the command-line program. Dispatches to the registered commands
// and turns whatever they throw into one line on stderr and exit status 1:
// no input makes it abort.
#include <algorithm>
#include <iostream>
#include <new>

#include "command.hpp"
#include "warpforge/error.hpp"
#include "warpforge/version.hpp"

namespace warpforge::cli {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> all;
  return all;
}

void print_usage(std::ostream& out) {
  out << "usage: warpforge <command> [options]\n       warpforge --version\n\ncommands:\n";
  auto sorted = commands();
  std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const auto& c : sorted) out << "  " << c.name << std::string(12 - std::min<size_t>(c.name.size(), 11), ' ') << c.summary << "\n";
  out << "\n`warpforge <command> --help` describes one command.\n";
}
}  // namespace

const std::vector<Command>& commands() { return registry(); }

Registration::Registration(Command command) { registry().push_back(std::move(command)); }

}  // namespace warpforge::cli

int main(int argc, char** argv) {
  using namespace warpforge::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    if (args.size() > 1) {
      std::cerr << "warpforge: --version takes no arguments; got '" << args[1] << "'\n";
      return 2;
    }
    std::cout << "warpforge " << WARPFORGE_VERSION << "\n";
    return 0;
  }
  for (const auto& c : commands()) {
    if (c.name != args[0]) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
      std::cout << c.help;
      return 0;
    }
    try {
      return c.run(rest);
    } catch (const std::bad_alloc&) {
      std::cerr << "warpforge " << c.name << ": out of host memory; try a smaller problem\n";
    } catch (const std::exception& e) {  // warpforge::Error, and the standard library's
      std::cerr << "warpforge " << c.name << ": " << e.what() << "\n";
    } catch (...) {
      std::cerr << "warpforge " << c.name << ": stopped by an unknown exception\n";
    }
    return 1;
  }
  std::cerr << "warpforge: unknown command '" << args[0] << "'\n";
  print_usage(std::cerr);
  return 2;
}
