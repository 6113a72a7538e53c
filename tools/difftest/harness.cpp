#include "difftest/harness.hpp"

#include "difftest/known_departures.hpp"
#include "warpforge/sim/simulator.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <sstream>

namespace warpforge::difftest {

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

std::string hex(const std::uint8_t* p, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = n; i-- > 0;) {  // little-endian words read most significant first
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

// Distance in units in the last place between two floats of `t`'s format
// (in the low bits), on the line of ordered integers; none where one is NaN
// and the other not.
std::optional<std::uint64_t> ulp_distance(std::uint64_t a, std::uint64_t b, const Tolerance& t) {
  const int width = 1 + t.exponent_bits + t.mantissa_bits;
  const std::uint64_t sign = 1ull << (width - 1), magnitude = sign - 1;
  const std::uint64_t exponent = magnitude & ~((1ull << t.mantissa_bits) - 1);
  const auto is_nan = [&](std::uint64_t x) {
    return (x & exponent) == exponent && (x & (magnitude & ~exponent));
  };
  if (is_nan(a) || is_nan(b)) {
    if (is_nan(a) && is_nan(b)) return 0;
    return std::nullopt;
  }
  const std::uint64_t ma = a & magnitude, mb = b & magnitude;
  if ((a & sign) != (b & sign)) return ma + mb;  // across zero
  return ma > mb ? ma - mb : mb - ma;
}

// The difference in value between two f32 words; none where one is NaN and
// the other not.
std::optional<double> value_distance(std::uint32_t a, std::uint32_t b) {
  const float x = std::bit_cast<float>(a), y = std::bit_cast<float>(b);
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isnan(x) && std::isnan(y)) return 0.0;
    return std::nullopt;
  }
  return x == y ? 0.0 : std::fabs(static_cast<double>(x) - static_cast<double>(y));
}

// Whether one case's recorded bytes g and simulated bytes s (n of them)
// differ by no more than the unit's tolerance; records the largest
// difference in r.
bool within_tolerance(const std::uint8_t* g, const std::uint8_t* s, std::size_t n,
                      const Tolerance& t, UnitReport& r) {
  if (t.max_abs_error > 0) {
    if (n % 4) return false;
    for (std::size_t w = 0; w < n; w += 4) {
      std::uint32_t gw, sw;
      std::memcpy(&gw, g + w, 4);
      std::memcpy(&sw, s + w, 4);
      const std::optional<double> d = value_distance(gw, sw);
      if (!d || *d > t.max_abs_error) return false;
      r.max_abs_error = std::max(r.max_abs_error, *d);
    }
    return true;
  }
  const int width = 1 + t.exponent_bits + t.mantissa_bits;
  const std::size_t bytes = width == 64 ? 8 : 4;
  if (t.max_ulp <= 0 || n % bytes) return false;
  for (std::size_t w = 0; w < n; w += bytes) {
    std::uint64_t gw = 0, sw = 0;
    std::memcpy(&gw, g + w, bytes);
    std::memcpy(&sw, s + w, bytes);
    // 16-bit floats: each half of the word on its own scale.
    const int parts = width == 16 ? 2 : 1;
    for (int h = 0; h < parts; ++h) {
      const int shift = 16 * h;
      const std::uint64_t mask = width == 16 ? 0xFFFF : ~0ull;
      const std::optional<std::uint64_t> d =
          ulp_distance((gw >> shift) & mask, (sw >> shift) & mask, t);
      if (!d || *d > static_cast<std::uint64_t>(t.max_ulp)) return false;
      r.max_ulp = std::max(r.max_ulp, static_cast<std::int64_t>(*d));
    }
  }
  return true;
}

