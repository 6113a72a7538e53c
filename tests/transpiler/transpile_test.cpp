// The generator on small PTX snippets: what the C++ it writes says.
#include <gtest/gtest.h>

#include <initializer_list>

#include "transpiler/code.hpp"
#include "transpiler/transpile.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::transpiler {
namespace {

std::string kernel(const std::string& body, const std::string& params = "") {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(" + params + ")\n{\n" + body + "\n}\n";
}

std::string transpiled(const std::string& ptx_text) { return transpile(ptx::parse(ptx_text), {.name = "snippet"}); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Each of `calls` appears in the generated `out`.
void expect_calls(const std::string& out, std::initializer_list<const char*> calls) {
  for (const char* call : calls) EXPECT_TRUE(has(out, call)) << call << "\n" << out;
}

TEST(Transpile, DeclaresRegistersAsThePtxDid) {
  std::string out = transpiled(kernel(".reg .b32 %r<4>;\n.reg .f32 %acc;\n.reg .pred %p<2>;\nadd.f32 %acc, %acc, %acc;\nret;"));
  EXPECT_TRUE(has(out, "k.declare_regs(b32, \"%r\", 4);")) << out;
  EXPECT_TRUE(has(out, "Reg acc = k.declare_reg(f32, \"%acc\");")) << out;
  EXPECT_TRUE(has(out, "k.declare_preds(\"%p\", 2);")) << out;
  EXPECT_TRUE(has(out, "k.add(acc, acc, acc);")) << out;
  // %r and %p are never named: declared, with no handle left unused.
  EXPECT_FALSE(has(out, "Regs r =")) << out;
  EXPECT_TRUE(has(out, "warpforge::ptx::Module build_snippet()")) << out;
}

TEST(Transpile, FoldsArithmeticProgressionsIntoLoops) {
  std::string out = transpiled(kernel(
      ".reg .b64 %rd<2>;\n.reg .f32 %f<5>;\n"
      "st.global.f32 [%rd1], %f1;\nst.global.f32 [%rd1+4], %f2;\nst.global.f32 [%rd1+8], %f3;\n"
      "st.global.f32 [%rd1+12], %f4;\nret;"));
  // [%rd1] has no offset to step, so the loop starts at the second store.
  EXPECT_TRUE(has(out, "k.st(Space::global, f32, at(rd[1]), f[1]);\n  for (int i = 0; i < 3; ++i) {")) << out;
  EXPECT_TRUE(has(out, "k.st(Space::global, f32, at(rd[1], 4 + 4 * i), f[2 + i]);")) << out;
}

TEST(Transpile, DoesNotFoldWhatIsNotAProgression) {
  std::string out = transpiled(kernel(
      ".reg .b32 %r<9>;\nadd.s32 %r1, %r2, 1;\nadd.s32 %r3, %r4, 2;\nadd.s32 %r5, %r6, 4;\nret;"));
  EXPECT_FALSE(has(out, "for (")) << out;
}

TEST(Transpile, SpecialRegistersBranchesAndGuards) {
  std::string out = transpiled(kernel(
      ".reg .b32 %r<3>;\n.reg .pred %p<2>;\nmov.u32 %r1, %tid.x;\nsetp.ne.s32 %p1, %r1, 0;\n"
      "@%p1 bra $L__BB0_2;\n@!%p1 st.global.u32 [%r1], %r2;\n$L__BB0_2:\nret;"));
  EXPECT_TRUE(has(out, "k.mov(r[1].as(u32), SReg::tid_x);")) << out;
  EXPECT_TRUE(has(out, "k.setp(p[1], Cmp::ne, r[1].as(s32), 0);")) << out;
  EXPECT_TRUE(has(out, "Label L_BB0_2 = k.label_named(\"$L__BB0_2\");")) << out;
  EXPECT_TRUE(has(out, "k.bra_if(p[1], L_BB0_2);")) << out;
  EXPECT_TRUE(has(out, "k.guarded(!p[1], [&] { k.inst(\"st.global.u32\", at(r[1]), r[2]); });")) << out;
  EXPECT_TRUE(has(out, "k.place(L_BB0_2);")) << out;
}

// The typed wrappers for what nvcc, CUB and Triton emit most, each used
// because a sandbox kernel emitted the identical instruction.
TEST(Transpile, TypedWrappersForCompilerOutput) {
  std::string out = transpiled(kernel(
      ".reg .b32 %r<9>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<5>;\n.reg .pred %p<3>;\n"
      "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];\nst.shared.u32 [%r1], 0;\n"
      "cvt.s64.s32 %rd2, %r1;\ncvt.rn.f32.u32 %f1, %r2;\ncvta.to.global.u64 %rd3, %rd2;\n"
      "mul.wide.u32 %rd3, %r2, 4;\nmad.lo.s32 %r3, %r1, 8, %r2;\nselp.b32 %r4, 1, %r3, %p1;\n"
      "not.pred %p2, %p1;\nmov.pred %p1, %p2;\nnot.b32 %r5, %r4;\nfma.rn.ftz.f32 %f2, %f1, %f3, %f4;\n"
      "shfl.sync.bfly.b32 %r6|%p2, %r5, 16, 31, -1;\nvote.sync.ballot.b32 %r7, %p1, -1;\n"
      "bar.sync 0;\npopc.b32 %r8, %r7;\natom.global.add.u32 %r8, [%rd1], 1;\ndiv.u32 %r8, %r7, %r6;\nret;"));
  expect_calls(out, {
        "k.ld(Space::global, f32, slice(f, 1, 4), at(rd[1], 16), {.nc = true});",
        "k.st(Space::shared, u32, at(r[1]), 0);", "k.cvt(s64, s32, rd[2], r[1]);",
        "k.cvt(f32, u32, f[1], r[2], {.round = Round::rn});", "k.cvta_to(Space::global, rd[3].as(u64), rd[2].as(u64));",
        "k.mul_wide(rd[3].as(u64), r[2].as(u32), 4);", "k.mad(r[3].as(s32), r[1], 8, r[2]);",
        "k.selp(r[4], 1, r[3], p[1]);", "k.not_(p[2], p[1]);", "k.mov(p[1], p[2]);", "k.not_(r[5], r[4]);",
        "k.fma(f[2], f[1], f[3], f[4], {.round = Round::rn, .ftz = true});",
        "k.shfl_sync(Shfl::bfly, r[6], r[5], 16, 31, -1, p[2]);", "k.ballot_sync(r[7], p[1], -1);", "k.bar_sync(0);",
        "k.popc(r[8], r[7]);", "k.atom(Space::global, AtomOp::add, u32, r[8].as(u32), at(rd[1]), 1);",
        "k.div(r[8].as(u32), r[7], r[6]);"});
  EXPECT_FALSE(has(out, "k.inst(")) << out;
}

// The typed forms added for what stayed raw most in the corpus: generic
// addresses (-G builds), module variables by name, f64 immediates, .pred
// logic, the funnel shift, redux, ex2/sqrt and the packed conversions.
TEST(Transpile, TypedWrappersForGenericAddressesSymbolsAndPredicates) {
  std::string out = transpiled(
      ".version 8.0\n.target sm_90a\n.address_size 64\n.shared .align 4 .b8 smem[64];\n"
      ".visible .entry k()\n{\n.local .align 8 .b8 __local_depot0[16];\n"
      ".reg .b32 %r<9>;\n.reg .b64 %rd<4>;\n.reg .f64 %fd<3>;\n.reg .pred %p<4>;\n"
      ".reg .b16 %rs<2>;\n"
      "mov.u64 %rd1, __local_depot0;\nld.u64 %rd2, [%rd1+8];\nst.volatile.u32 [%rd2], %r1;\n"
      "ld.shared.u32 %r2, [smem+12];\nmul.f64 %fd1, %fd2, 0d3FF8000000000000;\n"
      "and.pred %p1, %p2, %p3;\nor.pred %p2, %p1, %p3;\nxor.pred %p3, %p1, %p2;\n"
      "shf.r.wrap.b32 %r3, %r1, %r2, %r4;\nredux.sync.add.s32 %r5, %r3, -1;\n"
      "ex2.approx.ftz.f32 %r6, %r5;\nsqrt.approx.f32 %r7, %r6;\n"
      "cvt.rn.satfinite.e4m3x2.f32 %rs1, %r6, %r7;\nret;\n}\n");
  expect_calls(out, {
        "k.mov(rd[1].as(u64), Symbol{\"__local_depot0\"});",
        "k.ld(Space::generic, u64, rd[2].as(u64), at(rd[1], 8));",
        "k.st(Space::generic, u32, at(rd[2]), r[1].as(u32), {.volatile_ = true});",
        "k.ld(Space::shared, u32, r[2].as(u32), at(Symbol{\"smem\"}, 12));",
        "k.mul(fd[1], fd[2], imm_f64(1.5));", "k.and_(p[1], p[2], p[3]);",
        "k.or_(p[2], p[1], p[3]);", "k.xor_(p[3], p[1], p[2]);",
        "k.shf(ShfDir::r, ShfMode::wrap, r[3], r[1], r[2], r[4]);",
        "k.redux_sync(Redux::add, r[5].as(s32), r[3], -1);",
        "k.ex2_approx(r[6].as(f32), r[5].as(f32), true);", "k.sqrt(r[7].as(f32), r[6].as(f32));",
        "k.cvt_pack(e4m3x2, rs[1], r[6], r[7], {.round = Round::rn, .satfinite = true});"});
  EXPECT_FALSE(has(out, "k.inst(")) << out;
}

// Tensor-core, asynchronous-copy and fence instructions (wrap_async.cpp,
// wrap_control.cpp), and forms the typed calls do not spell, left raw.
TEST(Transpile, TypedWrappersForTensorAndAsyncInstructions) {
  std::string out = transpiled(kernel(
      ".reg .b32 %r<12>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<9>;\n.reg .pred %p<3>;\n"
      "fence.sc.gpu;\nfence.acq_rel.cluster;\nfence.proxy.async.shared::cta;\n"
      "fence.mbarrier_init.release.cluster;\nwgmma.fence.sync.aligned;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
      "{%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 1;\n"
      "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
      "cp.async.cg.shared.global [%r1], [%rd3], 16;\ncp.async.commit_group;\n"
      "cp.async.wait_group 1;\ncp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r3;\n"
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r4, %r5, %r6, %r7}, [%r8];\n"
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f5, %f6, %f7, %f8}, "
      "{%r4, %r5, %r6, %r7}, {%r9, %r10}, {%f5, %f6, %f7, %f8};\n"
      "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire;\n"
      "mbarrier.init.shared::cta.b64 [%r2], 1;\nret;"));
  expect_calls(out, {
        "k.fence(FenceSem::sc, Scope::gpu);", "k.fence(FenceSem::acq_rel, Scope::cluster);",
        "k.fence_proxy_async_shared();", "k.fence_mbarrier_init();", "k.wgmma_fence();",
        "k.wgmma_mma_async(bf16, bf16, slice(f, 1, 4), rd[1], rd[2], p[1], WgmmaMajor::k, "
        "WgmmaMajor::mn);",
        "k.wgmma_commit_group();", "k.wgmma_wait_group(0);",
        "k.cp_async(CpAsyncCache::cg, 16, at(r[1]), at(rd[3]));", "k.cp_async_commit();",
        "k.cp_async_wait(1);", "k.bulk_commit_group();", "k.bulk_wait_group_read(0);",
        "k.mbarrier_try_wait_parity(p[2], at(r[2]), r[3]);",
        "k.ldmatrix(slice(r, 4, 4), at(r[8]), true);",
        "k.mma_sync(MmaShape::m16n8k16, bf16, bf16, f32, slice(f, 5, 4), slice(r, 4, 4), "
        "Regs{r[9], r[10]}, slice(f, 5, 4));",
        "k.barrier_cluster_arrive();", "k.barrier_cluster_wait(false);"});
  // The DSL's mbarrier_init writes .shared.b64, not .shared::cta.b64: raw.
  EXPECT_TRUE(has(out, "k.inst(\"mbarrier.init.shared::cta.b64\", at(r[2]), 1);")) << out;
}

