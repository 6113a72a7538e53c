#include "ptx/same_machine_code.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <vector>

#include "ptx/cubin_sections.hpp"
#include "ptx/ptxas_version.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/runtime/sha256.hpp"

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

// Sections that record where PTX lines went, which the emitter's layout
// changes: the PTX text itself (.nv_debug_ptx_txt), the SASS-to-PTX line map
// (.nv_debug_line_sass and its relocations, .rel.nv_debug_line_sass) and the
// line-numbered local symbol names of .strtab and .symtab.
bool records_lines(const std::string& section) {
  return section.ends_with(".nv_debug_ptx_txt") || section.ends_with(".nv_debug_line_sass") ||
         section == ".strtab" || section == ".symtab";
}

// What differs between two cubins built with debug or line information,
// outside the sections that record PTX lines.
std::string section_difference(const std::vector<std::uint8_t>& a,
                               const std::vector<std::uint8_t>& b) {
  const Cubin want = read_cubin(a), got = read_cubin(b);
  std::ostringstream out;
  std::vector<std::string> want_names, got_names;
  for (const auto& [section, bytes] : want.sections) want_names.push_back(section);
  for (const auto& [section, bytes] : got.sections) got_names.push_back(section);
  if (want_names != got_names) return "the cubins have different sections";
  for (const auto& [section, bytes] : want.sections) {
    if (records_lines(section)) continue;
    if (bytes != got.sections.at(section)) out << "section " << section << " differs; ";
  }
  if (want.symbols.size() != got.symbols.size()) return out.str() + "the symbol counts differ";
  for (std::size_t i = 0; i < want.symbols.size(); ++i)
    if (without_line_suffix(want.symbols[i].name) != without_line_suffix(got.symbols[i].name) ||
        want.symbols[i].fields != got.symbols[i].fields)
      out << "symbol " << want.symbols[i].name << " differs; ";
  return out.str();
}

// The digest of what the comparison of `how` looks at: the whole cubin when
// exact, else every section's name, the contents of those that do not record
// PTX lines, and the symbols without their line suffixes (section_difference).
std::string compared_digest(const std::vector<std::uint8_t>& cubin, const Assembly& how) {
  runtime::Sha256 h;
  if (how.exact) return runtime::to_hex(h.update(cubin.data(), cubin.size()).finish());
  const Cubin c = read_cubin(cubin);
  // Each field preceded by its length, so that no two different cubins
  // serialise alike.
  auto field = [&h](const void* data, std::size_t bytes) {
    const std::uint64_t length = bytes;
    h.update(&length, sizeof length).update(data, bytes);
  };
  for (const auto& [section, bytes] : c.sections) {
    field(section.data(), section.size());
    if (records_lines(section)) field(nullptr, 0);
    else field(bytes.data(), bytes.size());
  }
  for (const Symbol& symbol : c.symbols) {
    const std::string name = without_line_suffix(symbol.name);
    field(name.data(), name.size());
    field(symbol.fields.data(), symbol.fields.size());
  }
  return runtime::to_hex(h.finish());
}

// The recorded digests' file, beside the corpus's PTX; its first line names
// the ptxas that assembled them.
constexpr const char* kRecordFile = "machine-code.txt";

// The corpus's recorded digests (tests/corpus/ptx/machine-code.txt), read
// once: empty when the file is missing or was recorded with another ptxas
// than `ptxas`, whose machine code may differ.
const std::map<std::string, std::string>& recorded_digests(const std::string& ptxas) {
  static const std::map<std::string, std::string> digests = [&] {
    std::map<std::string, std::string> out;
    std::ifstream in(fs::path(WARPFORGE_CORPUS_DIR) / "ptx" / kRecordFile);
    std::string version;
    if (!std::getline(in, version) || version != "# " + ptxas_version(ptxas)) return out;
    for (std::string name, digest; in >> name >> digest;) out[name] = digest;
    return out;
  }();
  return digests;
}

