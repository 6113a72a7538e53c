// What the builder emits: register names and their declarations, guards,
// the shapes of the structured control flow, the operators' spellings and
// the generic inst().
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "dsl/dsl_test_support.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::dsl {
namespace {

using Lines = std::vector<std::string>;

// The lines of the kernel's body, without indentation, split into the
// declarations (.reg / .shared) and the statements after them.
struct Body {
  Lines declarations;
  Lines statements;
};

Body body_of(const Kernel& k) {
  std::istringstream in(k.ptx());
  std::string line;
  while (std::getline(in, line) && line != "{") {
  }
  Body b;
  while (std::getline(in, line) && line != "}") {
    line.erase(0, line.find_first_not_of('\t'));
    bool declaration = line.rfind(".reg ", 0) == 0 || line.rfind(".shared ", 0) == 0;
    (declaration && b.statements.empty() ? b.declarations : b.statements).push_back(line);
  }
  return b;
}

// The statements after the first `skip` ones (parameter loads and the like).
Lines statements_from(const Kernel& k, std::size_t skip) {
  Lines all = body_of(k).statements;
  return Lines(all.begin() + static_cast<long>(std::min(skip, all.size())), all.end());
}

TEST(Registers, AutomaticNamesFollowTheStorageTypeAndDeclareAsRanges) {
  Kernel k("names", Target::sm_80);
  Reg a = k.reg(f32), b = k.reg(u32), c = k.reg(u64), d = k.reg(f16), e = k.reg(f64),
      f = k.reg(s32);
  Reg g = k.reg(bf16x2), h = k.reg(u8), i = k.reg(b128);
  Pred p = k.pred();
  EXPECT_EQ(a.name(), "%f0");
  EXPECT_EQ(b.name(), "%r0");
  EXPECT_EQ(c.name(), "%rd0");
  EXPECT_EQ(d.name(), "%rs0");
  EXPECT_EQ(e.name(), "%fd0");
  EXPECT_EQ(f.name(), "%r1");   // s32 shares the .b32 range
  EXPECT_EQ(g.name(), "%r2");   // bf16x2 lives in a .b32 register
  EXPECT_EQ(h.name(), "%rs1");  // 8-bit values live in .b16 registers
  EXPECT_EQ(i.name(), "%rq0");
  EXPECT_EQ(p.name(), "%p0");
  EXPECT_EQ(f.type(), s32);  // the handle keeps its type; only the declaration is by storage
  // Declarations are grouped by storage type in a fixed order, whatever the creation order.
  EXPECT_EQ(
      body_of(k).declarations,
      (Lines{".reg .pred %p<1>;", ".reg .b16 %rs<2>;", ".reg .b32 %r<3>;", ".reg .b64 %rd<1>;",
             ".reg .f32 %f<1>;", ".reg .f64 %fd<1>;", ".reg .b128 %rq<1>;"}));
}

TEST(Registers, NamedRegistersAndArraysDeclareAfterTheRangesInCreationOrder) {
  Kernel k("named", Target::sm_80);
  Regs acc = k.regs(f32, 4, "acc");
  Reg tmp = k.reg(u32);
  Reg flag_count = k.reg(u16, "count");
  Pred done = k.pred("done");
  Regs unnamed = k.regs(b32, 2);
  EXPECT_EQ(acc[3].name(), "%acc3");
  EXPECT_EQ(flag_count.name(), "%count");
  EXPECT_EQ(done.name(), "%done");
  EXPECT_EQ(tmp.name(), "%r0");
  EXPECT_EQ(unnamed[1].name(), "%r2");
  EXPECT_EQ(body_of(k).declarations, (Lines{".reg .b32 %r<3>;", ".reg .f32 %acc<4>;",
                                            ".reg .b16 %count;", ".reg .pred %done;"}));
}

TEST(Registers, AScalarNamedLikeAPrefixDoesNotCollideWithTheRange) {
  Kernel k("prefix", Target::sm_80);
  Reg auto_reg = k.reg(b32), named = k.reg(b32, "r");
  EXPECT_EQ(auto_reg.name(), "%r0");
  EXPECT_EQ(named.name(), "%r");
  EXPECT_EQ(body_of(k).declarations, (Lines{".reg .b32 %r<1>;", ".reg .b32 %r;"}));
}

TEST(Registers, ViewsEmitNothingAndKeepTheRegister) {
  Kernel k("views", Target::sm_80);
  Reg f = k.reg(f32);
  Reg bits = f.as(b32);
  EXPECT_EQ(bits.name(), f.name());
  EXPECT_EQ(bits.type(), b32);
  EXPECT_EQ(body_of(k).statements, Lines{"ret;"});
  k.mov(k.reg(b32), bits);
  EXPECT_EQ(body_of(k).statements, (Lines{"mov.b32 %r0, %f0;", "ret;"}));
}

TEST(Params, DeclarationsAndLoadSequences) {
  Kernel k("params", Target::sm_90a);
  Reg n = k.param(u32, "n");
  Reg p = k.param_ptr("p", 16);
  ParamRef desc = k.param_bytes("desc", 128, 64);
  EXPECT_EQ(desc.bytes, 128);
  EXPECT_EQ(n.type(), u32);
  EXPECT_EQ(p.type(), u64);
  std::string text = k.ptx();
  EXPECT_NE(text.find("\t.param .u32 n,\n\t.param .u64 .ptr .global .align 16 p,\n\t.param .align "
                      "64 .b8 desc[128]\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(body_of(k).statements, (Lines{"ld.param.u32 %r0, [n];", "ld.param.u64 %rd0, [p];",
                                          "cvta.to.global.u64 %rd1, %rd0;", "ret;"}));
}

