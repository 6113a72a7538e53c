// Hopper test kernels as PTX text, shared by the simulator tests (tests/sim)
// and the GPU tests that check the simulator against the hardware
// (tests/gpu/hopper_test.cpp): a TMA load, a TMA multicast into a 2-CTA
// cluster, and a warp-specialized TMA + wgmma GEMM.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace warpforge::sim::testing {

// The text with each "$KEY" replaced by its value.
inline std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values)
    for (std::size_t at; (at = text.find("$" + key)) != std::string::npos;) text.replace(at, key.size() + 1, value);
  return text;
}

inline std::string ptx_module(const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n\n" + body;
}

// One CTA of 128 threads: thread 0 arms an mbarrier and issues a 2-D (or
// $RANK-D) TMA load of $BYTES bytes into `tile`; everyone waits on the
// barrier, then copies the tile's raw bytes to `out`. $MAP makes %rd2 the
// tensor map's address from %rd1, the parameter's .param address.
inline const char* kLoadKernel = R"(
.visible .entry tma_load(.param .align 64 .b8 tmap[128], .param .u64 out, .param .s32 c0, .param .s32 c1,
                         .param .s32 c2)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 tile[$BYTES];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], $BYTES;
  mov.u64 %rd1, tmap;
  $MAP
  ld.param.s32 %r4, [c0];
  ld.param.s32 %r5, [c1];
  ld.param.s32 %r6, [c2];
  prefetch.tensormap [%rd2];
  cp.async.bulk.tensor.$RANKd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {$COORDS}], [%r2];
WAIT:
  bar.sync 0;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra LOOP;
  ld.param.u64 %rd3, [out];
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r7, %r1;
COPY:
  setp.ge.u32 %p3, %r7, $WORDS;
  @%p3 bra DONE;
  shl.b32 %r8, %r7, 2;
  add.u32 %r9, %r3, %r8;
  ld.shared.u32 %r10, [%r9];
  mul.wide.u32 %rd4, %r7, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r10;
  add.u32 %r7, %r7, 128;
  bra COPY;
DONE:
  ret;
}
)";

inline std::string load_kernel(std::uint32_t bytes, int rank, const std::string& map = "cvta.param.u64 %rd2, %rd1;") {
  const char* coords[] = {"%r4", "%r4, %r5", "%r4, %r5, %r6"};
  return ptx_module(fill(kLoadKernel, {{"BYTES", std::to_string(bytes)},
                                       {"WORDS", std::to_string(bytes / 4)},
                                       {"RANK", std::to_string(rank)},
                                       {"COORDS", coords[rank - 1]},
                                       {"MAP", map}}));
}

// A 2-CTA cluster of 32 threads each: every CTA arms its barrier for
// $SIZE bytes and fills `src` with 1000 x rank + word index; after the
// cluster barrier, thread 0 of each CTA has the copy engine send `src` into
// the partner's `dst`, completing on the partner's barrier ($BAR: %r9, or
// %r2 for this CTA's barrier instead; $SRC: %r3, this CTA's `src`, or %r8,
// the partner's `dst`); each CTA waits on its own
// barrier and writes `dst` to out[rank * 64 ..].
inline const char* kBulkToPeerKernel = R"(
.visible .entry bulk_to_peer(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b8 src[256];
  .shared .align 16 .b8 dst[256];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r11, %cluster_ctarank;
  mov.u32 %r3, src;
  mov.u32 %r4, dst;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra ARMED;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], $SIZE;
ARMED:
  mul.lo.u32 %r5, %r11, 1000;
  add.u32 %r5, %r5, %r1;
  shl.b32 %r6, %r1, 2;
  add.u32 %r7, %r3, %r6;
  st.shared.u32 [%r7], %r5;
  add.u32 %r5, %r5, 32;
  st.shared.u32 [%r7+128], %r5;
  fence.proxy.async.shared::cta;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  @%p1 bra WAIT;
  xor.b32 %r12, %r11, 1;
  mapa.shared::cluster.u32 %r8, %r4, %r12;
  mapa.shared::cluster.u32 %r9, %r2, %r12;
  mov.u32 %r10, $BAR;
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r8], [$SRC], $SIZE, [%r10];
WAIT:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd3, [out];
  cvta.to.global.u64 %rd3, %rd3;
  add.u32 %r7, %r4, %r6;
  ld.shared.u32 %r13, [%r7];
  ld.shared.u32 %r14, [%r7+128];
  shl.b32 %r15, %r11, 6;
  add.u32 %r15, %r15, %r1;
  mul.wide.u32 %rd4, %r15, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r13;
  st.global.u32 [%rd5+128], %r14;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  ret;
}
)";

inline std::string bulk_to_peer_kernel(const std::string& size = "256", const std::string& bar = "%r9",
                                       const std::string& src = "%r3") {
  return ptx_module(fill(kBulkToPeerKernel, {{"SIZE", size}, {"BAR", bar}, {"SRC", src}}));
}

// Every CTA of a 2-CTA cluster arms its own barrier; after a cluster barrier
// (so both are initialized), rank 0 multicasts one box into both CTAs.
inline const char* kMulticastKernel = R"(
.visible .entry multicast(.param .align 64 .b8 tmap[128], .param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b16 %rs<2>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 tile[2048];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  mov.u32 %r11, %cluster_ctarank;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra ARMED;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 2048;
ARMED:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  setp.ne.or.u32 %p1, %r11, 0, %p1;
  @%p1 bra WAIT;
  mov.u64 %rd1, tmap;
  cvta.param.u64 %rd2, %rd1;
  mov.u32 %r4, 0;
  mov.u16 %rs1, 3;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd2, {%r4, %r4}], [%r2], %rs1;