void compare(const Unit& unit, const TruthEntry& truth, const std::vector<std::uint8_t>& sim,
             UnitReport& r) {
  if (sim.size() != truth.bytes.size()) {
    r.status = UnitReport::Status::failed;
    r.detail = "the simulator produced " + std::to_string(sim.size()) +
               " bytes, the recording holds " + std::to_string(truth.bytes.size());
    return;
  }
  const std::size_t n = sim.size();
  const std::size_t per_case = truth.cases > 0 && n % static_cast<std::size_t>(truth.cases) == 0
                                   ? n / static_cast<std::size_t>(truth.cases)
                                   : n;
  r.bits = static_cast<std::int64_t>(n) * 8;
  std::int64_t differing_bits = 0;
  for (std::size_t i = 0; i < n; ++i)
    differing_bits += std::popcount(static_cast<unsigned>(sim[i] ^ truth.bytes[i]));
  r.bits_agreeing = r.bits - differing_bits;
  std::ostringstream detail;
  int shown = 0;
  bool beyond_tolerance = false;
  for (std::size_t c = 0; c * per_case < n; ++c) {
    const std::uint8_t* g = &truth.bytes[c * per_case];
    const std::uint8_t* s = &sim[c * per_case];
    if (std::memcmp(g, s, per_case) == 0) {
      ++r.cases_agreeing;
      continue;
    }
    const bool within = within_tolerance(g, s, per_case, unit.tolerance, r);
    if (!within) beyond_tolerance = true;
    if (!within && shown < 4) {
      detail << (shown ? "; " : "") << "case " << c << ": gpu " << hex(g, per_case)
             << ", simulator " << hex(s, per_case);
      ++shown;
    }
  }
  if (differing_bits == 0)
    r.status = UnitReport::Status::agree;
  else if (!beyond_tolerance)
    r.status = UnitReport::Status::within_tolerance;
  else
    r.status = UnitReport::Status::differ;
  r.detail = detail.str();
}

// The device's name and target, as a truth file's header states them.
std::string device_description(const runtime::Device& device) {
  return device.properties().name + " (" + std::string(ptx::name(device.target())) + ")";
}

}  // namespace

std::string_view name(UnitReport::Status s) {
  switch (s) {
    case UnitReport::Status::agree:
      return "agree";
    case UnitReport::Status::within_tolerance:
      return "within tolerance";
    case UnitReport::Status::known_departure:
      return "known departure";
    case UnitReport::Status::differ:
      return "DIFFER";
    case UnitReport::Status::refused_on_gpu:
      return "refused on the GPU";
    case UnitReport::Status::not_recorded:
      return "not recorded";
    case UnitReport::Status::failed:
      return "FAILED";
  }
  return "?";
}

TruthFile record_family(const Family& family, const runtime::Device& device, std::uint64_t seed,
                        const TruthFile* kept,
                        const std::function<void(const std::string&)>& progress) {
  TruthFile f;
  f.family = family.name;
  f.device = device_description(device);
  f.sm_count = device.properties().sm_count;
  f.seed = seed;
  f.recorded = utc_now();
  std::map<std::string, const TruthEntry*> recorded;
  if (kept) {
    for (const TruthEntry& e : kept->entries) recorded[e.unit] = &e;
    f.recorded = kept->recorded + ", units added " + f.recorded;
  }
  for (const Unit& unit : family.units) {
    TruthEntry e;
    e.unit = unit.name;
    e.seed = unit_seed(family.name, unit.name, seed);
    e.cases = unit.cases;
    const auto old = recorded.find(unit.name);
    if (old != recorded.end() && old->second->seed == e.seed && old->second->cases == e.cases) {
      f.entries.push_back(*old->second);
      continue;
    }
    if (progress) progress(unit.name);
    try {
      Outcome o = unit.run(device, e.seed);
      e.bytes = std::move(o.bytes);
      e.fingerprint = o.fingerprint;
    } catch (const Error& err) {
      e.refused = true;
      e.fingerprint = "-";
      const std::string what = err.what();
      e.bytes.assign(what.begin(), what.end());
    }
    f.entries.push_back(std::move(e));
  }
  return f;
}

std::string why_not_kept(const TruthFile& recorded, const runtime::Device& device,
                         const std::string& driver, std::uint64_t seed) {
  const auto differs = [](const std::string& what, const std::string& was, const std::string& is) {
    return "it was recorded with " + what + " " + was + ", this recording's is " + is;
  };
  if (recorded.device != device_description(device))
    return differs("device", "'" + recorded.device + "'", "'" + device_description(device) + "'");
  if (recorded.driver != driver) return differs("driver", recorded.driver, driver);
  if (recorded.sm_count != device.properties().sm_count)
    return differs("SM count", std::to_string(recorded.sm_count),
                   std::to_string(device.properties().sm_count));
  if (recorded.seed != seed)
    return differs("seed", std::to_string(recorded.seed), std::to_string(seed));
  return "";
}

bool passes(const UnitReport& u) {
  return u.status == UnitReport::Status::agree ||
         u.status == UnitReport::Status::within_tolerance ||
         u.status == UnitReport::Status::known_departure ||
         u.status == UnitReport::Status::refused_on_gpu;
}

bool FamilyReport::passed() const {
  return std::all_of(units.begin(), units.end(), passes);
}

std::int64_t FamilyReport::cases() const {
  std::int64_t n = 0;
  for (const auto& u : units)
    if (u.status != UnitReport::Status::refused_on_gpu &&
        u.status != UnitReport::Status::not_recorded)
      n += u.cases;
  return n;
}

