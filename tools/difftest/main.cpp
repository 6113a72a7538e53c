// warpforge-difftest: the differential harness's program (issue 26).
//   warpforge-difftest list                       every family and unit, and what is not covered
//   warpforge-difftest names                      the families' names, one a line
//   warpforge-difftest record --device cuda|sim --out DIR [--family NAME]... [--seed N] [--missing]
//   warpforge-difftest replay --truth DIR [--family NAME]... [--markdown]
//   warpforge-difftest differences --truth DIR --family NAME [--unit TEXT] [--limit N]
//                                                 the differing cases, with their inputs
//   warpforge-difftest inputs --family NAME --unit NAME --out FILE [--seed N]
//                                                 a unit's input words (little-endian u32, thread
//                                                 by thread)
//   warpforge-difftest mufu --device cuda|sim --out DIR [--thin N] [--function NAME]...
//                                                 the f32 .approx forms over their whole input
//                                                 domains, as ulps from the correctly rounded
//                                                 results (mufu_sweep.hpp); --function: only those
// record writes DIR/<family>.truth: --seed N (not 0) draws every unit's
// random inputs anew, for an out-of-sample recording; --missing keeps the
// units DIR/<family>.truth already holds (when it is of the same GPU,
// driver, SM count and seed) and runs only the others. replay runs each
// recorded unit on the simulator, with the inputs of the file's seed, and
// compares every bit (exit status 1 on any difference or unrecorded unit; a
// family without a file is reported as skipped), then sums up all families.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "difftest/coverage.hpp"
#include "difftest/harness.hpp"
#include "difftest/mufu_sweep.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

using namespace warpforge;
using namespace warpforge::difftest;

namespace {

struct Options {
  std::string command, device = "sim", out, truth;
  std::set<std::string> families;
  bool markdown = false;
  std::string unit;
  std::size_t limit = 20;
  std::uint64_t seed = 0;
  bool missing = false;
  std::uint32_t thin = 1;
  std::set<std::string> functions;  // mufu --function
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "warpforge-difftest: " << why
            << "\nusage: warpforge-difftest list | names\n"
               "       warpforge-difftest record --device cuda|sim --out DIR [--family NAME]... "
               "[--seed N] [--missing]\n"
               "       warpforge-difftest replay --truth DIR [--family NAME]... [--markdown]\n"
               "       warpforge-difftest differences --truth DIR --family NAME [--unit TEXT] "
               "[--limit N]\n"
               "       warpforge-difftest inputs --family NAME --unit NAME --out FILE [--seed N]\n"
               "       warpforge-difftest mufu --device cuda|sim --out DIR [--thin N] [--function NAME]...\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  if (argc < 2) usage("no command");
  Options o;
  o.command = argv[1];
  if (o.command != "list" && o.command != "names" && o.command != "record" &&
      o.command != "replay" && o.command != "differences" && o.command != "inputs" &&
      o.command != "mufu")
    usage("unknown command '" + o.command +
          "' (accepted: list, names, record, replay, differences, inputs, mufu)");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device")
      o.device = value();
    else if (a == "--out")
      o.out = value();
    else if (a == "--truth")
      o.truth = value();
    else if (a == "--family")
      o.families.insert(value());
    else if (a == "--markdown")
      o.markdown = true;
    else if (a == "--unit")
      o.unit = value();
    else if (a == "--limit")
      o.limit = std::stoul(value());
    else if (a == "--seed") {
      const std::string n = value();
      if (n.empty() || n.size() > 19 || n.find_first_not_of("0123456789") != std::string::npos)
        usage("--seed " + n +
              " (accepted: a number of up to 19 digits; 0 is the committed "
              "recordings' inputs)");
      o.seed = std::stoull(n);
    } else if (a == "--missing") {
      o.missing = true;
    } else if (a == "--function") {
      o.functions.insert(value());
    } else if (a == "--thin") {
      const std::string n = value();
      if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos ||
          std::stoul(n) == 0)
        usage("--thin " + n + " (accepted: a positive number of up to 9 digits)");
      o.thin = static_cast<std::uint32_t>(std::stoul(n));
    } else
      usage("unknown option '" + a + "'");
  }
  for (const auto& f : o.families)
    if (!find_family(f)) {
      std::string known;
      for (const auto& fam : families()) known += (known.empty() ? "" : ", ") + fam.name;
      usage("no family '" + f + "' (known: " + known + ")");
    }
  return o;
}

