// The LLVM-IR emitter's output and the LLVM toolchain runner: the IR names
// the documented intrinsics and attributes; assembly and code objects come
// from opt + llc (+ ld.lld); a missing or failing LLVM is a ToolchainError
// saying what to do.
#include <cstdlib>
#include <optional>

#include "amd_test_support.hpp"
#include "kernels/amd_mfma_gemm.hpp"
#include "kernels/amd_registry.hpp"

namespace warpforge::amdgpu::testing {
namespace {

TEST(AmdLlvmIr, NamesTheTargetIntrinsicsAndAttributes) {
  std::string ir = to_llvm_ir(examples::amd_gemm_edge_kernel(Target::gfx90a), Target::gfx90a);
  for (const char* want :
       {"target triple = \"amdgcn-amd-amdhsa\"",
        "@amd_gemm_edge.lds = internal addrspace(3) global [4096 x i8] poison, align 16",
        "define amdgpu_kernel void @amd_gemm_edge(ptr addrspace(1) %arg0",
        "\"amdgpu-flat-work-group-size\"=\"256,256\"", "\"target-cpu\"=\"gfx90a\"",
        "call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>",
        "@llvm.amdgcn.raw.buffer.load.v4i32(<4 x i32>", "i32 131072, i32 3",
        "call i32 @llvm.amdgcn.workitem.id.x()", "call i32 @llvm.amdgcn.workgroup.id.y()",
        "fence syncscope(\"workgroup\") release", "call void @llvm.amdgcn.s.barrier()",
        "; parameters: %arg0 = A %arg1 = B %arg2 = C %arg3 = m %arg4 = n %arg5 = k"})
    EXPECT_CONTAINS(ir, want);
}

TEST(AmdToolchain, AssemblyAndCodeObject) {
  const std::string ir = to_llvm_ir(examples::amd_gemm_128_kernel(Target::gfx90a), Target::gfx90a);
  try {
    std::string s = compile_to_assembly(ir, Target::gfx90a);
    EXPECT_CONTAINS(s, ".amdhsa_kernel amd_gemm_128");
    EXPECT_CONTAINS(s, "v_mfma_f32_32x32x8bf16_1k");
    EXPECT_CONTAINS(s, "amdgcn-amd-amdhsa--gfx90a");
    std::vector<char> object = compile_to_code_object(ir, Target::gfx90a);
    ASSERT_GT(object.size(), 4u);
    EXPECT_EQ(std::string(object.data(), 4),
              "\x7f"
              "ELF");
  } catch (const ToolchainError& e) {
    FAIL() << e.what();
  }
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(AmdToolchain, MissingLlvmSaysHowToInstallIt) {
  ScopedEnv env("WARPFORGE_LLVM_BIN", "/nonexistent-llvm");
  try {
    find_llvm_tools();
    FAIL() << "no ToolchainError";
  } catch (const ToolchainError& e) {
    EXPECT_CONTAINS(e.what(),
                    "LLVM for AMDGPU not found (missing: opt, llc, ld.lld, llvm-objdump, looked in "
                    "WARPFORGE_LLVM_BIN=/nonexistent-llvm)");
    EXPECT_CONTAINS(e.what(), "scripts/install-deps.sh");
    EXPECT_CONTAINS(e.what(), "apt-get install llvm-19 lld-19");
  }
}

TEST(AmdToolchain, InvalidIrIsReportedWithLlvmsMessage) {
  try {
    compile_to_assembly("define void @broken( {\n", Target::gfx942);
    FAIL() << "no ToolchainError";
  } catch (const ToolchainError& e) {
    EXPECT_CONTAINS(e.what(), "-mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O2");
    EXPECT_CONTAINS(e.what(), "failed (exit 1)");
    EXPECT_CONTAINS(e.what(), "error:");
  }
}

TEST(AmdToolchain, DisassemblingSomethingElseIsReported) {
  try {
    disassemble(std::vector<char>{'n', 'o', 't', ' ', 'E', 'L', 'F'}, Target::gfx90a);
    FAIL() << "no ToolchainError";
  } catch (const ToolchainError& e) {
    EXPECT_CONTAINS(e.what(), "llvm-objdump");
    EXPECT_CONTAINS(e.what(), "-d failed (exit 1)");
  }
}

TEST(AmdExamples, RegistryListsTheThreeTutorialKernels) {
  std::vector<std::string> names;
  for (const auto& e : examples::amd_examples()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"amd_gemm_128", "amd_gemm_runtime", "amd_gemm_edge"}));
  ASSERT_NE(examples::find_amd_example("amd_gemm_edge"), nullptr);
  EXPECT_EQ(examples::find_amd_example("amd_gemm_edge")->build(Target::gfx942).params.size(), 6u);
  EXPECT_EQ(examples::find_amd_example("nope"), nullptr);
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
