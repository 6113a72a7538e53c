// The differential harness itself, on the simulator alone: inputs are a
// function of the seed and include the formats' edges; a unit's outputs
// line up with its inputs; a recording replays bit for bit, a changed bit is
// found and named; damaged or stale truth files are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <utility>

#include "difftest/harness.hpp"
#include "difftest/scalar_form.hpp"
#include "difftest/stdout_capture.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::difftest {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("warpforge_difftest_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(DifftestValues, SameSeedSameValuesAndEveryEdge) {
  Rng a(7), b(7), c(8);
  std::set<std::uint64_t> seen;
  bool differs = false;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t x = float_value(a, kF32);
    EXPECT_EQ(x, float_value(b, kF32));
    differs = differs || x != float_value(c, kF32);
    seen.insert(x);
  }
  EXPECT_TRUE(differs);
  for (std::uint64_t edge : {0x0ull, 0x80000000ull, 0x1ull, 0x7FFFFFull, 0x800000ull, 0x7F7FFFFFull,
                             0x7F800000ull, 0xFF800000ull, 0x7FC00000ull, 0x3F800000ull})
    EXPECT_TRUE(seen.count(edge)) << std::hex << edge;
  std::size_t payload_nans = 0;
  for (std::uint64_t x : seen)
    payload_nans += (x & 0x7F800000u) == 0x7F800000u && (x & 0x3FFFFFu) != 0;
  EXPECT_GT(payload_nans, 50u);
}

TEST(DifftestValues, TiesSitHalfwayAtTheKeptPrecision) {
  Rng rng(3);
  int ties = 0;
  for (int i = 0; i < 3000; ++i)
    ties += (float_tie(rng, kF32, 7) & 0xFFFF) == 0x8000;  // f32 -> bf16
  EXPECT_GT(ties, 800);
  EXPECT_LT(ties, 1200);
}

TEST(DifftestValues, E4m3HasNoInfinityAndOneNaNPattern) {
  EXPECT_EQ(kE4M3.largest_finite(), 0x7Eu);  // 448
  EXPECT_EQ(kE5M2.largest_finite(), 0x7Bu);  // 57344
  EXPECT_EQ(kF16.largest_finite(), 0x7BFFu);
  Rng rng(5);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t v = float_moderate(rng, kE4M3, 9);
    EXPECT_NE(v & 0x7F, 0x7Fu);
  }
}

TEST(DifftestHarness, OutputsLineUpWithTheirInputs) {
  const InstructionForm form =
      scalar_form({"add.u32", 32, {32, 32}, each(2, [](Rng& r) { return r.bits() & 0xFFFFFFFF; })});
  const Unit unit = instruction_unit(form);
  const Outcome o = unit.run(runtime::Device::sim(), 1234);
  Rng rng(1234);
  std::vector<std::uint32_t> words(static_cast<std::size_t>(form.threads) * 2);
  form.inputs(rng, words, 2);
  ASSERT_EQ(o.bytes.size(), static_cast<std::size_t>(form.threads) * 4);
  for (int t = 0; t < form.threads; ++t) {
    std::uint32_t got;
    std::memcpy(&got, &o.bytes[static_cast<std::size_t>(t) * 4], 4);
    ASSERT_EQ(got,
              words[2 * static_cast<std::size_t>(t)] + words[2 * static_cast<std::size_t>(t) + 1])
        << t;
  }
}

TEST(DifftestHarness, EveryFamilyHoldsTenThousandCases) {
  for (const Family& f : families()) {
    std::int64_t cases = 0;
    std::set<std::string> names;
    for (const Unit& u : f.units) {
      cases += u.cases;
      EXPECT_TRUE(names.insert(u.name).second) << f.name << ": two units named " << u.name;
    }
    EXPECT_GE(cases, 10000) << f.name;
  }
}

