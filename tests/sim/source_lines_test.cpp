// Fault messages name the source position of the faulting instruction from
// the PTX's line information (.file, .loc, PTX ISA 11.5.1-2), the kernel's
// own line when the code was inlined from a function (inlined_at, or the
// DWARF .debug_info's inlined subroutines); and a
// signed load into a 64-bit register sign-extends (PTX ISA 9.7.9.8), as
// Triton's i32 arguments are loaded.
#include "hopper_kernels.hpp"
#include "sim_harness.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::sim::testing {
namespace {

class SourceLinesTest : public SimTest {
 protected:
  std::string error_of_ptx(const std::string& text, const std::string& name, const std::vector<runtime::KernelArg>& args) {
    try {
      auto loaded = sim.load(ptx::parse(text));
      sim.launch(*loaded, name, {.grid = {2}, .block = {32}}, args, nullptr);
    } catch (const SimError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return "";
  }
};

// Each thread stores one word at out + 4 * (ctaid * 32 + tid): one past the
// end for the last of 2 blocks when `out` holds 63 words.
const char* kStore = R"(
.visible .entry store(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .loc 1 5 0
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 32, %r1;
  .loc 2 40 9, function_name $L__info_string0, inlined_at 2 80 3
  mul.wide.u32 %rd2, %r3, 4;
  add.u64 %rd3, %rd1, %rd2;
  .loc 2 80 3, function_name $L__info_string1, inlined_at 1 12 17
  st.global.u32 [%rd3], %r3;
  .loc 1 0 0
  ret;
}
  .file 1 "/home/me/kernel.py"
  .file 2 "/usr/lib/triton" "language.py"
)";

TEST_F(SourceLinesTest, FaultNamesTheKernelsLineAndTheInlinedOne) {
  const runtime::DevicePtr out = zeros<std::uint32_t>(63);
  const std::string msg = error_of_ptx(ptx_module(kStore), "store", {arg_u64(out)});
  EXPECT_NE(msg.find("(st.global.u32 [%rd3], %r3) from /home/me/kernel.py:12:17 (inlined: "
                     "/usr/lib/triton/language.py:80:3): block (1,0,0) thread (31,0,0): store of 4 bytes"),
            std::string::npos)
      << msg;
}

// The same store as LLVM before inlined_at (Triton 3.6) writes it: the .loc
// names the inlined function's line only; the calls are DWARF 2
// DW_TAG_inlined_subroutine entries of .debug_info, each a range of labels
// and the call's file, line and column (the inner one's line as data2).
const char* kStoreDwarf = R"(
.visible .entry store(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
$L__func_begin0:
  .loc 1 5 0
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 32, %r1;
$L__tmp0:
  .loc 2 80 3
  mul.wide.u32 %rd2, %r3, 4;
$L__tmp1:
  .loc 2 40 9
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
$L__tmp2:
  .loc 1 0 0
  ret;
$L__func_end0:
}
  .file 1 "/home/me/kernel.py"
  .file 2 "/usr/lib/triton" "language.py"
  .section .debug_abbrev
  {
.b8 1, 17, 1, 3, 8, 0, 0
.b8 2, 46, 1, 17, 1, 18, 1, 0, 0
.b8 3, 29, 1, 17, 1, 18, 1, 88, 11, 89, 11, 87, 11, 0, 0
.b8 4, 29, 0, 17, 1, 18, 1, 88, 11, 89, 5, 87, 11, 0, 0
.b8 0
  }
  .section .debug_info
  {
.b32 71
.b8 2, 0
.b32 .debug_abbrev
.b8 8
.b8 1, 107, 0
.b8 2
.b64 $L__func_begin0
.b64 $L__func_end0
.b8 3
.b64 $L__tmp0
.b64 $L__tmp2
.b8 1, 12, 17
.b8 4
.b64 $L__tmp1
.b64 $L__tmp2
.b8 2, 80, 0, 3
.b8 0, 0, 0
  }
)";

TEST_F(SourceLinesTest, FaultNamesTheKernelsLineFromTheDebugInformation) {
  const runtime::DevicePtr out = zeros<std::uint32_t>(63);
  const std::string msg = error_of_ptx(ptx_module(kStoreDwarf), "store", {arg_u64(out)});
  EXPECT_NE(msg.find("(st.global.u32 [%rd3], %r3) from /home/me/kernel.py:12:17 (inlined: "
                     "/usr/lib/triton/language.py:40:9): block (1,0,0) thread (31,0,0): store of 4 bytes"),
            std::string::npos)
      << msg;
}

TEST_F(SourceLinesTest, PtxWithoutLineInformationNamesNoSource) {
  std::string text = ptx_module(kStore);
  for (std::size_t at; (at = text.find(".loc")) != std::string::npos;) text.erase(at, text.find('\n', at) - at);
  const runtime::DevicePtr out = zeros<std::uint32_t>(63);
  const std::string msg = error_of_ptx(text, "store", {arg_u64(out)});
  EXPECT_NE(msg.find("(st.global.u32 [%rd3], %r3): block (1,0,0) thread (31,0,0)"), std::string::npos) << msg;
}

TEST_F(SourceLinesTest, SignedLoadsSignExtendIntoWideRegisters) {
  const std::string text = ptx_module(R"(
.visible .entry widen(.param .u64 out, .param .u32 v32, .param .u16 v16)
{
  .reg .b64 %rd<6>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  ld.param.s32 %rd2, [v32];
  ld.param.s16 %rd3, [v16];
  ld.param.u32 %rd4, [v32];
  ld.param.s32 %r1, [v32];
  cvt.u64.u32 %rd5, %r1;
  st.global.v2.u64 [%rd1], {%rd2, %rd3};
  st.global.v2.u64 [%rd1+16], {%rd4, %rd5};
  ret;
}
)");
  const runtime::DevicePtr out = zeros<std::uint64_t>(4);
  runtime::KernelArg v16;
  const std::int16_t minus_three = -3;
  v16.bytes.resize(2);
  std::memcpy(v16.bytes.data(), &minus_three, 2);
  auto loaded = sim.load(ptx::parse(text));
  sim.launch(*loaded, "widen", {.grid = {1}, .block = {1}}, {arg_u64(out), arg_u32(0xFFFE1DC0u), v16}, nullptr);
  const auto got = download<std::uint64_t>(out, 4);
  EXPECT_EQ(static_cast<std::int64_t>(got[0]), -123456);  // s32 into a 64-bit register
  EXPECT_EQ(static_cast<std::int64_t>(got[1]), -3);       // s16 likewise
  EXPECT_EQ(got[2], 0xFFFE1DC0u);                         // u32 zero-extends
  EXPECT_EQ(got[3], 0xFFFE1DC0u);                         // s32 into a 32-bit register keeps 32 bits
}

}  // namespace
}  // namespace warpforge::sim::testing
