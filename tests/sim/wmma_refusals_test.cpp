// Every refusal of wmma (src/sim/decode.cpp, src/sim/wmma.cpp): forms the
// simulator does not run and malformed operands at decode, and a warp whose
// threads give different addresses at run time, each with its message.
#include "hopper_harness.hpp"

namespace warpforge::sim::testing {
namespace {

class WmmaRefusal : public HopperTest {
 protected:
  std::string refusal(const std::string& lines) {
    return ptx_error(ptx_module(".visible .entry k(.param .u64 p)\n{\n  .reg .b32 %r<8>;\n"
                                "  .reg .b64 %rd<4>;\n  " +
                                lines + "\n  ret;\n}\n"),
                     "k", {.grid = {1}, .block = {32}}, {arg_u64(0)});
  }
};

constexpr const char* kFour = "{%r0, %r1, %r2, %r3}";
constexpr const char* kEight = "{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}";

TEST_F(WmmaRefusal, MalformedWmmaIsRefusedAtDecode) {
  const std::string four = kFour, eight = kEight;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 " + four + ", [%rd1], %r4;",
       "wmma.load's destination must be a vector of 8 registers"},
      {"wmma.load.a.sync.aligned.row.m16n16k16.global.tf32 " + four + ", [%rd1], %r4;",
       ".tf32 elements in matrix a"},
      {"wmma.load.c.sync.aligned.row.m16n16k8.global.f16 " + four + ", [%rd1], %r4;",
       ".f16 elements in matrix c"},
      {"wmma.mma.sync.aligned.row.col.m16n16k16.f16.bf16.bf16.f16 " + four + ", " + four + ", " +
           four + ", " + four + ";",
       "inputs .bf16 with .f16 accumulators"},
      {"wmma.mma.sync.aligned.row.m16n16k16.f32.f32 " + eight + ", " + eight + ", " + eight + ", " +
           eight + ";",
       "wmma.mma needs A's and B's layouts"},
      {"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32.satfinite " + eight + ", " + eight + ", " +
           eight + ", " + eight + ";",
       "wmma.mma .satfinite is not simulated"},
      {"wmma.load.sync.aligned.row.m16n16k16.f16 " + eight + ", [%rd1], %r4;",
       "wmma takes .load.a, .load.b, .load.c, .mma or .store.d"},
      {"wmma.store.d.sync.aligned.row.col.m16n16k16.f32 [%rd1], " + eight + ", %r4;",
       "a wmma load or store needs one layout"},
  };
  for (const auto& [line, message] : cases) {
    const std::string msg = refusal(line);
    EXPECT_NE(msg.find("kernel 'k', PTX line "), std::string::npos) << line << "\n" << msg;
    EXPECT_NE(msg.find(message), std::string::npos) << line << "\n" << msg;
  }
}

TEST_F(WmmaRefusal, EveryThreadMustGiveTheSameAddress) {
  const std::string msg =
      refusal("cvt.u64.u32 %rd1, %tid.x;\n  wmma.load.c.sync.aligned.row.m16n16k16.f32 " +
              std::string(kEight) + ", [%rd1], 16;");
  EXPECT_NE(msg.find("wmma address 0x1 and stride 16 differ from lane 0's (0x0, 16)"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
