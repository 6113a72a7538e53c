// The differential harness (issue 26): the same PTX runs on a GPU and on the
// simulator, on the same generated inputs, and the output bits are compared.
// Its units of work, grouped by instruction family:
//  - a Unit is one kernel on one input set: one instruction form applied to
//    arrays of generated inputs (instruction_kernel.hpp), or one shipped
//    kernel at a small shape (kernel_families.cpp);
//  - a Family is the units recorded together, in one file under
//    tests/gpu_truth/ (truth_file.hpp).
// Inputs come from a unit's seed alone, so a recording stores the outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/device.hpp"

namespace warpforge::difftest {

// What one unit produced on a device: its output bytes, and a fingerprint
// of the code that produced them (a digest of its PTX), by which a replay
// notices that the kernel changed since the recording.
struct Outcome {
  std::vector<std::uint8_t> bytes;
  std::string fingerprint;
};

// How a replay compares a unit's bytes with the recording.
struct Tolerance {
  // 0: every bit (unless max_abs_error is set). Otherwise the outputs are
  // floats of `exponent_bits` and `mantissa_bits` (f64 in 8-byte words, f32,
  // or f16/bf16 halves of each 4-byte word) and may differ by at most this
  // many units in the last place (NaN only with NaN): for the .approx
  // instructions, whose results PTX leaves to the hardware.
  std::int64_t max_ulp = 0;
  int exponent_bits = 8, mantissa_bits = 23;
  // Positive: the outputs are f32 and may differ by at most this much in
  // value (NaN only with NaN): sin/cos.approx, whose error PTX states as an
  // absolute one.
  double max_abs_error = 0;
};

struct Unit {
  std::string name;    // the PTX form ("add.rz.ftz.f32") or the kernel ("gemm sm80 ...")
  std::int64_t cases;  // independent results (threads; output elements for the MMAs)
  std::function<Outcome(const runtime::Device&, std::uint64_t seed)> run;
  Tolerance tolerance{};
  // Instruction forms: every thread's input words from a seed, and how many
  // a thread has (for reports of the differing cases); absent for kernels.
  std::function<std::vector<std::uint32_t>(std::uint64_t seed)> inputs;
  int in_words = 0;
};

struct Family {
  std::string name;   // its file under tests/gpu_truth: <name>.truth
  std::string title;  // what it covers, for reports
  std::vector<Unit> units;
  // Why this build cannot run the family (nvcc's kernels where the build
  // found no recorded PTX of them); empty when it can. Recording it is refused and
  // its replay skipped, each saying why.
  std::string unavailable;
};

// Every family, built on first use.
const std::vector<Family>& families();
// nullptr when there is none of that name.
const Family* find_family(std::string_view name);
// The seed a unit's inputs are generated from: a digest of the family's and
// the unit's names, so adding a unit leaves the others' inputs alone. A
// recording seed other than 0 joins the digest: every unit then draws other
// random inputs (the edges of each generator stay), for an out-of-sample
// recording (scripts/record-gpu-truth.sh with SEED=...) that checks the
// simulator's rules on inputs they were not derived from.
std::uint64_t unit_seed(std::string_view family, std::string_view unit,
                        std::uint64_t recording_seed = 0);

}  // namespace warpforge::difftest