// The family's recording on the simulator, as `record --device sim` writes it.
TruthFile simulator_recording(const Family& family) {
  TruthFile truth = record_family(family, runtime::Device::sim());
  truth.driver = "simulator";
  return truth;
}

TEST(DifftestHarness, RecordingOnTheSimulatorReplaysAndAFlippedBitIsFound) {
  const Family* family = find_family("mma_sync");
  ASSERT_NE(family, nullptr);
  const runtime::Device sim = runtime::Device::sim();
  const TruthFile truth = simulator_recording(*family);
  const fs::path dir = scratch("selftest");
  write_truth(dir / "mma_sync.truth", truth);
  const TruthFile back = read_truth(dir / "mma_sync.truth");
  ASSERT_EQ(back.entries.size(), family->units.size());
  FamilyReport report = replay_family(*family, back, sim);
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.cases_agreeing(), report.cases());

  TruthFile flipped = back;
  flipped.entries[3].bytes[100] ^= 0x10;
  report = replay_family(*family, flipped, sim);
  EXPECT_FALSE(report.passed());
  const UnitReport& u = report.units[3];
  EXPECT_EQ(u.status, UnitReport::Status::differ);
  EXPECT_EQ(u.bits - u.bits_agreeing, 1);
  EXPECT_EQ(u.cases - u.cases_agreeing, 1);
  EXPECT_NE(u.detail.find("case 25"), std::string::npos)
      << u.detail;  // byte 100 of 4-byte f32 elements
  fs::remove_all(dir);
}

TEST(DifftestHarness, ARecordingSeedDrawsOtherInputsAndTheReplayUsesIt) {
  // 0 is the committed recordings' seed: their digests stay as they were.
  EXPECT_EQ(unit_seed("warp", "shfl.sync.idx.b32", 0), unit_seed("warp", "shfl.sync.idx.b32"));
  EXPECT_NE(unit_seed("warp", "shfl.sync.idx.b32", 7), unit_seed("warp", "shfl.sync.idx.b32"));
  EXPECT_NE(unit_seed("warp", "shfl.sync.idx.b32", 7), unit_seed("warp", "shfl.sync.idx.b32", 8));
  const Family* family = find_family("float_divide");
  ASSERT_NE(family, nullptr);
  const runtime::Device sim = runtime::Device::sim();
  const TruthFile in_sample = record_family(*family, sim);
  TruthFile out_of_sample = record_family(*family, sim, 7);
  EXPECT_NE(out_of_sample.entries[0].bytes, in_sample.entries[0].bytes);
  const fs::path dir = scratch("seed");
  write_truth(dir / "float_divide.truth", out_of_sample);
  const TruthFile back = read_truth(dir / "float_divide.truth");
  EXPECT_EQ(back.seed, 7u);
  EXPECT_TRUE(replay_family(*family, back, sim).passed());
  // The same outputs claimed for the committed inputs: the seeds disagree.
  out_of_sample.seed = 0;
  const FamilyReport wrong = replay_family(*family, out_of_sample, sim);
  EXPECT_EQ(wrong.units[0].status, UnitReport::Status::failed);
  EXPECT_NE(wrong.units[0].detail.find("another seed"), std::string::npos) << wrong.units[0].detail;
  fs::remove_all(dir);
}