TEST(SpecialRegisters, ByEnumAndByNameReadTheSameRegisterWithItsType) {
  Kernel k("sregs", Target::sm_90a);
  Reg a = k.sreg(SReg::clock64), b = k.sreg("%clock64"), c = k.sreg("cluster_ctarank");
  EXPECT_EQ(a.type(), u64);
  EXPECT_EQ(b.type(), u64);
  EXPECT_EQ(c.type(), u32);
  EXPECT_EQ(body_of(k).statements, (Lines{"mov.u64 %rd0, %clock64;", "mov.u64 %rd1, %clock64;",
                                          "mov.u32 %r0, %cluster_ctarank;", "ret;"}));
  for (const SRegInfo& info : ptx::all_sregs())
    EXPECT_EQ(ptx::parse_sreg(info.name), info.reg) << info.name;
  EXPECT_EQ(ptx::parse_sreg("%tid.w"), std::nullopt);
}

// %is_explicit_cluster is a .pred (PTX ISA 10.20): no Reg holds it.
TEST(SpecialRegisters, APredicateRegisterIsReadIntoAPredThroughInst) {
  Kernel k("explicit_cluster", Target::sm_90a);
  try {
    k.sreg(SReg::is_explicit_cluster);
    FAIL() << "a Reg of %is_explicit_cluster was made";
  } catch (const DslError& e) {
    EXPECT_NE(std::string(e.what()).find("is a predicate"), std::string::npos) << e.what();
  }
  k.inst("mov.pred", k.pred(), SReg::is_explicit_cluster);
  EXPECT_EQ(body_of(k).statements, (Lines{"mov.pred %p0, %is_explicit_cluster;", "ret;"}));
}

TEST(Operators, SpellingsFollowTheRegisterType) {
  Kernel k("ops", Target::sm_80);
  Reg u = k.reg(u32), s = k.reg(s32), b = k.reg(b64);
  (void)(u >> 1);
  (void)(s >> 1);
  (void)(b >> 1);
  (void)(b + 1);
  (void)(s * 3);
  (void)(u & 0xf);
  (void)(s << 2);
  (void)(b < 4);
  (void)(s == 0);
  (void)~u;
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"shr.u32 %r2, %r0, 1;", "shr.s32 %r3, %r1, 1;", "shr.u64 %rd1, %rd0, 1;",
                   "add.u64 %rd2, %rd0, 1;", "mul.lo.s32 %r4, %r1, 3;", "and.b32 %r5, %r0, 15;",
                   "shl.b32 %r6, %r1, 2;", "setp.lt.u64 %p0, %rd0, 4;", "setp.eq.s32 %p1, %r1, 0;",
                   "not.b32 %r7, %r0;", "ret;"}));
}