// wmma fragments in nvcc's spellings (wrap_wmma.cpp): a state space or none
// (generic), f16 inputs named by the accumulator types only, bf16 by all four.
TEST(Transpile, TypedWrappersForWmma) {
  std::string out = transpiled(kernel(
      ".reg .b32 %r<20>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<17>;\n"
      "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 "
      "{%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, [%rd1], %r1;\n"
      "wmma.load.b.sync.aligned.row.m32n8k16.bf16 {%r11, %r12}, [%rd2], %r10;\n"
      "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 "
      "{%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16}, "
      "{%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, "
      "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\n"
      "wmma.store.d.sync.aligned.col.m32n8k16.global.f32 [%rd3], "
      "{%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16}, %r10;\nret;"));
  expect_calls(out, {
        "k.wmma_load(WmmaMatrix::a, WmmaShape::m16n16k16, WmmaLayout::row, Space::global, f16, "
        "slice(r, 2, 8), at(rd[1]), r[1]);",
        "k.wmma_load(WmmaMatrix::b, WmmaShape::m32n8k16, WmmaLayout::row, Space::generic, bf16, "
        "Regs{r[11], r[12]}, at(rd[2]), r[10]);",
        "k.wmma_mma(WmmaShape::m16n16k16, WmmaLayout::row, WmmaLayout::col, f16, f32, f32, "
        "slice(f, 9, 8), slice(r, 2, 8), slice(r, 2, 8), slice(f, 1, 8));",
        "k.wmma_store(WmmaShape::m32n8k16, WmmaLayout::col, Space::global, f32, at(rd[3]), "
        "slice(f, 9, 8), r[10]);"});
  EXPECT_FALSE(has(out, "k.inst(")) << out;
}

