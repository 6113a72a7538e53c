#include "difftest/truth_file.hpp"

#include <fstream>
#include <sstream>

namespace warpforge::difftest {

namespace {

constexpr const char* kMagic = "warpforge-gpu-truth 1";

[[noreturn]] void bad(const std::filesystem::path& path, const std::string& what) {
  throw TruthError("truth file " + path.string() + ": " + what +
                   "; re-record it with scripts/record-gpu-truth.sh");
}

// "key value..." -> value, refusing another key.
std::string field(std::istream& in, const std::filesystem::path& path, const std::string& key) {
  std::string line;
  if (!std::getline(in, line) || line.rfind(key + " ", 0) != 0)
    bad(path, "expected a line '" + key + " ...', found '" + line + "'");
  return line.substr(key.size() + 1);
}

}  // namespace

void write_truth(const std::filesystem::path& path, const TruthFile& file) {
  std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << kMagic << "\nfamily " << file.family << "\ndevice " << file.device << "\ndriver "
        << file.driver << "\nsms " << file.sm_count;
    if (file.seed != 0) out << "\nseed " << file.seed;  // absent: 0, as in older files
    out << "\nrecorded " << file.recorded << "\ngenerator " << file.generator << "\nunits "
        << file.entries.size() << "\n";
    for (const TruthEntry& e : file.entries) {
      out << "unit " << e.bytes.size() << " " << std::hex << e.seed << std::dec << " " << e.cases
          << " " << e.fingerprint << " " << (e.refused ? "refused" : "ok") << " " << e.unit << "\n";
      out.write(reinterpret_cast<const char*>(e.bytes.data()),
                static_cast<std::streamsize>(e.bytes.size()));
      out << "\n";
    }
    if (!out) throw TruthError("could not write " + partial.string());
  }
  std::filesystem::rename(partial, path);  // a reader never sees half a file
}

TruthFile read_truth(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TruthError("cannot open truth file " + path.string());
  std::string line;
  if (!std::getline(in, line) || line != kMagic)
    bad(path, "it does not start with '" + std::string(kMagic) + "'");
  TruthFile f;
  f.family = field(in, path, "family");
  f.device = field(in, path, "device");
  f.driver = field(in, path, "driver");
  if (in.peek() == 's') {  // absent: 0
    const std::string sms = field(in, path, "sms");
    const bool digits =
        !sms.empty() && sms.size() <= 6 && sms.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) bad(path, "its line 'sms " + sms + "' is no SM count (a number up to 999999)");
    f.sm_count = std::stoi(sms);
  }
  if (in.peek() == 's') {  // "seed": absent, 0
    const std::string seed = field(in, path, "seed");
    const bool digits = !seed.empty() && seed.size() <= 19 &&
                        seed.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      bad(path, "its line 'seed " + seed + "' is no recording seed (a number up to 19 digits)");
    f.seed = std::stoull(seed);
  }
  f.recorded = field(in, path, "recorded");
  f.generator = std::stoi(field(in, path, "generator"));
  if (f.generator != kGeneratorVersion)
    bad(path, "its inputs come from generator version " + std::to_string(f.generator) +
                  ", this build's is " + std::to_string(kGeneratorVersion));
  const std::size_t count = std::stoul(field(in, path, "units"));
  for (std::size_t i = 0; i < count; ++i) {
    std::istringstream head(field(in, path, "unit"));
    TruthEntry e;
    std::size_t bytes = 0;
    std::string status;
    head >> bytes >> std::hex >> e.seed >> std::dec >> e.cases >> e.fingerprint >> status;
    head.get();
    std::getline(head, e.unit);
    if (!head && !head.eof())
      bad(path, "unit " + std::to_string(i) + " has a malformed header line");
    if (status != "ok" && status != "refused")
      bad(path, "unit '" + e.unit + "' has status '" + status + "' (accepted: ok, refused)");
    e.refused = status == "refused";
    e.bytes.resize(bytes);
    in.read(reinterpret_cast<char*>(e.bytes.data()), static_cast<std::streamsize>(bytes));
    if (static_cast<std::size_t>(in.gcount()) != bytes || in.get() != '\n')
      bad(path, "unit '" + e.unit + "' is cut short (" + std::to_string(in.gcount()) + " of " +
                    std::to_string(bytes) + " bytes)");
    f.entries.push_back(std::move(e));
  }
  return f;
}

}  // namespace warpforge::difftest