TEST(DifftestHarness, UnitsAddedToAFamilyAreRecordedWithoutRerecordingTheRest) {
  const Family* family = find_family("float_divide");
  ASSERT_NE(family, nullptr);
  const runtime::Device sim = runtime::Device::sim();
  TruthFile old = simulator_recording(*family);
  old.entries.erase(old.entries.begin() + 2);  // a unit added since the recording
  old.entries[0].bytes[0] ^= 1;  // kept as recorded, not run again (the replay finds it)
  std::vector<std::string> ran;
  const TruthFile merged =
      record_family(*family, sim, 0, &old, [&](const std::string& u) { ran.push_back(u); });
  EXPECT_EQ(ran, std::vector<std::string>{family->units[2].name});
  ASSERT_EQ(merged.entries.size(), family->units.size());
  EXPECT_EQ(merged.entries[0].bytes, old.entries[0].bytes);
  EXPECT_EQ(merged.entries[2].unit, family->units[2].name);
  EXPECT_NE(merged.recorded.find("units added"), std::string::npos) << merged.recorded;
  const FamilyReport report = replay_family(*family, merged, sim);
  EXPECT_EQ(report.units[0].status, UnitReport::Status::differ);
  EXPECT_EQ(report.units[2].status, UnitReport::Status::agree);

  // A recording of another GPU, driver, SM count or seed is not kept.
  EXPECT_EQ(why_not_kept(old, sim, "simulator", 0), "");
  EXPECT_NE(why_not_kept(old, sim, "13000", 0).find("driver simulator"), std::string::npos);
  EXPECT_NE(why_not_kept(old, sim, "simulator", 5).find("seed 0"), std::string::npos);
  TruthFile h100 = old;
  h100.device = "NVIDIA H100 80GB HBM3 (sm_90a)";
  EXPECT_NE(why_not_kept(h100, sim, "simulator", 0).find("NVIDIA H100"), std::string::npos);
  h100.device = old.device;
  h100.sm_count = 132;
  EXPECT_NE(why_not_kept(h100, sim, "simulator", 0).find("SM count 132"), std::string::npos);
}

TEST(DifftestHarness, AUnitTheGpuRefusedIsReportedNotCompared) {
  const Family* family = find_family("float_divide");
  ASSERT_NE(family, nullptr);
  TruthFile truth = record_family(*family, runtime::Device::sim());
  truth.entries[0].refused = true;
  const std::string why = "ptxas refused it";
  truth.entries[0].bytes.assign(why.begin(), why.end());
  truth.entries.pop_back();  // and one unit was never recorded
  const FamilyReport report = replay_family(*family, truth, runtime::Device::sim());
  EXPECT_EQ(report.units.front().status, UnitReport::Status::refused_on_gpu);
  EXPECT_EQ(report.units.front().detail, why);
  EXPECT_EQ(report.units.back().status, UnitReport::Status::not_recorded);
  EXPECT_FALSE(report.passed());  // a unit missing from the recording is not a pass
}

// The swapped kernel's split-K unit exists for K split in 2, which the
// kernel chooses on the 132 SMs of the H100 and H200; a device where it
// chooses otherwise (one SM: no split) refuses the unit, naming the
// configuration it chose instead.
TEST(DifftestHarness, AUnitForAConfigurationRefusesADeviceThatChoosesAnother) {
  const Family* family = find_family("kernels");
  ASSERT_NE(family, nullptr);
  const auto split = std::find_if(family->units.begin(), family->units.end(), [](const Unit& u) {
    return u.name.rfind("gemm_amax swapped 24x128x1024", 0) == 0;
  });
  ASSERT_NE(split, family->units.end());
  sim::SimOptions one_sm;
  one_sm.sm_count = 1;
  try {
    split->run(runtime::Device(sim::make_backend(one_sm)), 1);
    ADD_FAILURE() << "ran on 1 SM";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'K split 2 ways'"), std::string::npos) << what;
    EXPECT_NE(what.find("(1 SMs)"), std::string::npos) << what;
    EXPECT_NE(what.find("K split 1 ways"), std::string::npos) << what;  // what it chose
  }
  sim::SimOptions h100;
  h100.sm_count = 132;
  EXPECT_EQ(split->run(runtime::Device(sim::make_backend(h100)), 1).bytes.size(), 3074u * 2);
}

TEST(DifftestHarness, StdoutCaptureReadsWhatTheProcessPrints) {
  std::string text;
  {
    StdoutCapture capture;
    std::printf("from printf %d\n", 7);
    std::cout << "from cout\n";
    text = capture.text();
  }
  EXPECT_EQ(text, "from printf 7\nfrom cout\n");
}

