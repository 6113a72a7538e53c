// ptxas's verdicts on the kernels' PTX, recorded: the *Ptxas tests assemble
// each kernel the way the GPU would and read ptxas's log (spills,
// registers, serialized wgmma), about 40 CPU-seconds of `make test` for text
// that rarely changes. ptxas is deterministic for a given build, so its
// verdict on a PTX text is recorded once (tests/ops/ptxas_record.txt: the
// ptxas build on the first line, then one line per assembly: kernel, arch,
// the digest of arch, options and PTX, ok or failed, the escaped log) and
// read back for the same text.
//
// The record never stands in for PTX it has not seen: a kernel whose PTX
// is not in it is assembled for real, and the test fails, naming the kernel
// and scripts/record-ptxas.sh, so that a record left stale cannot hide its
// cost (the checks on the log still run, on the real one). With another
// ptxas build than the record's, every kernel is assembled for real and
// nothing fails for it. WARPFORGE_RECORD_PTXAS=<file> assembles every kernel
// and appends its line to <file> (what the script does).
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ops::testing {

// ptx::run_ptxas's ok and log (no cubin) for `text`, from the record where
// it holds `text` for this ptxas.
ptx::PtxasResult recorded_ptxas(const std::string& text, const std::string& arch,
                                const std::vector<std::string>& extra_args = {});

// The record's parts, for its own tests.
namespace ptxas_record {
bool applies();  // ptxas is here, the build that made the record
std::string key(const std::string& text, const std::string& arch, const std::vector<std::string>& extra_args);
std::string line(const std::string& text, const std::string& arch, const std::string& key,
                 const ptx::PtxasResult& r);
struct Entry {
  std::string key;
  bool ok = false;
  std::string log;
};
// The entry of a record line; key empty when the line is not one.
Entry parse(const std::string& line);
}  // namespace ptxas_record

}  // namespace warpforge::ops::testing
