// Every refusal of amdgpu::AmdKernel and of target parsing, each message asserted:
// it names the kernel, the operation, the value and what would be accepted.
#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const DslError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DslError";
  return "";
}

TEST(AmdDslRefusals, KernelNameAndWorkgroupSize) {
  EXPECT_CONTAINS(refusal([] { AmdKernel k("2bad", Target::gfx942, 64); }),
                  ("name '2bad' is not an identifier; accepted: letters, digits and '_'"));
  EXPECT_CONTAINS(refusal([] { AmdKernel k("big", Target::gfx942, 2048); }),
                  ("amdgpu kernel 'big', AmdKernel: workgroup size 2048 is outside 1..1024"));
}

TEST(AmdDslRefusals, OperandTypesAndImmediates) {
  AmdKernel k("types", Target::gfx942, 64);
  Val i = k.workitem_id(0);
  Val f = k.sitofp(i);
  Val p = k.param_ptr("p");
  EXPECT_CONTAINS(refusal([&] { k.add(i, f); }),
                  ("amdgpu kernel 'types', add: operands are i32 and f32; they must match"));
  EXPECT_CONTAINS(refusal([&] { k.add(f, f); }), ("add: operands are f32; accepted: i32, i64"));
  EXPECT_CONTAINS(refusal([&] { k.fadd(i, 1.0f); }), ("fadd: operand %0 is i32; accepted: f32"));
  EXPECT_CONTAINS(refusal([&] { k.fmul(f, 2); }),
                  ("integer immediate 2 where f32 is expected (write 1.0f)"));
  EXPECT_CONTAINS(refusal([&] { k.shl(i, 32); }), ("shl: shift amount 32; accepted: 0..31"));
  EXPECT_CONTAINS(refusal([&] { k.shl(k.zext(i), 1); }),
                  ("shl: operands are i64; shifts take i32"));
  EXPECT_CONTAINS(refusal([&] { k.icmp(Cmp::eq, f, f); }),
                  ("icmp: operands are f32 and f32; accepted: two i32"));
  EXPECT_CONTAINS(refusal([&] { k.select(i, i, i); }), ("select: operand %0 is i32; accepted: i1"));
  EXPECT_CONTAINS(refusal([&] { k.select(i < 3, i, f); }),
                  ("select: values are i32 and f32; they must match"));
  EXPECT_CONTAINS(refusal([&] { k.mov(i, f); }), ("mov: operand %1 is f32; accepted: i32"));
  EXPECT_CONTAINS(refusal([&] { k.copy(1.5f, Type::ptr_global); }),
                  ("float immediate 1.500000 where ptr.global is expected"));
  EXPECT_CONTAINS(refusal([&] { k.copy(3, Type::ptr_global); }),
                  ("immediate 3 where a ptr.global register is expected"));
  EXPECT_CONTAINS(
      refusal([&] { k.bitcast(Type::f32, p); }),
      ("bitcast: ptr.global to f32: accepted between non-pointer, non-i1 types of the same size"));
  EXPECT_CONTAINS(refusal([&] { k.bitcast(Type::i64, i); }), ("bitcast: i32 to i64"));
  EXPECT_CONTAINS(refusal([&] { k.extract(i, 0); }),
                  ("extract: element 0 of i32; accepted: a vector"));
  EXPECT_CONTAINS(refusal([&] { k.insert(k.reg(Type::v4f32), 4, 0.0f); }),
                  ("insert: element 4 of v4f32; accepted: a vector and 0..3"));
  EXPECT_CONTAINS(refusal([&] { k.readfirstlane(f); }),
                  "readfirstlane: operand %1 is f32; accepted: i32");
  EXPECT_CONTAINS(refusal([&] { k.workitem_id(1); }),
                  ("workitem_id: dimension 1; accepted: 0 (x)"));
  EXPECT_CONTAINS(refusal([&] { k.workgroup_id(3); }),
                  ("workgroup_id: dimension 3; accepted: 0 (x), 1 (y), 2 (z)"));
}

TEST(AmdDslRefusals, ForeignRegister) {
  AmdKernel a("a", Target::gfx942, 64), b("b", Target::gfx942, 64);
  Val x = a.workitem_id(0);
  EXPECT_CONTAINS(refusal([&] { b.add(x, 1); }),
                  ("amdgpu kernel 'b', add: register %0 does not belong to this kernel"));
}

