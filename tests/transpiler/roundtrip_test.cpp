// End to end: C++ that the transpiler wrote at build time (transpiler.cmake),
// compiled into this test, rebuilds modules equal to the parsed inputs, and
// their PTX assembles with ptxas to the machine code of the inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kernels/registry.hpp"
#include "ptx/same_machine_code.hpp"
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

int instruction_count(const warpforge::ptx::Block& block) {
  int n = 0;
  for (const auto& s : block.body) {
    n += std::holds_alternative<warpforge::ptx::Instruction>(s);
    if (const auto* nested = std::get_if<warpforge::ptx::Block>(&s))
      n += instruction_count(*nested);
  }
  return n;
}

int instruction_count(const Module& m) {
  int n = 0;
  for (const auto& item : m.items)
    if (const auto* f = std::get_if<warpforge::ptx::Function>(&item); f && f->body)
      n += instruction_count(*f->body);
  return n;
}

// The rebuilt module equals the parsed one and its PTX assembles to the
// machine code of the original (where the CUDA toolkit is installed).
// Returns "" or what failed.
std::string round_trip_failure(const TranspiledInput& input, const std::string& text,
                               const warpforge::testing::Assembly& how) {
  const Module parsed = warpforge::ptx::parse(text, input.ptx_file);
  const Module rebuilt = input.build();
  if (!(rebuilt == parsed)) return "rebuilt != parsed, " + first_difference(rebuilt, parsed);
  if (auto problems = warpforge::ptx::verify(rebuilt); !problems.empty())
    return "verifier: " + problems[0];
  auto ptxas = warpforge::ptx::find_cuda_tool("ptxas");
  if (!ptxas) return "";  // the structural check holds without the toolkit
  return warpforge::testing::machine_code_difference(*ptxas, text, rebuilt.to_ptx(), how);
}

// Each corpus file's row of the table in docs/TRANSPILER.md, which
// scripts/transpile-large-corpus.sh collects from this output.
void print_row(const TranspiledInput& input, const Module& parsed, const std::string& failure) {
  std::cout << "| " << std::filesystem::path(input.ptx_file).filename().string() << " | "
            << instruction_count(parsed) << " | " << input.raw_calls << " | "
            << (failure.empty() ? "equal, same machine code" : "FAILS") << " |\n";
}

TEST(TranspilerRoundTrip, CorpusFiles) {
  if (WARPFORGE_TRANSPILED_CORPUS_COUNT == 0)
    GTEST_SKIP() << "tests/corpus/ptx held no PTX at configure time";
  if (!warpforge::ptx::find_cuda_tool("ptxas"))
    std::cout << "ptxas not found: structural checks only\n";
  int checked = 0;
  bool saw_wgmma_with_mbarrier_loop = false;
  for (const auto& input : transpiled_inputs()) {
    if (input.ptx_file.empty() || is_handwritten(input)) continue;
    const std::string text = read_file(input.ptx_file);
    ASSERT_FALSE(text.empty()) << input.ptx_file;
    const std::string failure =
        round_trip_failure(input, text, warpforge::testing::corpus_assembly(input.ptx_file));
    EXPECT_EQ(failure, "") << input.name;
    print_row(input, warpforge::ptx::parse(text, input.ptx_file), failure);
    saw_wgmma_with_mbarrier_loop |= text.find("wgmma.mma_async") != std::string::npos &&
                                    text.find("mbarrier.try_wait") != std::string::npos;
    ++checked;
  }
  EXPECT_EQ(checked, WARPFORGE_TRANSPILED_CORPUS_COUNT);
  EXPECT_TRUE(saw_wgmma_with_mbarrier_loop) << "no transpiled input has wgmma and an mbarrier wait loop";
}

// inputs/*.ptx: registers and labels scoped by block, constant expressions.
TEST(TranspilerRoundTrip, HandwrittenScopedInputs) {
  int checked = 0;
  for (const auto& input : transpiled_inputs()) {
    if (!is_handwritten(input)) continue;
    const std::string text = read_file(input.ptx_file);
    const Module parsed = warpforge::ptx::parse(text, input.ptx_file);
    EXPECT_EQ(round_trip_failure(input, text, {.target = parsed.target.at(0)}), "") << input.name;
    ++checked;
  }
  EXPECT_GE(checked, 1) << "no hand-written input in " << WARPFORGE_TRANSPILER_INPUTS_DIR;
}

}  // namespace
