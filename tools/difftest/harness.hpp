// Recording a family on a device, and replaying a recording on the
// simulator with the bits compared.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "difftest/family.hpp"
#include "difftest/truth_file.hpp"

namespace warpforge::difftest {

// Runs every unit of `family` on `device`, its inputs from unit_seed(family,
// unit, seed); a unit the device refuses (a CudaError from ptxas, say) is
// recorded as refused with the message, and the rest go on. With `kept` (a
// recording of the family; see keeps()), the units it holds with this
// build's seed and case count are kept as recorded and only the others run,
// so that units added to a family are recorded without re-recording the
// rest. `progress` hears each unit's name before it runs.
TruthFile record_family(const Family& family, const runtime::Device& device, std::uint64_t seed = 0,
                        const TruthFile* kept = nullptr,
                        const std::function<void(const std::string&)>& progress = {});

// Why the units of `recorded` cannot be kept in a recording on `device`
// (driver `driver`) with `seed`: it is of another GPU, driver, SM count or
// seed, and one file states one of each. Empty when they can.
std::string why_not_kept(const TruthFile& recorded, const runtime::Device& device,
                         const std::string& driver, std::uint64_t seed);

struct UnitReport {
  enum class Status {
    agree,
    within_tolerance,
    known_departure,
    differ,
    refused_on_gpu,
    not_recorded,
    failed
  };
  std::string unit;
  Status status = Status::agree;
  std::int64_t cases = 0, cases_agreeing = 0;
  std::int64_t bits = 0, bits_agreeing = 0;
  // For units with a tolerance: the largest difference seen, in ulps or in value.
  std::int64_t max_ulp = 0;
  double max_abs_error = 0;
  std::string detail;  // the first differences, a refusal's message, or why it failed
};

// Agrees, stays within its ulp bound or its known departure, or was refused
// by the GPU (a form the simulator accepts but ptxas does not). A unit
// absent from the recording does not pass: nothing was compared.
bool passes(const UnitReport& u);

struct FamilyReport {
  std::string family, title;
  std::string recorded_on;  // the truth file's device and driver
  std::vector<UnitReport> units;
  std::vector<std::string> notes;  // recorded units this build no longer has, changed kernels
  bool passed() const;  // every unit agrees (or within its tolerance) or was refused by the GPU
  std::int64_t cases() const;
  std::int64_t cases_agreeing() const;
};

FamilyReport replay_family(const Family& family, const TruthFile& truth,
                           const runtime::Device& simulator);

// The simulator to replay `truth` on: it reports the recording GPU's SM
// count (the simulator's default, one per host thread, when the recording
// states none). A persistent kernel sizes its grid by that count, and
// stream-K adds its split tiles' partial sums by CTA, so only the GPU's
// count gives the GPU's sums.
runtime::Device replay_device(const TruthFile& truth);

std::string_view name(UnitReport::Status s);

// The cases of one recorded unit whose bits differ on the simulator, up to
// `limit`, each with its thread's input words where a case is one thread
// (empty otherwise): the evidence from which a hardware rule is found.
struct CaseDifference {
  std::int64_t index = 0;
  std::vector<std::uint32_t> inputs;
  std::vector<std::uint8_t> gpu, simulator;
};
std::vector<CaseDifference> differing_cases(const Unit& unit, const TruthEntry& truth,
                                            const runtime::Device& simulator, std::size_t limit);

}  // namespace warpforge::difftest