TEST(Transpile, DirectivesAndParametersKeepTheirForm) {
  std::string out = transpiled(kernel(".reg .b64 %rd<2>;\nld.param.u64 %rd1, [k_param_0];\nret;", ".param .u64 k_param_0"));
  EXPECT_TRUE(has(out, "const ParamRef param_0{\"k_param_0\"};")) << out;
  EXPECT_TRUE(has(out, "k.ld(Space::param, u64, rd[1].as(u64), at(param_0));")) << out;
  EXPECT_TRUE(has(out, "fn.params = {")) << out;
}

TEST(Transpile, WritesWhatTheDslCannotSayAsIr) {
  // An address with an explicit +0, and a body that does not end in ret.
  std::string out = transpiled(kernel(".reg .b64 %rd<2>;\nld.global.u64 %rd1, [%rd1+0];\nexit;"));
  EXPECT_TRUE(has(out, ".explicit_zero_offset = true")) << out;
  EXPECT_TRUE(has(out, "fn.body->body.pop_back();")) << out;
}

// Line information and DWARF sections (-G, -lineinfo, Triton): .loc as
// loc(k, ...), runs of decimal data lines and of label addresses as rows of a
// static table; what no row spells exactly (a label line, hex, a symbol with
// an offset) stays one IR line each, between tables.
TEST(Transpile, LineInformationAndDebugSectionsAreCompact) {
  std::string out = transpiled(
      ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.loc 1 48 7\n"
      "$L__tmp0:\nret;\n}\n.file 1 \"k.py\"\n"
      ".section .debug_info\n{\n.b8 1\n.b8 17\n.b8 0\n.b8 2, 3\n.b8 4, 5\n.b32 7\n.b32 0x1F\n"
      ".b64 $L__tmp0\n.b64 $L__tmp0\n.b32 .debug_abbrev+4\n$L__info0:\n.b8 9\n}\n");
  EXPECT_TRUE(has(out, "loc(k, 1, 48, 7);")) << out;
  EXPECT_TRUE(has(out,
                  "  static constexpr DataRun lines_0[] = {\n"
                  "      {ptx::Type::b8, {1, 17, 0}},\n"
                  "      {ptx::Type::b8, {2, 3, 4, 5}, 2},\n"
                  "      {ptx::Type::b32, {7}},\n"
                  "  };\n"
                  "  add_lines(s, lines_0);\n"))
      << out;
  EXPECT_TRUE(has(out,
                  "{.type = ptx::Type::b64, .symbols = {\"$L__tmp0\", \"$L__tmp0\"}},\n  };\n  "
                  "add_lines(s, lines_1);"))
      << out;
  // The spellings the rows do not write.
  EXPECT_TRUE(has(out, "s.lines.push_back(ptx::Section::Line{.type = ptx::Type::b32, .values = {"))
      << out;
  EXPECT_TRUE(has(out, "0x1F")) << out;
  EXPECT_TRUE(has(out, ".label = \"$L__info0\"")) << out;
  EXPECT_TRUE(has(out, "  add_lines(s, lines_2);\n  return s;")) << out;
}