TEST(Operators, ValueReturningFormsTakeTheSourcesType) {
  Kernel k("values", Target::sm_80);
  Reg f = k.reg(f32), g = k.reg(f32), s = k.reg(s32);
  Pred p = k.pred();
  Reg q = k.div(f, g);
  Reg lo = k.min(s, 7);
  Reg hi = k.max(3, s);
  Reg pick = k.selp(f, imm_f32(1.0f), p);
  EXPECT_EQ(q.type(), f32);
  EXPECT_EQ(lo.type(), s32);
  EXPECT_EQ(pick.type(), f32);
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"div.rn.f32 %f2, %f0, %f1;", "min.s32 %r1, %r0, 7;", "max.s32 %r2, 3, %r0;",
                   "selp.f32 %f3, %f0, 0f3F800000, %p0;", "ret;"}));
  (void)hi;
}

TEST(Operators, CompoundAssignmentUpdatesInPlace) {
  Kernel k("update", Target::sm_80);
  Reg x = k.reg(s32);
  x += 1;
  x >>= 2;
  x *= x;
  EXPECT_EQ(statements_from(k, 0), (Lines{"add.s32 %r0, %r0, 1;", "shr.s32 %r0, %r0, 2;",
                                          "mul.lo.s32 %r0, %r0, %r0;", "ret;"}));
}

TEST(Operators, PredicateLogicNegatesFirst) {
  Kernel k("logic", Target::sm_80);
  Pred p = k.pred(), q = k.pred();
  Pred both = p && !q;
  Pred either = !p || q;
  EXPECT_EQ(both.name(), "%p3");
  EXPECT_EQ(either.name(), "%p5");
  EXPECT_EQ(statements_from(k, 0), (Lines{"not.pred %p2, %p1;", "and.pred %p3, %p0, %p2;",
                                          "not.pred %p4, %p0;", "or.pred %p5, %p4, %p1;", "ret;"}));
}

TEST(Guards, GuardedBlockGuardsEachInstructionAndEndsWithTheBlock) {
  Kernel k("guards", Target::sm_80);
  Reg x = k.reg(u32);
  Pred p = k.pred();
  k.guarded(p, [&] {
    k.add(x, x, 1);
    k.bar_sync();
  });
  k.guarded(!p, [&] { k.ret(); });
  k.mov(x, 0);
  EXPECT_EQ(statements_from(k, 0), (Lines{"@%p0 add.u32 %r0, %r0, 1;", "@%p0 bar.sync 0;",
                                          "@!%p0 ret;", "mov.u32 %r0, 0;", "ret;"}));
}

TEST(Barriers, BarrierSyncIsTheUnalignedForm) {
  Kernel k("barriers", Target::sm_80);
  k.bar_sync(1, 64);
  k.barrier_sync(4, 384);
  k.barrier_sync(0);
  EXPECT_EQ(statements_from(k, 0), (Lines{"bar.sync 1, 64;", "barrier.sync 4, 384;", "barrier.sync 0;", "ret;"}));
}

// The cluster's barrier with and without .aligned, a store through a
// shared::cluster address and the proxy fence for it (sm_90).
TEST(Barriers, ClusterBarrierAndStoresIntoAnotherCta) {
  Kernel k("cluster", Target::sm_90a);
  Reg remote = k.reg(u32);
  k.st(Space::shared, b32, at(remote, 16), Regs{remote, remote}, {.cluster = true});
  k.fence_proxy_async_shared_cluster();
  k.barrier_cluster_arrive(false);
  k.barrier_cluster_wait(false);
  k.barrier_cluster_arrive();
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"st.shared::cluster.v2.b32 [%r0+16], {%r0, %r0};", "fence.proxy.async.shared::cluster;",
                   "barrier.cluster.arrive.release;", "barrier.cluster.wait.acquire;",
                   "barrier.cluster.arrive.release.aligned;", "ret;"}));
}

TEST(Guards, AGuardedBlockThatThrowsLeavesNoGuardBehind) {
  Kernel k("guards", Target::sm_80);
  Reg x = k.reg(u32);
  Pred p = k.pred();
  EXPECT_THROW(k.guarded(p, [&] { k.bar_sync(99); }), DslError);
  k.mov(x, 1);
  EXPECT_EQ(statements_from(k, 0), (Lines{"mov.u32 %r0, 1;", "ret;"}));
}

