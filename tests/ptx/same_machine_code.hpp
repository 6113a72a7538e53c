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
};
Assembly corpus_assembly(const std::filesystem::path& corpus_file);

// Assembles both texts with `ptxas` in a scratch folder; "" when the machine
// code is the same, else what differs (a ptxas failure included).
std::string machine_code_difference(const std::string& ptxas, const std::string& original,
                                    const std::string& rebuilt, const Assembly& how);

}  // namespace warpforge::testing
