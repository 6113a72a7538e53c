// A warp-specialized Hopper GEMM as PTX, run end to end on the simulator:
// warpgroup 0 produces (setmaxnreg.dec, elect.sync, TMA loads of 128x64 A
// and B tiles into a 2-stage ring of 128B-swizzled buffers with full/empty
// mbarriers), warpgroups 1 and 2 consume (setmaxnreg.inc, four
// m64n128k16 wgmma per stage from descriptors into the same swizzle, then an
// arrive on the stage's empty barrier); D = A * B^T is written from the
// accumulator fragments. K = 256 wraps the ring twice, so both barrier
// parities and the producer's wait on a freed slot are exercised.
#include <chrono>
#include <cmath>

#include "hopper_harness.hpp"

namespace warpforge::sim::testing {
namespace {

std::string accumulators() {
  std::string s;
  for (int i = 0; i < 64; ++i) s += (i ? ", %f" : "%f") + std::to_string(i);
  return s;
}

// Thread (consumer c, warp w, lane l), register i: row 64c + 16w + l/4 +
// 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2 of the 128 x 128 tile.
std::string epilogue_stores() {
  std::string s;
  for (int i = 0; i < 64; ++i) {
    const int offset = ((8 * ((i % 4) / 2)) * 128 + 8 * (i / 4) + i % 2) * 4;
    s += "  st.global.f32 [%rd10+" + std::to_string(offset) + "], %f" + std::to_string(i) + ";\n";
  }
  return s;
}

const char* kGemm = R"(
.visible .entry gemm(.param .align 64 .b8 map_a[128], .param .align 64 .b8 map_b[128], .param .u64 d,
                     .param .u32 kblocks)
{
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .reg .pred %p<10>;
  .reg .f32 %f<64>;
  .shared .align 1024 .b8 smem[65536];
  .shared .align 8 .b64 full[2];
  .shared .align 8 .b64 empty[2];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 7;
  mov.u32 %r3, smem;
  mov.u32 %r4, full;
  mov.u32 %r5, empty;
  ld.param.u32 %r6, [kblocks];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITIALIZED;
  mbarrier.init.shared::cta.b64 [%r4], 1;
  mbarrier.init.shared::cta.b64 [%r4+8], 1;
  mbarrier.init.shared::cta.b64 [%r5], 256;
  mbarrier.init.shared::cta.b64 [%r5+8], 256;
  fence.mbarrier_init.release.cluster;
INITIALIZED:
  bar.sync 0;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra CONSUMER;
  setmaxnreg.dec.sync.aligned.u32 40;
  shr.u32 %r7, %r1, 5;
  setp.ne.u32 %p3, %r7, 0;
  @%p3 bra PRODUCED;
  elect.sync %r8|%p4, -1;
  @!%p4 bra PRODUCED;
  mov.b64 %rd1, map_a;
  cvta.param.u64 %rd1, %rd1;
  mov.b64 %rd2, map_b;
  cvta.param.u64 %rd2, %rd2;
  prefetch.tensormap [%rd1];
  mov.u32 %r9, 0;
PRODUCE:
  setp.ge.u32 %p5, %r9, %r6;
  @%p5 bra PRODUCED;
  and.b32 %r10, %r9, 1;
  shr.u32 %r11, %r9, 1;
  and.b32 %r11, %r11, 1;
  xor.b32 %r12, %r11, 1;
  shl.b32 %r13, %r10, 3;
  add.u32 %r14, %r5, %r13;
  add.u32 %r15, %r4, %r13;
SLOT_FREE:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r14], %r12;
  @!%p6 bra SLOT_FREE;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r15], 32768;
  shl.b32 %r16, %r10, 15;
  add.u32 %r17, %r3, %r16;
  add.u32 %r18, %r17, 16384;
  shl.b32 %r19, %r9, 6;
  mov.u32 %r20, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r17], [%rd1, {%r19, %r20}], [%r15];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r18], [%rd2, {%r19, %r20}], [%r15];
  add.u32 %r9, %r9, 1;
  bra PRODUCE;
PRODUCED:
  ret;
CONSUMER:
  setmaxnreg.inc.sync.aligned.u32 232;
  sub.u32 %r21, %r2, 1;
  shl.b32 %r22, %r21, 13;
  mov.u32 %r9, 0;