// A label that no instruction names (the -G builds' $L__tmp<n>, which only
// the debug sections use) is placed where it stands, without a handle.
TEST(Transpile, LabelsNoInstructionNamesHaveNoHandle) {
  std::string out =
      transpiled(kernel(".reg .pred %p<2>;\n$L__tmp0:\n@%p1 bra $L__BB0_1;\n$L__BB0_1:\nret;"));
  EXPECT_TRUE(has(out, "k.place(k.label_named(\"$L__tmp0\"));")) << out;
  EXPECT_FALSE(has(out, "Label L_tmp0")) << out;
  EXPECT_TRUE(has(out, "Label L_BB0_1 = k.label_named(\"$L__BB0_1\");")) << out;
  EXPECT_TRUE(has(out, "k.place(L_BB0_1);")) << out;
}

// A long body is written in parts of at most 100 statements, each a lambda
// called where it stands (GCC compiles that many times faster than one long
// function); handles are declared outside the parts, short bodies stay whole.
TEST(Transpile, LongBodiesAreWrittenInParts) {
  std::string body = ".reg .b32 %r<300>;\n";
  for (int i = 1; i < 250; ++i)
    body += "add.s32 %r" + std::to_string(i) + ", %r" + std::to_string(i + 1) + ", " +
            std::to_string(i * i) + ";\n";
  std::string out = transpiled(kernel(body + "ret;"));
  EXPECT_TRUE(has(
      out,
      "  Regs r = k.declare_regs(b32, \"%r\", 300);\n  [&] {\n    k.add(r[1].as(s32), r[2], 1);\n"))
      << out;
  std::size_t parts = 0;
  for (std::size_t at = out.find("  }();\n"); at != std::string::npos;
       at = out.find("  }();\n", at + 1))
    ++parts;
  EXPECT_EQ(parts, 3u) << out;  // 250 statements: 100, 100, 50
  EXPECT_FALSE(has(transpiled(kernel(".reg .b32 %r<3>;\nadd.s32 %r1, %r2, 1;\nret;")), "[&] {"));
}