// The round trips already seen to give the original's machine code
// (tests/corpus/ptx/same-machine-code.txt, scripts/record-ptxas.sh): the
// digest of the assembly's flags, the original and the rebuilt text, one a
// line after the ptxas build that assembled them; read once, empty when
// recorded with another ptxas. A text not in it is assembled.
constexpr const char* kSameRecordFile = "same-machine-code.txt";

std::string round_trip_digest(const std::string& original, const std::string& rebuilt, const Assembly& how) {
  runtime::Sha256 h;
  h.update(how.target).update(how.relocatable ? "\1" : "\0", 1).update(how.exact ? "\1" : "\0", 1);
  const std::uint64_t length = original.size();  // so that no two pairs hash alike
  h.update(&length, sizeof length).update(original).update(rebuilt);
  return runtime::to_hex(h.finish());
}

const std::set<std::string>& recorded_round_trips(const std::string& ptxas) {
  static const std::set<std::string> digests = [&] {
    std::set<std::string> out;
    std::ifstream in(fs::path(WARPFORGE_CORPUS_DIR) / "ptx" / kSameRecordFile);
    std::string version;
    if (!std::getline(in, version) || version != "# " + ptxas_version(ptxas)) return out;
    for (std::string name, digest; in >> name >> digest;) out.insert(digest);
    return out;
  }();
  return digests;
}

// Assembles the rebuilt text, and the original where its machine code's
// digest is not recorded, and compares them (machine_code_difference).
std::string assemble_and_compare(const std::string& ptxas, const std::string& original, const std::string& rebuilt,
                                 const Assembly& how, const char* record_to) {
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
  const bool recording = record_to && !how.corpus_name.empty();
  const auto got = assemble(rebuilt, "rebuilt");
  if (!failures.empty()) return failures;
  if (got.empty()) return "ptxas wrote an empty cubin";
  // Where the original's machine code was recorded for this ptxas, the same
  // digest is the same machine code; a different one is looked at below,
  // from the original's own assembly, to say what differs.
  if (!recording && !how.corpus_name.empty()) {
    const auto& recorded = recorded_digests(ptxas);
    if (const auto it = recorded.find(how.corpus_name);
        it != recorded.end() && it->second == compared_digest(got, how))
      return "";
  }
  const auto want = assemble(original, "original");
  if (!failures.empty()) return failures;
  if (want.empty()) return "ptxas wrote an empty cubin";
  if (recording) {
    const bool first = !fs::exists(record_to) || fs::file_size(record_to) == 0;
    std::ofstream record(record_to, std::ios::app);
    if (first) record << "# " << ptxas_version(ptxas) << '\n';
    record << how.corpus_name << ' ' << compared_digest(want, how) << '\n';
  }
  if (how.exact) return want == got ? "" : "the cubins differ";
  return section_difference(want, got);
}

}  // namespace

Assembly corpus_assembly(const fs::path& corpus_file) {
  const std::string stem = corpus_file.stem().string();  // source.target.variant
  const std::size_t last = stem.rfind('.'), mid = stem.rfind('.', last - 1);
  const std::string variant = stem.substr(last + 1);
  return {.target = stem.substr(mid + 1, last - mid - 1),
          .relocatable = variant == "rdc",
          .exact = variant == "O3",
          .corpus_name = stem};
}

std::string machine_code_difference(const std::string& ptxas, const std::string& original,
                                    const std::string& rebuilt, const Assembly& how) {
  const char* record_to = std::getenv("WARPFORGE_RECORD_MACHINE_CODE");
  const bool recording = record_to && !how.corpus_name.empty();
  const char* record_same_to = std::getenv("WARPFORGE_RECORD_SAME_MACHINE_CODE");
  const std::string round_trip = round_trip_digest(original, rebuilt, how);
  if (!recording && !record_same_to && !how.corpus_name.empty() && recorded_round_trips(ptxas).contains(round_trip))
    return "";
  const std::string difference = assemble_and_compare(ptxas, original, rebuilt, how, record_to);
  if (record_same_to && difference.empty() && !how.corpus_name.empty())
    std::ofstream(record_same_to, std::ios::app) << how.corpus_name << ' ' << round_trip << '\n';
  return difference;
}

}  // namespace warpforge::testing