CONSUME:
  setp.ge.u32 %p5, %r9, %r6;
  @%p5 bra EPILOGUE;
  and.b32 %r10, %r9, 1;
  shr.u32 %r11, %r9, 1;
  and.b32 %r11, %r11, 1;
  shl.b32 %r13, %r10, 3;
  add.u32 %r14, %r5, %r13;
  add.u32 %r15, %r4, %r13;
DATA_READY:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r15], %r11;
  @!%p6 bra DATA_READY;
  shl.b32 %r16, %r10, 15;
  add.u32 %r17, %r3, %r16;
  add.u32 %r18, %r17, 16384;
  add.u32 %r17, %r17, %r22;
  cvt.u64.u32 %rd3, %r17;
  shr.u64 %rd3, %rd3, 4;
  or.b64 %rd3, %rd3, 0x4000004000010000;
  cvt.u64.u32 %rd4, %r18;
  shr.u64 %rd4, %rd4, 4;
  or.b64 %rd4, %rd4, 0x4000004000010000;
  setp.ne.u32 %p7, %r9, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$ACC}, %rd3, %rd4, %p7, 1, 1, 0, 0;
  add.u64 %rd3, %rd3, 2;
  add.u64 %rd4, %rd4, 2;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$ACC}, %rd3, %rd4, 1, 1, 1, 0, 0;
  add.u64 %rd3, %rd3, 2;
  add.u64 %rd4, %rd4, 2;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$ACC}, %rd3, %rd4, 1, 1, 1, 0, 0;
  add.u64 %rd3, %rd3, 2;
  add.u64 %rd4, %rd4, 2;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$ACC}, %rd3, %rd4, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mbarrier.arrive.shared::cta.b64 _, [%r14];
  add.u32 %r9, %r9, 1;
  bra CONSUME;
EPILOGUE:
  and.b32 %r23, %r1, 127;
  shr.u32 %r24, %r23, 5;
  and.b32 %r25, %r23, 31;
  shr.u32 %r26, %r25, 2;
  and.b32 %r27, %r25, 3;
  shl.b32 %r28, %r21, 6;
  mad.lo.u32 %r28, %r24, 16, %r28;
  add.u32 %r28, %r28, %r26;
  shl.b32 %r29, %r27, 1;
  mad.lo.u32 %r30, %r28, 128, %r29;
  ld.param.u64 %rd9, [d];
  cvta.to.global.u64 %rd9, %rd9;
  mul.wide.u32 %rd11, %r30, 4;
  add.u64 %rd10, %rd9, %rd11;
$STORES
  ret;
}
)";

TEST_F(HopperTest, WarpSpecializedGemmWithTmaPipelineAndWgmma) {
  const std::uint64_t m = 128, n = 128, k = 256;
  const auto a = random_bf16(m * k), b = random_bf16(n * k);  // A (M,K), B as (N,K): both K-major
  const auto map = [&](const std::vector<std::uint16_t>& x, std::uint64_t rows) {
    return tensor_map_arg({.dtype = runtime::DType::bf16,
                           .address = upload(x),
                           .dims = {k, rows},
                           .strides_bytes = {k * 2},
                           .box = {64, 128},
                           .swizzle = runtime::TensorMapSwizzle::b128});
  };
  auto d = upload(std::vector<float>(m * n, std::nanf("")));
  const std::string text = ptx_module(fill(kGemm, {{"ACC", accumulators()}, {"STORES", epilogue_stores()}}));
  const auto start = std::chrono::steady_clock::now();
  run_ptx(text, "gemm", {.grid = {1}, .block = {384}},
          {map(a, m), map(b, n), arg_u64(d), arg_u32(static_cast<std::uint32_t>(k / 64))});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto got = download<float>(d, m * n);
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::uint64_t x = 0; x < k; ++x)
        want += double{bf16_value(a[i * k + x])} * double{bf16_value(b[j * k + x])};
      ASSERT_NEAR(got[i * n + j], want, 1e-4 * (1 + std::abs(want))) << "D[" << i << "][" << j << "]";
    }
  RecordProperty("simulated_seconds", std::to_string(seconds));
}

}  // namespace
}  // namespace warpforge::sim::testing
