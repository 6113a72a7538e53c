#include "ptx/same_machine_code.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "ptx/cubin_sections.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"

namespace warpforge::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ptxas numbers the names it gives function-local shared variables after
// their PTX source line ($___ZZ4kernE4tile__29); the emitter's lines differ.
std::string without_line_suffix(const std::string& name) {
  static const std::regex suffix(R"(^(\$___.*)__[0-9]+$)");
  return std::regex_replace(name, suffix, "$1");
}

class Scratch {
 public:
  Scratch() {
    static std::atomic<int> serial{0};
    dir_ = fs::temp_directory_path() / ("warpforge-machine-code-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(serial++));
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

// What differs between two cubins built with debug or line information,
// outside the PTX text itself (.nv_debug_ptx_txt), the SASS-to-PTX line map
// (.nv_debug_line_sass and its relocations, .rel.nv_debug_line_sass) and the
// line-numbered local symbol names of .strtab and .symtab.
std::string section_difference(const std::vector<std::uint8_t>& a,
                               const std::vector<std::uint8_t>& b) {
  const Cubin want = read_cubin(a), got = read_cubin(b);
  std::ostringstream out;
  std::vector<std::string> want_names, got_names;
  for (const auto& [section, bytes] : want.sections) want_names.push_back(section);
  for (const auto& [section, bytes] : got.sections) got_names.push_back(section);
  if (want_names != got_names) return "the cubins have different sections";
  for (const auto& [section, bytes] : want.sections) {
    if (section.ends_with(".nv_debug_ptx_txt") || section.ends_with(".nv_debug_line_sass") ||
        section == ".strtab" || section == ".symtab")
      continue;
    if (bytes != got.sections.at(section)) out << "section " << section << " differs; ";
  }
  if (want.symbols.size() != got.symbols.size()) return out.str() + "the symbol counts differ";
  for (std::size_t i = 0; i < want.symbols.size(); ++i)
    if (without_line_suffix(want.symbols[i].name) != without_line_suffix(got.symbols[i].name) ||
        want.symbols[i].fields != got.symbols[i].fields)
      out << "symbol " << want.symbols[i].name << " differs; ";
  return out.str();
}

}  // namespace

Assembly corpus_assembly(const fs::path& corpus_file) {
  const std::string stem = corpus_file.stem().string();  // source.target.variant
  const std::size_t last = stem.rfind('.'), mid = stem.rfind('.', last - 1);
  const std::string variant = stem.substr(last + 1);
  return {.target = stem.substr(mid + 1, last - mid - 1),
          .relocatable = variant == "rdc",
          .exact = variant == "O3"};
}

std::string machine_code_difference(const std::string& ptxas, const std::string& original,
                                    const std::string& rebuilt, const Assembly& how) {
  Scratch scratch;
  std::string failures;
  auto assemble = [&](const std::string& text, const std::string& stem) {
    const fs::path ptx = scratch.dir() / (stem + ".ptx"), cubin = scratch.dir() / (stem + ".cubin");
    std::ofstream(ptx, std::ios::binary) << text;
    std::vector<std::string> args = {"-arch=" + how.target, ptx.string(), "-o", cubin.string()};
    if (how.relocatable) args.insert(args.begin(), "-c");
    ptx::ToolRun run = ptx::run_tool(ptxas, args);
    if (run.exit_code != 0) failures += "ptxas refuses the " + stem + " PTX:\n" + run.output;
    return read_bytes(cubin);
  };
  const auto want = assemble(original, "original"), got = assemble(rebuilt, "rebuilt");
  if (!failures.empty()) return failures;
  if (want.empty()) return "ptxas wrote an empty cubin";
  if (how.exact) return want == got ? "" : "the cubins differ";
  return section_difference(want, got);
}

}  // namespace warpforge::testing