TEST(Control, FinalRetIsAddedOnlyWhenMissing) {
  Kernel ends("ends", Target::sm_80);
  ends.ret();
  EXPECT_EQ(body_of(ends).statements, Lines{"ret;"});
  Kernel guarded_end("guarded_end", Target::sm_80);
  Pred p = guarded_end.pred();
  guarded_end.guarded(p, [&] { guarded_end.ret(); });
  EXPECT_EQ(body_of(guarded_end).statements, (Lines{"@%p0 ret;", "ret;"}));
  Kernel exits("exits", Target::sm_80);
  exits.exit();
  EXPECT_EQ(body_of(exits).statements, (Lines{"exit;", "ret;"}));
}

TEST(Control, IfThenShape) {
  Kernel k("shape", Target::sm_80);
  Reg x = k.reg(u32);
  Pred p = k.pred();
  k.if_then(p, [&] { x += 1; });
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"@!%p0 bra $endif_0;", "add.u32 %r0, %r0, 1;", "$endif_0:", "ret;"}));
}

TEST(Control, IfElseShapeWithANegatedCondition) {
  Kernel k("shape", Target::sm_80);
  Reg x = k.reg(u32);
  Pred p = k.pred();
  k.if_else(
      !p, [&] { x += 1; }, [&] { x -= 1; });
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"@%p0 bra $else_0;", "add.u32 %r0, %r0, 1;", "bra $endif_1;",
                   "$else_0:", "sub.u32 %r0, %r0, 1;", "$endif_1:", "ret;"}));
}

TEST(Control, ForRangeShape) {
  Kernel k("shape", Target::sm_80);
  Reg n = k.param(u32, "n");
  Reg acc = k.mov(u32, 0);
  k.for_range(0, n, 4, [&](Reg i) { acc += i; });
  EXPECT_EQ(n.name(), "%r0");
  EXPECT_EQ(statements_from(k, 2),
            (Lines{"mov.u32 %r2, 0;", "setp.ge.u32 %p0, %r2, %r0;", "@%p0 bra $loop_end_1;",
                   "$loop_0:", "add.u32 %r1, %r1, %r2;", "add.u32 %r2, %r2, 4;",
                   "setp.lt.u32 %p1, %r2, %r0;", "@%p1 bra $loop_0;", "$loop_end_1:", "ret;"}));
}

// A range known not to be empty loses the test before the first trip.
TEST(Control, ForNonemptyRangeShape) {
  Kernel k("shape", Target::sm_80);
  Reg n = k.param(u32, "n");
  Reg acc = k.mov(u32, 0);
  k.for_nonempty_range(1, n, 2, [&](Reg i) { acc += i; });
  EXPECT_EQ(statements_from(k, 2),
            (Lines{"mov.u32 %r2, 1;", "$loop_0:", "add.u32 %r1, %r1, %r2;", "add.u32 %r2, %r2, 2;",
                   "setp.lt.u32 %p0, %r2, %r0;", "@%p0 bra $loop_0;", "$loop_end_1:", "ret;"}));
}

TEST(Control, ForRangeCounterTakesTheBoundsType) {
  Kernel k("shape", Target::sm_80);
  Reg first = k.reg(s64);
  Reg seen;
  k.for_range(first, 10, 1, [&](Reg i) { seen = i; });
  EXPECT_EQ(seen.type(), s64);
  Kernel imm("imm", Target::sm_80);
  imm.for_range(0, 8, 2, [&](Reg i) { seen = i; });
  EXPECT_EQ(seen.type(), u32);
  EXPECT_EQ(statements_from(imm, 1)[0], "setp.ge.u32 %p0, %r0, 8;");
}

TEST(Control, WhileLoopShape) {
  Kernel k("shape", Target::sm_80);
  Reg x = k.reg(u32);
  k.while_loop([&] { return x < 10; }, [&] { x += 3; });
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"$while_0:", "setp.lt.u32 %p0, %r0, 10;", "@!%p0 bra $while_end_1;",
                   "add.u32 %r0, %r0, 3;", "bra $while_0;", "$while_end_1:", "ret;"}));
}