TEST(AmdDslRefusals, MemoryLdsAndBuffers) {
  AmdKernel k("memory", Target::gfx942, 64);
  Val p = k.param_ptr("p");
  Val i = k.workitem_id(0);
  EXPECT_CONTAINS(refusal([&] { k.load(Type::i32, i); }),
                  ("load: address %1 is i32; accepted: ptr.global, ptr.lds"));
  EXPECT_CONTAINS(refusal([&] { k.store(i, i); }),
                  ("store: address %1 is i32; accepted: ptr.global, ptr.lds"));
  EXPECT_CONTAINS(refusal([&] { k.load(Type::v16f32, p); }),
                  ("load: type v16f32; accepted: i16, i32, f32"));
  EXPECT_CONTAINS(refusal([&] { k.store(p, p); }), ("store: type ptr.global; accepted"));
  EXPECT_CONTAINS(refusal([&] { k.ptr_add(i, 4); }),
                  ("ptr_add: base %1 is i32; accepted: ptr.global, ptr.lds"));
  EXPECT_CONTAINS(refusal([&] { k.lds(65537); }), ("lds: 65537 bytes at offset 0 do not fit"));
  EXPECT_CONTAINS(refusal([&] { k.lds(16, 3); }),
                  ("lds: alignment 3; accepted: a power of two up to 16"));
  k.lds(65536 - 16);
  EXPECT_CONTAINS(refusal([&] { k.lds(32); }), ("lds: 32 bytes at offset 65520 do not fit"));
  Val rsrc = k.make_rsrc(p, 64);
  EXPECT_CONTAINS(refusal([&] { k.make_rsrc(i, 64); }),
                  ("make_rsrc: operand %1 is i32; accepted: ptr.global"));
  EXPECT_CONTAINS(refusal([&] { k.buffer_load(Type::f32, rsrc, 0); }),
                  ("buffer_load: type f32; accepted: i32, v2i32, v4i32 (x1, x2, x4)"));
  EXPECT_CONTAINS(refusal([&] { k.buffer_load(Type::i32, i, 0); }),
                  ("buffer_load: operand %1 is i32; accepted: v4i32"));
  EXPECT_CONTAINS(refusal([&] { k.buffer_store(rsrc, 0, k.sitofp(i)); }),
                  ("buffer_store: value %4 is f32; accepted: i32, v2i32, v4i32"));
}

TEST(AmdDslRefusals, MfmaOperands) {
  AmdKernel k("mfma", Target::gfx942, 64);
  Val a = k.reg(Type::v4i16), acc16 = k.reg(Type::v16f32), acc4 = k.reg(Type::v4f32),
      i = k.reg(Type::v2i32);
  EXPECT_CONTAINS(refusal([&] { k.mfma(Mfma::f32_32x32x8_bf16, acc16, i, a, acc16); }),
                  ("mfma f32_32x32x8_bf16: operand %3 is v2i32; accepted: v4i16"));
  EXPECT_CONTAINS(refusal([&] { k.mfma(Mfma::f32_32x32x8_bf16, acc16, a, a, acc4); }),
                  ("mfma f32_32x32x8_bf16: operand %2 is v4f32; accepted: v16f32"));
  EXPECT_CONTAINS(refusal([&] { k.mfma(Mfma::f32_16x16x16_f16, acc16, a, a, acc4); }),
                  ("mfma f32_16x16x16_f16: destination %1 is v16f32; accepted: v4f32"));
}

TEST(AmdDslRefusals, ControlFlow) {
  AmdKernel k("flow", Target::gfx942, 64);
  Val i = k.workitem_id(0);
  EXPECT_CONTAINS(refusal([&] { k.if_then(i, [] {}); }), ("if: operand %0 is i32; accepted: i1"));
  EXPECT_CONTAINS(refusal([&] { k.for_range(0, 8, 0, [](Val) {}); }),
                  ("for_range: step 0; accepted: a positive step"));
  // A refusal inside a body leaves the builder usable, emitting at the outer level.
  EXPECT_CONTAINS(refusal([&] { k.if_then(i < 4, [&] { k.shl(i, 40); }); }), ("shift amount 40"));
  std::size_t before = k.ir().body.size();
  k.add(i, 1);
  EXPECT_EQ(k.ir().body.size(), before + 1);
}

TEST(AmdTargets, ParseAndRefuse) {
  EXPECT_EQ(require_target("gfx90a"), Target::gfx90a);
  EXPECT_EQ(require_target("gfx942"), Target::gfx942);
  try {
    require_target("gfx1100");
    FAIL() << "no TargetError";
  } catch (const TargetError& e) {
    EXPECT_CONTAINS(e.what(), ("unknown AMDGPU target 'gfx1100'; accepted: gfx90a, gfx942"));
  }
  EXPECT_EQ(mnemonic(Mfma::f32_32x32x8_bf16, Target::gfx90a), "v_mfma_f32_32x32x8bf16_1k");
  EXPECT_EQ(mnemonic(Mfma::f32_16x16x16_f16, Target::gfx942), "v_mfma_f32_16x16x16_f16");
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