bool selected(const Options& o, const Family& f) {
  return o.families.empty() || o.families.count(f.name);
}

int list() {
  for (const Family& f : families()) {
    std::int64_t cases = 0;
    for (const Unit& u : f.units) cases += u.cases;
    std::cout << f.name << " (" << f.title << "): " << f.units.size() << " units, " << cases
              << " cases\n";
    for (const Unit& u : f.units) std::cout << "  " << u.name << "  [" << u.cases << "]\n";
  }
  std::cout << "\nnot covered:\n";
  for (const Uncovered& u : uncovered()) std::cout << "  " << u.form << ": " << u.reason << "\n";
  return 0;
}

// The units of DIR/<family>.truth that --missing keeps: none where there is
// no such file, or it cannot be kept (another GPU, say), which it reports.
std::optional<TruthFile> kept_recording(const std::filesystem::path& path, const Family& f,
                                        const runtime::Device& device, const std::string& driver,
                                        std::uint64_t seed) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    TruthFile old = read_truth(path);
    const std::string why = why_not_kept(old, device, driver, seed);
    if (why.empty()) return old;
    std::cout << f.name << ": recording every unit again: " << why << "\n";
  } catch (const TruthError& e) {
    std::cout << f.name << ": recording every unit again: " << e.what() << "\n";
  }
  return std::nullopt;
}

// The device a recording runs on (--device).
runtime::Device recording_device(const Options& o) {
  if (o.out.empty()) usage(o.command + " needs --out DIR");
  if (o.device != "cuda" && o.device != "sim")
    usage("--device " + o.device + " (accepted: cuda, sim)");
  // The simulator stands for the GPUs the truth is of (an H100 or H200, 132
  // SMs each), so that the units whose configuration depends on the SM
  // count (split K, stream-K) record the same configuration in a self-test.
  sim::SimOptions h100;
  h100.sm_count = 132;
  return o.device == "cuda" ? runtime::Device::cuda(0) : runtime::Device(sim::make_backend(h100));
}

int mufu(const Options& o) {
  const runtime::Device device = recording_device(o);
  std::cout << "mufu sweep on " << device.properties().name
            << (o.thin > 1 ? ", every " + std::to_string(o.thin) + "th input" : "") << "\n";
  mufu_sweep(device, o.out, o.thin, o.functions);
  return 0;
}