// nvcc's kernels on the simulator, as the DEVICE=sim self-test of
// scripts/record-gpu-truth.sh records them: every unit runs and writes its
// outputs (the recursion's fib values, printf's lines read from stdout).
TEST(DifftestHarness, NvccFamilyRunsOnTheSimulator) {
  const Family* family = find_family("nvcc");
  ASSERT_NE(family, nullptr);
  if (!family->unavailable.empty()) GTEST_SKIP() << family->unavailable;
  const TruthFile truth = record_family(*family, runtime::Device::sim());
  ASSERT_EQ(truth.entries.size(), family->units.size());
  for (const TruthEntry& e : truth.entries) {
    ASSERT_FALSE(e.refused) << e.unit << ": " << std::string(e.bytes.begin(), e.bytes.end());
    EXPECT_NE(std::count(e.bytes.begin(), e.bytes.end(), 0xFF), static_cast<long>(e.bytes.size()))
        << e.unit << " wrote nothing over its poisoned output";
  }
  const auto unit = [&](const std::string& prefix) -> const TruthEntry& {
    for (const TruthEntry& e : truth.entries)
      if (e.unit.rfind(prefix, 0) == 0) return e;
    throw std::runtime_error("no unit " + prefix);
  };
  // fib(i % 13) after 1,024 floats of rotate's y.
  const TruthEntry& calls = unit("calls: rotate's y, fib");
  std::vector<std::int32_t> fibs(1024);
  std::memcpy(fibs.data(), calls.bytes.data() + 4096, 4096);
  for (int i = 0; i < 1024; ++i) {
    int a = 0, b = 1;
    for (int k = 0; k < i % 13; ++k) b = std::exchange(a, b) + b;
    ASSERT_EQ(fibs[static_cast<std::size_t>(i)], a) << i;
  }
  // 32 lines of 64 bytes: the negative values' lines, in lane order, then the others'.
  const TruthEntry& printed = unit("report: printf, each call's lines");
  ASSERT_EQ(printed.bytes.size(), 32u * 64);
  int last_lane = -1;
  bool values = false;
  for (std::size_t l = 0; l < 32; ++l) {
    const std::string line(reinterpret_cast<const char*>(&printed.bytes[64 * l]));
    int lane = 0, block = 0, v = 0;
    if (std::sscanf(line.c_str(), "thread %d of block %d: negative %d", &lane, &block, &v) == 3) {
      EXPECT_FALSE(values) << "a negative value's line after the others: " << line;
      EXPECT_GT(lane, last_lane) << line;
      EXPECT_LT(v, 0) << line;
      last_lane = lane;
    } else {
      values = true;
      EXPECT_EQ(line.rfind("value ", 0), 0u) << line;
      EXPECT_NE(line.find("\"quoted\" and tab\t"), std::string::npos) << line;
    }
    EXPECT_EQ(line.back(), '\n') << line;
  }
  // The other printf unit (its own inputs): 32 lines of the two formats, sorted.
  const TruthEntry& sorted_unit = unit("report: printf, the lines sorted");
  std::vector<std::string> sorted;
  for (std::size_t l = 0; l < 32; ++l) {
    sorted.emplace_back(reinterpret_cast<const char*>(&sorted_unit.bytes[64 * l]));
    EXPECT_TRUE(sorted.back().rfind("thread ", 0) == 0 || sorted.back().rfind("value ", 0) == 0)
        << sorted.back();
  }
  EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
}

