// The record of ptxas's verdicts (ptxas_record.hpp): a line reads back as
// written; the key tells apart every input of an assembly; recorded PTX is
// answered from the record without ptxas; PTX the record lacks is assembled
// for real and fails the test that asked, naming the script that records it.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "ops/ptxas_record.hpp"

namespace warpforge::ops::testing {
namespace {

// A kernel that stores one word: the record holds its verdict for sm_80
// (scripts/record-ptxas.sh runs this test too). `comment` goes into the
// text, to make PTX the record has never seen.
std::string record_probe_kernel(const std::string& comment = "") {
  return ".version 8.0\n.target sm_80\n.address_size 64\n// " + comment +
         "\n.visible .entry record_probe(.param .u64 out) {\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
         "  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, 7;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
}

TEST(PtxasRecord, ALineReadsBackAsWritten) {
  ptx::PtxasResult r;
  r.ok = true;
  r.log = "ptxas info : Used 4 registers\n  a \\n that is text, not a line break\n\n";
  const std::string key = ptxas_record::key(record_probe_kernel(), "sm_80", {"-v"});
  const std::string line = ptxas_record::line(record_probe_kernel(), "sm_80", key, r);
  EXPECT_TRUE(line.starts_with("record_probe sm_80 " + key + " ok ")) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  const ptxas_record::Entry e = ptxas_record::parse(line);
  EXPECT_EQ(e.key, key);
  EXPECT_TRUE(e.ok);
  EXPECT_EQ(e.log, r.log);
  r.ok = false;
  EXPECT_FALSE(ptxas_record::parse(ptxas_record::line(record_probe_kernel(), "sm_80", key, r)).ok);
  EXPECT_TRUE(ptxas_record::parse("# Build cuda_13.0").key.empty());
  EXPECT_TRUE(ptxas_record::parse("record_probe sm_80 abc ok log").key.empty());  // not a digest
}

TEST(PtxasRecord, TheKeyTellsApartTextTargetAndOptions) {
  const std::string base = ptxas_record::key(record_probe_kernel(), "sm_80", {"-c", "-v"});
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, ptxas_record::key(record_probe_kernel(), "sm_80", {"-c", "-v"}));
  EXPECT_NE(base, ptxas_record::key(record_probe_kernel("x"), "sm_80", {"-c", "-v"}));
  EXPECT_NE(base, ptxas_record::key(record_probe_kernel(), "sm_90a", {"-c", "-v"}));
  EXPECT_NE(base, ptxas_record::key(record_probe_kernel(), "sm_80", {"-v"}));
  EXPECT_NE(base, ptxas_record::key(record_probe_kernel(), "sm_80", {"-c-v"}));  // options are not run together
}

// Once the record is read, ptxas is replaced by /bin/false, which fails
// every assembly: the recorded kernel still comes back as assembled.
TEST(PtxasRecord, RecordedPtxIsAnsweredWithoutPtxas) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found";
  const ptx::PtxasResult real = recorded_ptxas(record_probe_kernel(), "sm_80", {"-v"});
  ASSERT_TRUE(real.ok) << real.log;
  if (std::getenv("WARPFORGE_RECORD_PTXAS")) GTEST_SKIP() << "recording: assembled for real";
  if (!ptxas_record::applies()) GTEST_SKIP() << "the record was made with another ptxas build";
  const char* before = std::getenv("WARPFORGE_PTXAS");
  const std::string saved = before ? before : "";
  ::setenv("WARPFORGE_PTXAS", "/bin/false", 1);
  const ptx::PtxasResult recorded = recorded_ptxas(record_probe_kernel(), "sm_80", {"-v"});
  const ptx::PtxasResult refused = ptx::run_ptxas(record_probe_kernel(), "sm_80", {"-v"});
  before ? ::setenv("WARPFORGE_PTXAS", saved.c_str(), 1) : ::unsetenv("WARPFORGE_PTXAS");
  EXPECT_TRUE(recorded.ok && recorded.log == real.log) << recorded.log;
  EXPECT_NE(recorded.log.find("Used"), std::string::npos) << recorded.log;  // ptxas -v's report
  EXPECT_FALSE(refused.ok);  // /bin/false really stood in for ptxas
}

TEST(PtxasRecord, PtxTheRecordLacksIsAssembledAndFailsTheTest) {
  if (!ptxas_record::applies()) GTEST_SKIP() << "no ptxas, or another build than the record's";
  if (std::getenv("WARPFORGE_RECORD_PTXAS")) GTEST_SKIP() << "recording: every kernel is assembled for real";
  const std::string unseen = record_probe_kernel(std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  ptx::PtxasResult r;
  EXPECT_NONFATAL_FAILURE(r = recorded_ptxas(unseen, "sm_80", {"-v"}),
                          "kernel record_probe for sm_80: its PTX is not in tests/ops/ptxas_record.txt");
  EXPECT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.log.find("Used"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace warpforge::ops::testing
