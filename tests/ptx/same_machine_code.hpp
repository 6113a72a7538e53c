// Whether two PTX texts assemble with ptxas to the same machine code: the
// check of every round trip (parse -> emit, parse -> transpile -> rebuild)
// over the corpus, where the rebuilt text must give what the original gives.
#pragma once

#include <filesystem>
#include <string>

namespace warpforge::testing {

// How a corpus file is assembled and compared, from its name
// <source>.<target>.<variant>.ptx (tests/corpus/corpus.cmake).
struct Assembly {
  std::string target;  // ptxas -arch
  // -rdc output: assembled with -c (extern functions stay unresolved).
  bool relocatable = false;
  // -O3 output: the cubins must be byte-identical. With debug or line
  // information (-G, -lineinfo, Triton's PTX) they are compared section by
  // section, leaving out what records PTX source lines, which the emitter's
  // layout changes.
  bool exact = true;
  // The corpus file's name without .ptx, under which
  // tests/corpus/ptx/machine-code.txt records the digest of its original's
  // machine code; empty for PTX outside the corpus.
  std::string corpus_name;
};
Assembly corpus_assembly(const std::filesystem::path& corpus_file);

// Assembles both texts with `ptxas` in a scratch folder; "" when the machine
// code is the same, else what differs (a ptxas failure included). A corpus
// file whose original's digest machine-code.txt records for this ptxas (its
// first line names ptxas's build) is assembled only when the rebuilt text's
// machine code has another digest, to say what differs: one ptxas run
// instead of two. A pair of texts that tests/corpus/ptx/same-machine-code.txt
// records (the digest of both and the flags, for the same ptxas) was seen to
// give the same machine code and is not assembled at all. With
// WARPFORGE_RECORD_MACHINE_CODE=<file> in the environment, every corpus
// original is assembled and its digest appended to <file>
// (scripts/record-ptx-corpus.sh); with WARPFORGE_RECORD_SAME_MACHINE_CODE=<file>,
// every pair is assembled and those that agree appended to <file>
// (scripts/record-ptxas.sh).
std::string machine_code_difference(const std::string& ptxas, const std::string& original,
                                    const std::string& rebuilt, const Assembly& how);

}  // namespace warpforge::testing