// A unit whose simulator outputs are fixed words, held to `tolerance`,
// replayed against recorded words.
UnitReport replay_words(const std::vector<std::uint32_t>& simulated,
                        const std::vector<std::uint32_t>& recorded, Tolerance tolerance,
                        std::size_t words_per_case = 1) {
  Unit u;
  u.name = "approx";
  u.cases = static_cast<std::int64_t>(simulated.size() / words_per_case);
  u.tolerance = tolerance;
  u.run = [simulated](const runtime::Device&, std::uint64_t) {
    Outcome o;
    o.bytes.resize(simulated.size() * 4);
    std::memcpy(o.bytes.data(), simulated.data(), o.bytes.size());
    return o;
  };
  const Family family{"fixed", "fixed words", {u}};
  TruthFile truth;
  TruthEntry e{"approx", unit_seed("fixed", "approx"), u.cases, "", false, {}};
  e.bytes.resize(recorded.size() * 4);
  std::memcpy(e.bytes.data(), recorded.data(), e.bytes.size());
  truth.entries.push_back(e);
  return replay_family(family, truth, runtime::Device::sim()).units.at(0);
}

TEST(DifftestHarness, ApproxUnitsAreHeldToTheirUlpBound) {
  const Tolerance two{2};
  UnitReport r =
      replay_words({0x3F800000, 0x40000000}, {0x3F800001, 0x40000000}, two);  // 1 + 1 ulp
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_EQ(r.max_ulp, 1);
  EXPECT_EQ(r.cases_agreeing, 1);
  r = replay_words({0x00000001, 0x40000000}, {0x80000001, 0x40000000},
                   two);  // ±smallest subnormal: 2 ulp
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_EQ(r.max_ulp, 2);
  r = replay_words({0x3F800000}, {0x3F800003}, two);
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0x7FC00000}, {0x7F800000}, two);  // NaN against infinity
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0x7FC00000}, {0x7FFFFFFF}, two);  // NaN payloads differ: still a NaN
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  // 16-bit halves (f16): each half on its own scale.
  const Tolerance f16{1, 5, 10};
  r = replay_words({0x3C003C00}, {0x3C013BFF}, f16);
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_EQ(r.max_ulp, 1);
  r = replay_words({0x3C003C00}, {0x3C003C02}, f16);
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  EXPECT_EQ(replay_words({0x3C00}, {0x3C00}, Tolerance{}).status, UnitReport::Status::agree);
}

TEST(DifftestHarness, F64UnitsAreHeldToBoundsPastThirtyTwoBits) {
  // rcp.approx.ftz.f64's bound: one unit of the 20th significand bit, 2^32 ulps
  // (words low, high).
  const Tolerance twentieth_bit{std::int64_t{1} << 32, 11, 52};
  UnitReport r = replay_words({0, 0x3ff00001}, {0, 0x3ff00000}, twentieth_bit, 2);
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_EQ(r.max_ulp, std::int64_t{1} << 32);
  r = replay_words({1, 0x3ff00001}, {0, 0x3ff00000}, twentieth_bit, 2);  // one ulp more
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0, 0x80000000}, {0, 0}, twentieth_bit, 2);  // -0 and +0
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_EQ(r.max_ulp, 0);
  r = replay_words({0, 0xfff00000}, {0, 0x7ff00000}, twentieth_bit, 2);  // -inf and +inf
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0, 0x7fffffff}, {0, 0x7ff80000}, twentieth_bit, 2);  // two NaNs
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  r = replay_words({0, 0x7fffffff}, {0, 0x3ff00000}, twentieth_bit, 2);  // NaN against 1
  EXPECT_EQ(r.status, UnitReport::Status::differ);
}

TEST(DifftestHarness, SinCosUnitsAreHeldToAnAbsoluteBound) {
  const Tolerance absolute{0, 8, 23, std::exp2(-21.5)};
  // 1.0 and 1.0 - 2^-22 (4 ulps below 1, an absolute 2^-22): within.
  UnitReport r = replay_words({0x3f800000, 0x3f7ffffc}, {0x3f7ffffc, 0x3f7ffffc}, absolute);
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  EXPECT_DOUBLE_EQ(r.max_abs_error, std::exp2(-22));
  // Near zero an absolute bound allows many ulps: 2^-30 against 0.
  r = replay_words({0x30800000}, {0x00000000}, absolute);
  EXPECT_EQ(r.status, UnitReport::Status::within_tolerance);
  r = replay_words({0x3f800000}, {0x3f7ffff0}, absolute);  // 2^-20: past the bound
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0x7fffffff}, {0x3f800000}, absolute);  // NaN against a number
  EXPECT_EQ(r.status, UnitReport::Status::differ);
  r = replay_words({0x7f800000}, {0x7f800000}, absolute);  // equal infinities agree
  EXPECT_EQ(r.status, UnitReport::Status::agree);
  r = replay_words({0x7f800000}, {0x7f7fffff}, absolute);  // infinity against a number
  EXPECT_EQ(r.status, UnitReport::Status::differ);
}