TEST(Transpile, RefusesANameThatIsNotAnIdentifier) {
  EXPECT_THROW(transpile(ptx::parse(kernel("ret;")), {.name = "not a name"}), Error);
}

TEST(Transpile, MainPrintsTheModule) {
  std::string out = transpile(ptx::parse(kernel("ret;")), {.name = "m", .with_main = true});
  EXPECT_TRUE(has(out, "int main() { std::cout << build_m().to_ptx(); }")) << out;
}

TEST(FoldedCode, LoopsOverPeriodicGroups) {
  auto stmt = [](const std::string& a, std::int64_t x, const std::string& b) {
    return Code(a) + Code::hole(x) + Code(b);
  };
  std::vector<Code> s;
  for (int g = 0; g < 3; ++g) {
    s.push_back(stmt("ld(r[", 2 * g, "]);"));
    s.push_back(stmt("use(", 7, ");"));
  }
  std::string out;
  write_folded(s, "", out);
  EXPECT_EQ(out, "for (int i = 0; i < 3; ++i) {\n  ld(r[2 * i]);\n  use(7);\n}\n");
}

TEST(FoldedCode, DescendingAndShortRuns) {
  std::vector<Code> s;
  for (int g = 0; g < 3; ++g) s.push_back(Code("x(") + Code::hole(10 - g) + Code(");"));
  s.push_back(Code("y();"));
  s.push_back(Code("y();"));
  std::string out;
  write_folded(s, "  ", out);
  EXPECT_EQ(out, "  for (int i = 0; i < 3; ++i) {\n    x(10 - i);\n  }\n  y();\n  y();\n");
}

}  // namespace
}  // namespace warpforge::transpiler
