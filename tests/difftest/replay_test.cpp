// The recorded GPU truth (tests/gpu_truth/, written by
// scripts/record-gpu-truth.sh on an H100 or H200) replayed on the
// simulator: every recorded unit of every family must give the same bits
// (or, for the .approx instructions, stay within the unit's stated ulp
// bound; or differ in no more cases than its entry in
// tools/difftest/known_departures.cpp states). Two recordings: the one the
// hardware rules were found from (tests/gpu_truth/<family>.truth, seed 0)
// and one on other random inputs (tests/gpu_truth/seed20261126/, seed
// 20261126), out of sample for those rules. A family with no recording,
// or one this build cannot run (nvcc's kernels without nvcc), is skipped
// with the reason, never passed; so is a family whose recording lacks units
// added since (scripts/record-gpu-truth.sh with ONLY_MISSING=1 adds them),
// after every recorded unit has been compared.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "difftest/harness.hpp"

namespace warpforge::difftest {
namespace {

// A recording: its folder under tests/gpu_truth and the seed its files state.
struct Recording {
  const char* folder;
  std::uint64_t seed;
};
constexpr Recording kInSample{"", 0};
constexpr Recording kOutOfSample{"seed20261126", 20261126};

struct Replayed {
  Recording recording;
  std::string family;
};

void PrintTo(const Replayed& r, std::ostream* os) {  // names the case in gtest's output
  *os << r.family << " recorded with seed " << r.recording.seed;
}

std::vector<Replayed> replayed() {
  std::vector<Replayed> all;
  for (const Recording& r : {kInSample, kOutOfSample})
    for (const Family& f : families()) all.push_back({r, f.name});
  return all;
}

class ReplayGpuTruth : public ::testing::TestWithParam<Replayed> {};

TEST_P(ReplayGpuTruth, EveryRecordedBitAgrees) {
  const Recording& recording = GetParam().recording;
  const Family* family = find_family(GetParam().family);
  ASSERT_NE(family, nullptr);
  if (!family->unavailable.empty())
    GTEST_SKIP() << "family " << family->name
                 << " cannot run in this build: " << family->unavailable;
  const auto path = std::filesystem::path(WARPFORGE_SOURCE_DIR) / "tests/gpu_truth" /
                    recording.folder / (family->name + ".truth");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "no GPU recording of family " << family->name << " at " << path.string()
                 << " (scripts/record-gpu-truth.sh writes it on an H100 or H200)";
  const TruthFile truth = read_truth(path);
  // A file in the wrong folder would replay other inputs than the folder says.
  ASSERT_EQ(truth.seed, recording.seed) << path.string() << " states another seed";
  const FamilyReport report = replay_family(*family, truth, replay_device(truth));
  EXPECT_GE(report.cases(), 10000) << "a family's recording must hold at least 10,000 cases";
  std::string not_recorded;
  for (const UnitReport& u : report.units) {
    if (u.status == UnitReport::Status::not_recorded) {
      not_recorded += "\n  " + u.unit;
      continue;
    }
    EXPECT_TRUE(passes(u)) << u.unit << ": " << name(u.status) << ", " << u.cases_agreeing << " of "
                           << u.cases << " cases agree; " << u.detail;
  }
  for (const std::string& note : report.notes) std::cout << "note: " << note << "\n";
  if (!not_recorded.empty())
    GTEST_SKIP() << "the recorded units agree, but these were never recorded on a GPU "
                    "(ONLY_MISSING=1 scripts/record-gpu-truth.sh records them):"
                 << not_recorded;
}

INSTANTIATE_TEST_SUITE_P(Families, ReplayGpuTruth, ::testing::ValuesIn(replayed()),
                         [](const ::testing::TestParamInfo<Replayed>& info) {
                           const std::uint64_t seed = info.param.recording.seed;
                           return info.param.family +
                                  (seed == 0 ? "" : "_seed" + std::to_string(seed));
                         });

}  // namespace
}  // namespace warpforge::difftest