TEST(DifftestTruthFile, DamagedOrStaleFilesAreRefusedWithTheReason) {
  const fs::path dir = scratch("damaged");
  TruthFile t;
  t.family = "f";
  t.device = "NVIDIA H100 80GB HBM3 (sm_90a)";
  t.driver = "13000";
  t.sm_count = 132;
  t.recorded = "2026-11-26T01:00:00Z";
  t.entries.push_back({"add.u32", 0xabcdef, 2, "0123", false, {1, 2, 3, 4, 5, 6, 7, 8}});
  write_truth(dir / "f.truth", t);
  const TruthFile back = read_truth(dir / "f.truth");
  EXPECT_EQ(back.device, t.device);
  EXPECT_EQ(back.sm_count, 132);
  EXPECT_EQ(back.entries[0].seed, 0xabcdefu);
  EXPECT_EQ(back.entries[0].bytes, t.entries[0].bytes);

  auto expect_refused = [&](const std::string& text, const std::string& why) {
    std::ofstream(dir / "bad.truth", std::ios::binary) << text;
    try {
      read_truth(dir / "bad.truth");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const TruthError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("record-gpu-truth.sh"), std::string::npos) << e.what();
    }
  };
  expect_refused("not a truth file\n", "does not start with");
  const std::string head = "warpforge-gpu-truth 1\nfamily f\ndevice d\ndriver 1\nrecorded now\n";
  expect_refused(head + "generator 999\nunits 0\n", "generator version 999");
  expect_refused(head + "generator " + std::to_string(kGeneratorVersion) +
                     "\nunits 1\nunit 8 1 2 ab ok add.u32\n1234",
                 "cut short");
  expect_refused(head + "generator " + std::to_string(kGeneratorVersion) +
                     "\nunits 1\nunit 1 1 2 ab maybe x\nz\n",
                 "status 'maybe'");
  expect_refused("warpforge-gpu-truth 1\nfamily f\ndevice d\ndriver 1\nsms many\n", "'sms many'");
  expect_refused("warpforge-gpu-truth 1\nfamily f\ndevice d\ndriver 1\nsms 132\nseed -3\n",
                 "'seed -3'");
  fs::remove_all(dir);
}

TEST(DifftestTruthFile, TheReplayReportsTheGpusSmCount) {
  // Persistent kernels size their grids by the SM count, and stream-K's sums
  // depend on how its k-blocks are split among the CTAs.
  const fs::path dir = scratch("sms");
  TruthFile recorded;
  recorded.sm_count = 132;
  EXPECT_EQ(replay_device(recorded).properties().sm_count, 132);
  // A recording without the line: the simulator's own count.
  std::ofstream(dir / "old.truth", std::ios::binary)
      << "warpforge-gpu-truth 1\nfamily f\ndevice d\ndriver 1\nrecorded now\ngenerator "
      << kGeneratorVersion << "\nunits 0\n";
  const TruthFile old = read_truth(dir / "old.truth");
  EXPECT_EQ(old.sm_count, 0);
  EXPECT_EQ(replay_device(old).properties().sm_count, runtime::Device::sim().properties().sm_count);
  EXPECT_EQ(record_family(*find_family("warp"), runtime::Device::sim()).sm_count,
            runtime::Device::sim().properties().sm_count);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warpforge::difftest