int record(const Options& o) {
  const runtime::Device device = recording_device(o);
  std::string driver = "simulator";
  if (auto* cuda = dynamic_cast<runtime::CudaBackend*>(&device.backend()))
    driver = std::to_string(cuda->driver_version());
  std::cout << "recording on " << device.properties().name << ", driver " << driver
            << (o.seed ? ", seed " + std::to_string(o.seed) : "") << "\n";
  bool ok = true;
  for (const Family& f : families()) {
    if (!selected(o, f)) continue;
    if (!f.unavailable.empty()) {
      std::cout << f.name << ": NOT RECORDED: " << f.unavailable << "\n";
      ok = false;
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto path = std::filesystem::path(o.out) / (f.name + ".truth");
    const std::optional<TruthFile> kept =
        o.missing ? kept_recording(path, f, device, driver, o.seed) : std::nullopt;
    std::size_t ran = 0;
    TruthFile file = record_family(f, device, o.seed, kept ? &*kept : nullptr,
                                   [&](const std::string&) { ++ran; });
    file.driver = driver;
    std::size_t bytes = 0, refused = 0;
    for (const auto& e : file.entries) {
      bytes += e.bytes.size();
      refused += e.refused;
    }
    write_truth(path, file);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << f.name << ": " << file.entries.size() << " units (" << refused << " refused";
    if (kept) std::cout << "; " << file.entries.size() - ran << " kept as recorded before";
    std::cout << "), " << bytes << " bytes, " << s << " s -> " << path.string() << "\n";
    for (const auto& e : file.entries)
      if (e.refused)
        std::cout << "  refused: " << e.unit << ": "
                  << std::string(e.bytes.begin(), e.bytes.end()).substr(0, 300) << "\n";
  }
  return ok ? 0 : 1;
}

// An absolute difference as a power of two: "2^-21.54 absolute".
std::string absolute(double d) {
  char text[40];
  std::snprintf(text, sizeof text, "2^%.2f absolute", std::log2(d));
  return text;
}

// A family's verdict: PASSED; INCOMPLETE where every recorded unit passes
// but some are not recorded; FAILED.
std::string verdict(const FamilyReport& r) {
  if (r.passed()) return "PASSED";
  std::size_t missing = 0;
  for (const auto& u : r.units) {
    if (u.status == UnitReport::Status::not_recorded)
      ++missing;
    else if (!passes(u))
      return "FAILED";
  }
  return "INCOMPLETE (" + std::to_string(missing) +
         " units not recorded: scripts/record-gpu-truth.sh with ONLY_MISSING=1 adds them)";
}

int replay(const Options& o) {
  if (o.truth.empty()) usage("replay needs --truth DIR");
  bool ok = true;
  if (o.markdown)
    std::cout << "| family | units | cases | cases agreeing | bits agreeing | verdict | recorded "
                 "on |\n|---|---|---|---|---|---|---|\n";
  std::int64_t all_cases = 0, all_agreeing = 0, all_bits = 0, all_bits_agreeing = 0;
  std::size_t all_units = 0;
  for (const Family& f : families()) {
    if (!selected(o, f)) continue;
    const auto path = std::filesystem::path(o.truth) / (f.name + ".truth");
    std::string skipped;
    if (!f.unavailable.empty())
      skipped = f.unavailable;
    else if (!std::filesystem::exists(path))
      skipped = "no recording at " + path.string();
    if (!skipped.empty()) {
      if (o.markdown)
        std::cout << "| " << f.name << " | " << f.units.size() << " | | | | skipped: " << skipped
                  << " | |\n";
      else
        std::cout << f.name << ": SKIPPED (" << skipped << ")\n";
      continue;
    }
    const TruthFile truth = read_truth(path);
    const FamilyReport r = replay_family(f, truth, replay_device(truth));
    std::int64_t bits = 0, bits_agreeing = 0;
    for (const auto& u : r.units) {
      bits += u.bits;
      bits_agreeing += u.bits_agreeing;
    }
    ok = ok && r.passed();
    all_units += r.units.size();
    all_cases += r.cases();
    all_agreeing += r.cases_agreeing();
    all_bits += bits;
    all_bits_agreeing += bits_agreeing;
    const std::string recorded_on =
        r.recorded_on + (truth.seed ? ", seed " + std::to_string(truth.seed) : "");
    if (o.markdown) {
      std::cout << "| " << f.name << " | " << r.units.size() << " | " << r.cases() << " | "
                << r.cases_agreeing() << " | " << bits_agreeing << " / " << bits << " | "
                << verdict(r) << " | " << recorded_on << " |\n";
      continue;
    }
    std::cout << f.name << ": " << verdict(r) << ", " << r.cases_agreeing() << " of " << r.cases()
              << " cases agree, " << bits_agreeing << " of " << bits << " bits (recorded on "
              << recorded_on << ")\n";
    for (const auto& u : r.units)
      if (u.status != UnitReport::Status::agree)
        std::cout << "  " << name(u.status) << ": " << u.unit << " (" << u.cases_agreeing << " of "
                  << u.cases << " cases agree"
                  << (u.max_ulp ? ", max " + std::to_string(u.max_ulp) + " ulp" : "")
                  << (u.max_abs_error > 0 ? ", max " + absolute(u.max_abs_error) : "") << ") "
                  << u.detail.substr(0, 600) << "\n";
    for (const auto& n : r.notes) std::cout << "  note: " << n << "\n";
  }
  // Every replayed family together: the line the fidelity docs quote.
  if (o.markdown)
    std::cout << "| all | " << all_units << " | " << all_cases << " | " << all_agreeing << " | "
              << all_bits_agreeing << " / " << all_bits << " | " << (ok ? "PASSED" : "NOT PASSED")
              << " | |\n";
  else
    std::cout << "all families: " << (ok ? "PASSED" : "NOT PASSED") << ", " << all_agreeing
              << " of " << all_cases << " cases agree bit for bit, " << all_bits_agreeing << " of "
              << all_bits << " bits (the rest within their stated bounds where PASSED)\n";
  return ok ? 0 : 1;
}

// Little-endian words of 4 bytes, most significant digit first; a shorter
// tail (a 16-bit result: an f16 element of an MMA) as one word of its size.
std::string hex_words(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  char word[16];
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const std::size_t n = std::min<std::size_t>(4, bytes.size() - i);
    std::uint32_t w = 0;
    std::memcpy(&w, &bytes[i], n);
    std::snprintf(word, sizeof word, "%s%0*x", i ? " " : "", static_cast<int>(2 * n), w);
    s += word;
  }
  return s;
}