std::int64_t FamilyReport::cases_agreeing() const {
  std::int64_t n = 0;
  for (const auto& u : units) n += u.cases_agreeing;
  return n;
}

runtime::Device replay_device(const TruthFile& truth) {
  sim::SimOptions options;
  options.sm_count = truth.sm_count;
  return runtime::Device(sim::make_backend(options));
}

FamilyReport replay_family(const Family& family, const TruthFile& truth,
                           const runtime::Device& simulator) {
  FamilyReport report{family.name, family.title, truth.device + ", driver " + truth.driver, {}, {}};
  std::map<std::string, const TruthEntry*> recorded;
  for (const TruthEntry& e : truth.entries) recorded[e.unit] = &e;
  for (const Unit& unit : family.units) {
    UnitReport r;
    r.unit = unit.name;
    r.cases = unit.cases;
    const auto found = recorded.find(unit.name);
    if (found == recorded.end()) {
      r.status = UnitReport::Status::not_recorded;
      r.detail = "absent from the recording";
      report.units.push_back(r);
      continue;
    }
    const TruthEntry& e = *found->second;
    recorded.erase(found);
    if (e.refused) {
      r.status = UnitReport::Status::refused_on_gpu;
      r.detail.assign(e.bytes.begin(), e.bytes.end());
      report.units.push_back(r);
      continue;
    }
    if (e.seed != unit_seed(family.name, unit.name, truth.seed) || e.cases != unit.cases) {
      r.status = UnitReport::Status::failed;
      r.detail = "recorded with another seed or case count: re-record";
      report.units.push_back(r);
      continue;
    }
    try {
      const Outcome o = unit.run(simulator, e.seed);
      if (o.fingerprint != e.fingerprint)
        report.notes.push_back(unit.name + ": the kernel changed since the recording (" +
                               e.fingerprint + " -> " + o.fingerprint + ")");
      compare(unit, e, o.bytes, r);
      if (const KnownDeparture* known = known_departure(family.name, unit.name)) {
        const std::int64_t differing = r.cases - r.cases_agreeing;
        if (r.status == UnitReport::Status::differ && differing <= known->max_differing_cases) {
          r.status = UnitReport::Status::known_departure;
          r.detail = std::string(known->why) + " (" + std::to_string(differing) +
                     " cases, at most " + std::to_string(known->max_differing_cases) + "); " +
                     r.detail;
        } else if (r.status == UnitReport::Status::agree) {
          report.notes.push_back(unit.name + ": agrees now; remove its known departure");
        }
      }
    } catch (const Error& err) {
      r.status = UnitReport::Status::failed;
      r.detail = std::string("the simulator refused it: ") + err.what();
    }
    report.units.push_back(r);
  }
  for (const auto& [unit, entry] : recorded)
    report.notes.push_back(unit + ": recorded, but this build has no such unit");
  return report;
}

std::vector<CaseDifference> differing_cases(const Unit& unit, const TruthEntry& truth,
                                            const runtime::Device& simulator, std::size_t limit) {
  const Outcome o = unit.run(simulator, truth.seed);
  if (o.bytes.size() != truth.bytes.size() || truth.cases <= 0) return {};
  const std::size_t per_case = truth.bytes.size() / static_cast<std::size_t>(truth.cases);
  std::vector<std::uint32_t> inputs;
  const bool per_thread = unit.inputs && unit.in_words > 0;
  if (per_thread) inputs = unit.inputs(truth.seed);
  const bool one_thread_a_case =
      per_thread && inputs.size() == static_cast<std::size_t>(truth.cases * unit.in_words);
  std::vector<CaseDifference> out;
  for (std::size_t c = 0; c < static_cast<std::size_t>(truth.cases) && out.size() < limit; ++c) {
    const auto g = truth.bytes.begin() + static_cast<std::ptrdiff_t>(c * per_case);
    const auto s = o.bytes.begin() + static_cast<std::ptrdiff_t>(c * per_case);
    if (std::equal(g, g + static_cast<std::ptrdiff_t>(per_case), s)) continue;
    CaseDifference d;
    d.index = static_cast<std::int64_t>(c);
    d.gpu.assign(g, g + static_cast<std::ptrdiff_t>(per_case));
    d.simulator.assign(s, s + static_cast<std::ptrdiff_t>(per_case));
    if (one_thread_a_case) {
      const auto at =
          inputs.begin() + static_cast<std::ptrdiff_t>(c * static_cast<std::size_t>(unit.in_words));
      d.inputs.assign(at, at + unit.in_words);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace warpforge::difftest