WAIT:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd3, [out];
  cvta.to.global.u64 %rd3, %rd3;
  mul.lo.u32 %r12, %r11, 512;
  mov.u32 %r7, %r1;
COPY:
  setp.ge.u32 %p3, %r7, 512;
  @%p3 bra DONE;
  shl.b32 %r8, %r7, 2;
  add.u32 %r9, %r3, %r8;
  ld.shared.u32 %r10, [%r9];
  add.u32 %r13, %r7, %r12;
  mul.wide.u32 %rd4, %r13, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r10;
  add.u32 %r7, %r7, 128;
  bra COPY;
DONE:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";

inline std::string accumulators() {
  std::string s;
  for (int i = 0; i < 64; ++i) s += (i ? ", %f" : "%f") + std::to_string(i);
  return s;
}

// Thread (consumer c, warp w, lane l), register i: row 64c + 16w + l/4 +
// 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2 of the 128 x 128 tile.
inline std::string epilogue_stores() {
  std::string s;
  for (int i = 0; i < 64; ++i) {
    const int offset = ((8 * ((i % 4) / 2)) * 128 + 8 * (i / 4) + i % 2) * 4;
    s += "  st.global.f32 [%rd10+" + std::to_string(offset) + "], %f" + std::to_string(i) + ";\n";
  }
  return s;
}

// The GEMM's kernel: $ACC and $STORES filled in; 64 KB (+ 1 KB for the
// alignment) of dynamic shared memory; 384 threads.
inline const char* kGemm = R"(
.extern .shared .align 1024 .b8 smem[];

.visible .entry gemm(.param .align 64 .b8 map_a[128], .param .align 64 .b8 map_b[128], .param .u64 d,
                     .param .u32 kblocks)
.maxntid 384, 1, 1
.minnctapersm 1
{
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .reg .pred %p<10>;
  .reg .f32 %f<64>;
  .shared .align 8 .b64 full[2];
  .shared .align 8 .b64 empty[2];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 7;
  mov.u32 %r3, smem;
  add.u32 %r3, %r3, 1023;
  and.b32 %r3, %r3, -1024;
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

inline std::string ws_gemm_kernel() {
  return ptx_module(fill(kGemm, {{"ACC", accumulators()}, {"STORES", epilogue_stores()}}));
}
constexpr std::uint32_t kWsGemmSharedBytes = 65536 + 1024;

// Thread 0 zeroes 128 bytes of shared memory and writes a 2-D f32 map's
// fields into them ($ELEMTYPE the element type); warp 0 copies the map to
// `maps` in global memory (cp_fenceproxy is .sync.aligned); thread 0
// TMA-loads an 8x4 box at (c0, c1) through it; the tile goes to `out`.
inline const char* kBuiltMapKernel = R"(
.visible .entry built_map(.param .u64 src, .param .u64 maps, .param .u64 out, .param .s32 c0, .param .s32 c1)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 128 .b8 map[128];
  .shared .align 1024 .b8 tile[128];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  mov.u32 %r11, map;
  cvt.u64.u32 %rd1, %r11;
  ld.param.u64 %rd6, [maps];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra BUILT;
  mov.u32 %r12, 0;
ZERO:
  add.u32 %r13, %r11, %r12;
  st.shared.u32 [%r13], 0;
  add.u32 %r12, %r12, 4;
  setp.lt.u32 %p3, %r12, 128;
  @%p3 bra ZERO;
  ld.param.u64 %rd2, [src];
  tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd1], %rd2;
  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd1], 1;
  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], 0, 8;
  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], 1, 4;
  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd1], 0, 24;
  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd1], 1, 10;
  tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%rd1], 0, 96;
  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd1], 0, 1;
  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd1], 1, 1;
  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd1], $ELEMTYPE;
  tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%rd1], 0;
  mbarrier.init.shared::cta.b64 [%r2], 1;
BUILT:
  bar.sync 0;
  setp.ge.u32 %p3, %r1, 32;
  @%p3 bra WAIT;
  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd6], [%rd1], 128;
  fence.proxy.tensormap::generic.acquire.gpu [%rd6], 128;
  @%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 128;
  ld.param.s32 %r4, [c0];
  ld.param.s32 %r5, [c1];
  cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd6, {%r4, %r5}], [%r2];
WAIT:
  bar.sync 0;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra LOOP;
  ld.param.u64 %rd3, [out];
  setp.ge.u32 %p3, %r1, 32;
  @%p3 bra DONE;
  shl.b32 %r8, %r1, 2;
  add.u32 %r9, %r3, %r8;
  ld.shared.u32 %r10, [%r9];
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r10;
DONE:
  ret;
}
)";

// PTX ISA 8.6: tensormap.replace needs 8.3, the .shared::cta destination of
// cp.async.bulk.tensor 8.6.
inline std::string built_map_kernel(const std::string& elemtype = "7") {
  return ".version 8.6\n.target sm_90a\n.address_size 64\n\n" + fill(kBuiltMapKernel, {{"ELEMTYPE", elemtype}});
}

}  // namespace warpforge::sim::testing