TEST(Control, BranchesAndLabels) {
  Kernel k("branches", Target::sm_80);
  Pred p = k.pred();
  Label a = k.label("a"), b = k.label();
  EXPECT_EQ(a.name(), "$a_0");
  EXPECT_EQ(b.name(), "$L_1");  // one counter for every hint: names never collide
  k.bra(a, {.uniform = true});
  k.place(a);
  k.bra_if(!p, b);
  k.bra_if(p, b, {.uniform = true});
  k.place(b);
  EXPECT_EQ(statements_from(k, 0), (Lines{"bra.uni $a_0;", "$a_0:", "@!%p0 bra $L_1;",
                                          "@%p0 bra.uni $L_1;", "$L_1:", "ret;"}));
}

TEST(Inst, KnownAndUnknownOpcodes) {
  Kernel k("generic", Target::sm_80);
  Reg d = k.reg(b32), a = k.reg(b32);
  Pred p = k.pred();
  k.inst("prmt.b32", d, a, a, 0x3210);
  k.inst("pmevent", 1);  // no typed wrapper: still read through the vocabulary
  k.inst("setp.ne.b32", p, a, 0);
  k.inst("ld.global.v2.b32", Regs{d, a}, at(k.reg(u64), 8));
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"prmt.b32 %r0, %r1, %r1, 12816;", "pmevent 1;", "setp.ne.b32 %p0, %r1, 0;",
                   "ld.global.v2.b32 {%r0, %r1}, [%rd0+8];", "ret;"}));
  const ptx::OpcodeInfo* setp = ptx::find_opcode("setp");
  ASSERT_NE(setp, nullptr);
  EXPECT_EQ(setp->arity.min, 3);
  EXPECT_EQ(setp->arity.max, 4);
  EXPECT_EQ(ptx::find_opcode("frobnicate"), nullptr);
  // A word the vocabulary lacks is refused at the call, naming it.
  for (const char* bad : {"frobnicate.b32", "add.q32", "ld.global."}) {
    try {
      k.inst(bad, d, a, a);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const DslError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a"), std::string::npos) << e.what();
    }
  }
}

// The vocabulary's targets hold for the escape hatch too: elect is sm_90's.
TEST(Inst, RefusesAnOpcodeTheTargetLacksNamingTheTargetsThatHaveIt) {
  Kernel k("generic", Target::sm_80);
  try {
    k.inst("elect.sync", ptx::Operand::pair(ptx::Operand::reg("%r0"), ptx::Operand::reg("%p0")),
           0xFFFFFFFFu);
    FAIL() << "elect.sync on sm_80 was accepted";
  } catch (const DslError& e) {
    EXPECT_NE(std::string(e.what()).find("elect.sync"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sm_90a"), std::string::npos) << e.what();
  }
}

// PTX ISA 9.7.15.5.2: the operand list of each wgmma.mma_async form. The
// 16-bit forms end with imm-trans-a and imm-trans-b (A from shared memory)
// or imm-trans-b alone (A from registers); the 8-bit forms have neither.
TEST(Wgmma, EachFormSpellsTheOperandListThePtxIsaGivesIt) {
  Kernel k("wgmma_forms", Target::sm_90a);
  Regs d = k.regs(f32, 8, "d"), a = k.regs(b32, 4, "a");
  Reg da = k.reg(b64, "da"), db = k.reg(b64, "db");
  Pred p = k.pred("p");
  k.wgmma_mma_async(e4m3, e5m2, d, da, db, false, WgmmaMajor::k, WgmmaMajor::k);
  k.wgmma_mma_async(e5m2, d, da, db, p, WgmmaMajor::k, WgmmaMajor::k);
  k.wgmma_mma_async(bf16, bf16, d, a, db, true, WgmmaMajor::mn);
  k.wgmma_mma_async(e5m2, e4m3, d, a, db, !p, WgmmaMajor::k);
  k.wgmma_mma_async(f16, d, da, db, true, WgmmaMajor::mn, WgmmaMajor::k);
  const std::string acc = "{%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}", regs = "{%a0, %a1, %a2, %a3}";
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e5m2 " + acc + ", %da, %db, 0, 1, 1;",
                   "wgmma.mma_async.sync.aligned.m64n16k32.f32.e5m2.e5m2 " + acc + ", %da, %db, %p, 1, 1;",
                   "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 " + acc + ", " + regs + ", %db, 1, 1, 1, 1;",
                   "wgmma.mma_async.sync.aligned.m64n16k32.f32.e5m2.e4m3 " + acc + ", " + regs + ", %db, !%p, 1, 1;",
                   "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " + acc + ", %da, %db, 1, 1, 1, 1, 0;",
                   "ret;"}));
}

