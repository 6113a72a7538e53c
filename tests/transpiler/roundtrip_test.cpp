// End to end: C++ that the transpiler wrote at build time (transpiler.cmake),
// compiled into this test, rebuilds modules equal to the parsed inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kernels/registry.hpp"
#include "transpiler/transpiled_inputs.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace {

using warpforge::ptx::Module;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first line where the emitted texts differ, for a readable failure.
std::string first_difference(const Module& a, const Module& b) {
  std::istringstream x(a.to_ptx()), y(b.to_ptx());
  std::string lx, ly;
  for (int line = 1;; ++line) {
    bool more_x = static_cast<bool>(std::getline(x, lx)), more_y = static_cast<bool>(std::getline(y, ly));
    if (!more_x && !more_y) break;
    if (!more_x) lx.clear();
    if (!more_y) ly.clear();
    if (lx != ly) return "line " + std::to_string(line) + ": rebuilt `" + lx + "`, parsed `" + ly + "`";
  }
  return "the texts are equal; the difference is structural only";
}

bool is_handwritten(const TranspiledInput& input) {
  return input.ptx_file.rfind(WARPFORGE_TRANSPILER_INPUTS_DIR, 0) == 0;
}

TEST(TranspilerRoundTrip, BuiltinKernels) {
  int checked = 0;
  for (const auto& input : transpiled_inputs()) {
    if (!input.ptx_file.empty()) continue;
    const auto* builtin = warpforge::examples::find_builtin(input.name);
    ASSERT_NE(builtin, nullptr) << input.name;
    Module parsed = warpforge::ptx::parse(builtin->build(builtin->default_target).to_ptx(), input.name);
    Module rebuilt = input.build();
    EXPECT_EQ(rebuilt, parsed) << input.name << ": " << first_difference(rebuilt, parsed);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(warpforge::examples::builtin_kernels().size()));
}

TEST(TranspilerRoundTrip, CorpusFiles) {
  if (WARPFORGE_TRANSPILED_CORPUS_COUNT == 0) GTEST_SKIP() << "nvcc was not found at configure time: no corpus PTX to transpile";
  int checked = 0;
  bool saw_wgmma_with_mbarrier_loop = false;
  for (const auto& input : transpiled_inputs()) {
    if (input.ptx_file.empty() || is_handwritten(input)) continue;
    std::string text = read_file(input.ptx_file);
    ASSERT_FALSE(text.empty()) << input.ptx_file;
    Module parsed = warpforge::ptx::parse(text, input.ptx_file);
    Module rebuilt = input.build();
    EXPECT_EQ(rebuilt, parsed) << input.name << ": " << first_difference(rebuilt, parsed);
    saw_wgmma_with_mbarrier_loop |= text.find("wgmma.mma_async") != std::string::npos &&
                                    text.find("mbarrier.try_wait") != std::string::npos;
    ++checked;
  }
  EXPECT_EQ(checked, WARPFORGE_TRANSPILED_CORPUS_COUNT);
  EXPECT_TRUE(saw_wgmma_with_mbarrier_loop) << "no transpiled input has wgmma and an mbarrier wait loop";
}

// inputs/*.ptx: registers and labels scoped by block, constant expressions.
// The rebuilt module equals the parsed one, and its PTX assembles to the
// machine code of the original.
TEST(TranspilerRoundTrip, HandwrittenScopedInputs) {
  int checked = 0;
  for (const auto& input : transpiled_inputs()) {
    if (!is_handwritten(input)) continue;
    const std::string text = read_file(input.ptx_file);
    Module parsed = warpforge::ptx::parse(text, input.ptx_file);
    Module rebuilt = input.build();
    EXPECT_EQ(rebuilt, parsed) << input.name << ": " << first_difference(rebuilt, parsed);
    EXPECT_EQ(warpforge::ptx::verify(rebuilt), std::vector<std::string>{}) << input.name;
    ++checked;

    auto ptxas = warpforge::ptx::find_cuda_tool("ptxas");
    if (!ptxas) continue;  // the structural check above holds without the toolkit
    const std::string dir = ::testing::TempDir() + "warpforge_transpiled_" + input.name;
    auto assemble = [&](const std::string& ptx, const std::string& stem) {
      std::ofstream(dir + stem + ".ptx") << ptx;
      auto run = warpforge::ptx::run_tool(
          *ptxas,
          {"-arch=" + parsed.target.at(0), dir + stem + ".ptx", "-o", dir + stem + ".cubin"});
      EXPECT_EQ(run.exit_code, 0) << input.name << " " << stem << ": " << run.output;
      return read_file(dir + stem + ".cubin");
    };
    const std::string want = assemble(text, "original"),
                      got = assemble(rebuilt.to_ptx(), "rebuilt");
    EXPECT_FALSE(want.empty());
    EXPECT_TRUE(want == got) << input.name << ": the rebuilt PTX assembles to other machine code";
  }
  EXPECT_GE(checked, 1) << "no hand-written input in " << WARPFORGE_TRANSPILER_INPUTS_DIR;
}

}  // namespace