int differences(const Options& o) {
  if (o.truth.empty() || o.families.size() != 1)
    usage("differences needs --truth DIR and one --family NAME");
  const Family& f = *find_family(*o.families.begin());
  const TruthFile truth = read_truth(std::filesystem::path(o.truth) / (f.name + ".truth"));
  const runtime::Device sim = replay_device(truth);
  for (const TruthEntry& e : truth.entries) {
    if (e.refused || e.unit.find(o.unit) == std::string::npos) continue;
    const auto unit = std::find_if(f.units.begin(), f.units.end(),
                                   [&](const Unit& u) { return u.name == e.unit; });
    if (unit == f.units.end()) continue;
    const auto cases = differing_cases(*unit, e, sim, o.limit);
    if (cases.empty()) continue;
    std::cout << e.unit << ":\n";
    for (const CaseDifference& d : cases) {
      std::cout << "  case " << d.index;
      if (!d.inputs.empty()) {
        std::vector<std::uint8_t> in(d.inputs.size() * 4);
        std::memcpy(in.data(), d.inputs.data(), in.size());
        std::cout << " in " << hex_words(in);
      }
      std::cout << " gpu " << hex_words(d.gpu) << " sim " << hex_words(d.simulator) << "\n";
    }
  }
  return 0;
}

int inputs(const Options& o) {
  if (o.families.size() != 1 || o.unit.empty() || o.out.empty())
    usage("inputs needs --family NAME, --unit NAME and --out FILE");
  const Family& f = *find_family(*o.families.begin());
  const auto unit =
      std::find_if(f.units.begin(), f.units.end(), [&](const Unit& u) { return u.name == o.unit; });
  if (unit == f.units.end() || !unit->inputs)
    usage("family " + f.name + " has no instruction form named '" + o.unit +
          "' (warpforge-difftest list)");
  const std::vector<std::uint32_t> words = unit->inputs(unit_seed(f.name, unit->name, o.seed));
  std::ofstream(o.out, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()),
             static_cast<std::streamsize>(words.size() * 4));
  std::cout << words.size() << " words, " << unit->in_words << " a thread -> " << o.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    if (o.command == "list") return list();
    if (o.command == "names") {
      for (const Family& f : families()) std::cout << f.name << "\n";
      return 0;
    }
    if (o.command == "record") return record(o);
    if (o.command == "differences") return differences(o);
    if (o.command == "inputs") return inputs(o);
    if (o.command == "mufu") return mufu(o);
    return replay(o);
  } catch (const Error& e) {
    std::cerr << "warpforge-difftest: " << e.what() << "\n";
    return 1;
  }
}
