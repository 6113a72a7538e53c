// verify()'s checks against the PTX ISA (src/ptx/isa_checks.cpp): what it
// accepts and what it refuses, each judged by ptxas too where the CUDA
// toolkit is installed, so that the verifier never refuses what ptxas takes.
#include <gtest/gtest.h>

#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/ptxas.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::ptx {
namespace {

std::string module(const std::string& header, const std::string& body) {
  return header + ".address_size 64\n.visible .entry k(.param .u64 p)\n{\n" + body + "\tret;\n}\n";
}

const std::string kSm80 = ".version 7.0\n.target sm_80\n";
const std::string kRegisters =
    "\t.reg .pred %p<3>;\n\t.reg .b16 %h<3>;\n\t.reg .u16 %rs<3>;\n\t.reg .b32 %r<4>;\n"
    "\t.reg .s32 %s<3>;\n\t.reg .f32 %f<3>;\n\t.reg .u64 %rd<3>;\n\t.reg .f64 %fd<2>;\n";

// ptxas's verdict on `text` for its own target, when ptxas is installed.
std::optional<bool> ptxas_accepts(const std::string& text) {
  if (!find_ptxas()) return std::nullopt;
  const Module m = parse(text);
  return run_ptxas(text, m.target.at(0)).ok;
}

TEST(VerifierIsa, AcceptsTheOperandTypesTheIsaAllows) {
  const std::string text = module(
      kSm80, kRegisters +
                 // bit-size types take any type of their size; integers of one size mix
                 "\tmov.b32 %f0, %r1;\n\tmov.b32 %r0, %f1;\n\tadd.u32 %s0, %s1, %r1;\n"
                 "\tadd.s32 %r2, %s1, 7;\n\tmov.u32 %r3, %tid.x;\n"
                 // .wide and the u32 / pred operands of shifts, selects and compares
                 "\tmul.wide.u32 %rd0, %r1, %r2;\n\tmad.wide.s32 %rd1, %s1, %s2, %rd0;\n"
                 "\tshl.b64 %rd2, %rd1, %r1;\n\tbfe.u32 %r2, %r1, %r0, 8;\n"
                 "\tsetp.lt.s32 %p1, %s1, %r1;\n\tselp.f32 %f2, %f0, %f1, %p1;\n"
                 "\tpopc.b64 %r3, %rd2;\n\tnot.pred %p2, %p1;\n"
                 // f16 in a 16-bit register, f16x2 in a 32-bit one
                 "\tadd.f16 %h0, %h1, %h2;\n\tadd.f16x2 %r0, %r1, %r2;\n"
                 // ld/st/cvt: a register wider than the type
                 "\tld.param.u64 %rd0, [p];\n\tld.global.u8 %rs0, [%rd0];\n"
                 "\tld.global.u8 %r0, [%rd0];\n\tst.global.u8 [%rd0], %r1;\n"
                 "\tld.global.v2.f32 {%f0, %f1}, [%rd0];\n\tcvt.u64.u32 %rd1, %r1;\n"
                 "\tcvt.rn.f16.f32 %h0, %f0;\n\tcvt.f64.f32 %fd0, %f1;\n"
                 "\tcvt.rn.f16x2.f32 %r0, %f0, %f1;\n"
                 // instructions of the ISA beyond warpforge's vocabulary
                 "\ttestp.finite.f32 %p0, %f0;\n\tcopysign.f32 %f2, %f0, %f1;\n"
                 "\tst.global.f32 [%rd0], %f2;\n");
  EXPECT_EQ(verify(parse(text)), std::vector<std::string>{});
  if (auto ok = ptxas_accepts(text)) {
    EXPECT_TRUE(*ok);
  }
}

TEST(VerifierIsa, AcceptsEveryTargetAndVersionPtxasDoes) {
  for (const char* header : {".version 9.0\n.target sm_100f\n", ".version 8.0\n.target sm_90a\n",
                             ".version 7.8\n.target sm_89, texmode_independent\n", ".version 6.3\n.target sm_75\n",
                             ".version 8.7\n.target sm_120a\n", ".version 9.0\n.target sm_110\n"}) {
    const std::string text = module(header, "");
    EXPECT_EQ(verify(parse(text)), std::vector<std::string>{}) << header;
    if (auto ok = ptxas_accepts(text)) {
      EXPECT_TRUE(*ok) << header;
    }
  }
}

struct Refusal {
  std::string text;
  std::string problem;
};

TEST(VerifierIsa, RefusesWhatPtxasRefusesNamingTheRule) {
  const std::vector<Refusal> cases = {
      {module(".version 7.0\n.target sm_999\n", ""),
       ".target sm_999 is no target of the PTX ISA; accepted: sm_XX names such as sm_80, sm_90a "
       "or sm_100a, then the options debug, map_f64_to_f32, texmode_unified, texmode_independent"},
      {module(".version 7.0\n.target debug\n", ""),
       ".target debug is an option; name the architecture first (e.g. .target sm_80, debug)"},
      {module(".version 99.9\n.target sm_80\n", ""),
       ".version 99.9 is no PTX ISA version; the published ones are 1.0-1.5, 2.0-2.3, 3.0-3.2, "
       "4.0-4.3, 5.0-5.1, 6.0-6.5, 7.0-7.8, 8.0-8.8, 9.0"},
      {module(".version 7.9\n.target sm_80\n", ""),
       ".version 7.9 is no PTX ISA version; the published ones are 1.0-1.5, 2.0-2.3, 3.0-3.2, "
       "4.0-4.3, 5.0-5.1, 6.0-6.5, 7.0-7.8, 8.0-8.8, 9.0"},
      {module(".version 8.5\n.target sm_100a\n", ""),
       ".target sm_100a needs .version 8.6 or later; the module has .version 8.5"},
      {module(kSm80, kRegisters + "\tsetmaxnreg.inc.sync.aligned.u32 232;\n"),
       "function k: setmaxnreg.inc.sync.aligned.u32: setmaxnreg needs sm_90a or a later "
       "architecture- or family-specific target; the module's .target is sm_80"},
      {module(kSm80, kRegisters + "\tadd.u64 %rd0, %f0, %rd1;\n"),
       "function k: add.u64 operand 2 is %f0, a .f32 register; its type .u64 takes a 64-bit .b, "
       ".u or .s register (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tadd.f32 %f0, %s1, %f1;\n"),
       "function k: add.f32 operand 2 is %s1, a .s32 register; its type .f32 takes a .f32 or .b32 "
       "register (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tmov.u32 %r0, %rd1;\n"),
       "function k: mov.u32 operand 2 is %rd1, a .u64 register; its type .u32 takes a 32-bit .b, "
       ".u or .s register (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tld.param.u64 %rd0, [p];\n\tld.global.u64 %r0, [%rd0];\n"),
       "function k: ld.global.u64 operand 1 is %r0, a .b32 register; its type .u64 takes a "
       "register of at least 64 bits (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tld.param.u64 %rd0, [p];\n\tst.global.v2.f32 [%rd0], {%f0, %h1};\n"),
       "function k: st.global.v2.f32 operand 2 is %h1, a .b16 register; its type .f32 takes a "
       "register of at least 32 bits (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tcvt.f32.f64 %f0, %f1;\n"),
       "function k: cvt.f32.f64 operand 2 is %f1, a .f32 register; its type .f64 takes a "
       "register of at least 64 bits (PTX ISA 6.1)"},
      {module(kSm80, kRegisters + "\tsetp.eq.u32 %p0, %p1, 1;\n"),
       "function k: setp.eq.u32 operand 2 is %p1, a .pred register; its type .u32 takes a 32-bit "
       ".b, .u or .s register (PTX ISA 6.1)"},
  };
  for (const Refusal& c : cases) {
    EXPECT_EQ(verify(parse(c.text)), std::vector<std::string>{c.problem}) << c.text;
    if (auto ok = ptxas_accepts(c.text)) {
      EXPECT_FALSE(*ok) << c.text;
    }
  }
}

}  // namespace
}  // namespace warpforge::ptx