TEST(Memory, SharedVariablesAndTheDynamicArray) {
  Kernel k("smem", Target::sm_80);
  Shared tile = k.shared("tile", 256, 128);
  Shared dyn = k.dynamic_shared();
  EXPECT_EQ(dyn.bytes, 0);
  EXPECT_EQ(dyn.name, "dynamic_smem");
  Reg base = k.address_of(tile);
  k.st(Space::shared, b32, at(dyn, 12), base);
  std::string text = k.ptx();
  EXPECT_NE(text.find(".extern .shared .align 16 .b8 dynamic_smem[];"), std::string::npos) << text;
  EXPECT_EQ(body_of(k).declarations,
            (Lines{".reg .b32 %r<1>;", ".shared .align 128 .b8 tile[256];"}));
  EXPECT_EQ(statements_from(k, 0),
            (Lines{"mov.u32 %r0, tile;", "st.shared.b32 [dynamic_smem+12], %r0;", "ret;"}));
}

TEST(Memory, LoadAndStoreSpellings) {
  Kernel k("mem", Target::sm_80);
  Reg p = k.reg(u64), h = k.reg(u16);
  Regs v = k.regs(f32, 4);
  k.ld(Space::global, f32, v, at(p, 16), {.cache = Cache::cs});
  k.ld(Space::global, u8, h, at(p), {.cache = Cache::cg, .nc = true});
  k.st(Space::global, f32, at(p, -16), Regs{v[0], v[1]}, {.cache = Cache::wt});
  k.st(Space::shared, b32, at(p), 7, {.volatile_ = true});
  k.ld(Space::global, f16, k.reg(f16), at(p));
  // Space::generic: no state-space word.
  k.ld(Space::generic, u8, h, at(p, 3), {.volatile_ = true});
  k.st(Space::generic, f32, at(p, 8), v[2], {.cache = Cache::wb});
  EXPECT_EQ(
      statements_from(k, 0),
      (Lines{"ld.global.cs.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0+16];",
             "ld.global.nc.cg.u8 %rs0, [%rd0];", "st.global.wt.v2.f32 [%rd0+-16], {%f0, %f1};",
             "st.volatile.shared.b32 [%rd0], 7;", "ld.global.b16 %rs1, [%rd0];",
             "ld.volatile.u8 %rs0, [%rd0+3];", "st.wb.f32 [%rd0+8], %f2;", "ret;"}));
}

TEST(Directives, PerformanceDirectivesAreWrittenInOrder) {
  Kernel k("tuned", Target::sm_90a);
  k.maxntid(128, 2);
  k.minnctapersm(4);
  k.maxnreg(96);
  k.explicitcluster();
  k.reqnctapercluster(2, 2);
  std::string text = k.ptx();
  EXPECT_NE(text.find(")\n.maxntid 128, 2, 1\n.minnctapersm 4\n.maxnreg "
                      "96\n.explicitcluster\n.reqnctapercluster 2, 2, 1\n{"),
            std::string::npos)
      << text;
}

TEST(Module, HeaderFollowsTheTarget) {
  for (Target t : ptx::all_targets()) {
    Kernel k("header", t);
    ptx::Module m = k.module();
    auto v = ptx::ptx_version(t);
    EXPECT_EQ(m.version_major, v.major);
    EXPECT_EQ(m.version_minor, v.minor);
    EXPECT_EQ(m.target, std::vector<std::string>{std::string(ptx::name(t))});
    EXPECT_EQ(m.address_size, 64);
    ASSERT_EQ(m.entries().size(), 1u);
    EXPECT_EQ(m.entries()[0]->name, "header");
  }
}

}  // namespace
}  // namespace warpforge::dsl
