#include "ops/ptxas_record.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "ptx/ptxas_version.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::ops::testing {
namespace ptxas_record {
namespace {

constexpr const char* kRecordPath = WARPFORGE_SOURCE_DIR "/tests/ops/ptxas_record.txt";

std::string escaped(const std::string& log) {
  std::string out;
  for (char c : log) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[++i] == 'n' ? '\n' : text[i];
    } else {
      out += text[i];
    }
  }
  return out;
}

// The first kernel the PTX defines, to name its line for a reader of the record.
std::string entry_name(const std::string& text) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
  std::smatch m;
  return std::regex_search(text, m, entry) ? m[1].str() : "-";
}

struct Record {
  bool usable = false;  // recorded with the ptxas found here
  std::map<std::string, Entry> entries;
};

const Record& the_record() {
  static const Record record = [] {
    Record r;
    const auto ptxas = ptx::find_ptxas();
    std::ifstream in(kRecordPath);
    std::string version;
    if (!ptxas || !std::getline(in, version) || version != "# " + warpforge::testing::ptxas_version(*ptxas)) return r;
    r.usable = true;
    for (std::string line; std::getline(in, line);) {
      Entry e = parse(line);
      if (!e.key.empty()) r.entries[e.key] = std::move(e);
    }
    return r;
  }();
  return record;
}

}  // namespace

bool applies() { return the_record().usable; }

std::string key(const std::string& text, const std::string& arch, const std::vector<std::string>& extra_args) {
  runtime::Sha256 h;
  h.update(arch).update("\0", 1);
  for (const std::string& a : extra_args) h.update(a).update("\0", 1);
  h.update("\0", 1).update(text);
  return runtime::to_hex(h.finish());
}

std::string line(const std::string& text, const std::string& arch, const std::string& key,
                 const ptx::PtxasResult& r) {
  return entry_name(text) + ' ' + arch + ' ' + key + ' ' + (r.ok ? "ok" : "failed") + ' ' + escaped(r.log);
}

Entry parse(const std::string& line) {
  // kernel arch key ok|failed log
  std::istringstream in(line);
  std::string kernel, arch, key, verdict;
  if (line.starts_with("#") || !(in >> kernel >> arch >> key >> verdict) || key.size() != 64 ||
      (verdict != "ok" && verdict != "failed"))
    return {};
  std::string log;
  std::getline(in, log);
  if (!log.empty() && log.front() == ' ') log.erase(0, 1);
  return {.key = key, .ok = verdict == "ok", .log = unescaped(log)};
}

}  // namespace ptxas_record

ptx::PtxasResult recorded_ptxas(const std::string& text, const std::string& arch,
                                const std::vector<std::string>& extra_args) {
  const std::string key = ptxas_record::key(text, arch, extra_args);
  const char* record_to = std::getenv("WARPFORGE_RECORD_PTXAS");
  const ptxas_record::Record& record = ptxas_record::the_record();
  if (!record_to && record.usable) {
    if (const auto it = record.entries.find(key); it != record.entries.end())
      return {.ok = it->second.ok, .log = it->second.log, .cubin = {}};
  }
  ptx::PtxasResult r = ptx::run_ptxas(text, arch, extra_args);
  r.cubin.clear();
  if (record_to) {
    std::ofstream(record_to, std::ios::app) << ptxas_record::line(text, arch, key, r) << '\n';
  } else if (record.usable) {
    ADD_FAILURE() << "kernel " << ptxas_record::entry_name(text) << " for " << arch
                  << ": its PTX is not in tests/ops/ptxas_record.txt (it changed since the record was made; "
                     "ptxas assembled it, and this test's checks ran on its real log). Record the kernels "
                     "again: scripts/record-ptxas.sh";
  }
  return r;
}

}  // namespace warpforge::ops::testing
