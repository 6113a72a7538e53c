// wgmma test kernels and their shared-memory images, shared by the
// simulator tests (tests/sim/wgmma_test.cpp) and the GPU test that checks
// the simulator's layouts against the hardware (tests/gpu/hopper_test.cpp).
// The images are built from the ISA's description of the layouts
// (9.7.15.5.1.2): core matrices of 8 rows x 16 bytes without swizzle; rows
// of the swizzle span, 8 to an atom, with each 16-byte chunk index XORed by
// the row within the atom, for the swizzled modes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper_kernels.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::sim::testing {

// Where one operand lives: K-major (rows of M or N, K contiguous) or MN-major,
// the swizzle span (0, 32, 64, 128), LBO and SBO as the descriptor carries them.
struct Layout {
  bool mn_major;
  std::uint32_t span;
  std::uint64_t lbo, sbo;
};

// The byte offset of element (row, k) of an operand stored with `l`, before the swizzle.
inline std::uint64_t place(const Layout& l, std::uint64_t row, std::uint64_t k, std::uint64_t bytes) {
  std::uint64_t off;
  if (!l.mn_major) {
    if (l.span == 0) {  // core matrix (row/8, k-chunk): 8 rows of 16 bytes
      const std::uint64_t chunk = k * bytes / 16;
      off = row / 8 * l.sbo + chunk * l.lbo + row % 8 * 16 + k * bytes % 16;
    } else {  // atom row/8 of 8 rows of `span` bytes
      off = row / 8 * l.sbo + row % 8 * l.span + k * bytes;
    }
  } else {
    const std::uint64_t c = row * bytes;  // along M/N
    if (l.span == 0)
      off = c / 16 * l.sbo + k / 8 * l.lbo + k % 8 * 16 + c % 16;
    else
      off = c / l.span * l.lbo + k / 8 * l.sbo + k % 8 * l.span + c % l.span;
  }
  return off;
}

// The swizzle on a shared address: within each 128-byte line, the 16-byte
// chunk index is XORed with the line index modulo span/16.
inline std::uint64_t swizzled(std::uint64_t address, std::uint32_t span) {
  if (span == 0) return address;
  const std::uint64_t line = address / 128, chunk = address / 16 % 8;
  return line * 128 + ((chunk ^ (line % (span / 16))) * 16) + address % 16;
}

inline std::uint64_t descriptor(std::uint64_t start, const Layout& l) {
  const std::uint64_t mode = l.span == 128 ? 1 : l.span == 64 ? 2 : l.span == 32 ? 3 : 0;
  return (start >> 4) | (l.lbo >> 4) << 16 | (l.sbo >> 4) << 32 | mode << 62;
}

struct Case {
  ptx::Type dtype, atype;
  int n;
  Layout a, b;
  std::uint64_t a_bytes, b_bytes;  // one operand copy's footprint, K-step 0
  std::uint64_t a_step, b_step;    // the descriptor start advance to the second K slice
  bool negate_a = false;
};

inline std::string reg_list(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", %d" : "%d") + std::to_string(i);
  return s;
}

// One warpgroup: copies the image to shared memory at `buf` (descriptors
// are given relative to it), then
//   D  = (neg?)A0 B0   (scale-d 0, over an accumulator of NaNs)
//   D += A1 B1         (scale-d = predicate true)
// and writes each thread's accumulator registers to out.
inline std::string kernel(const Case& c, std::uint64_t image_bytes) {
  const bool half = c.atype == ptx::Type::f16 || c.atype == ptx::Type::bf16;
  const int k = half ? 16 : 32;
  const int regs = c.dtype == ptx::Type::f32 ? c.n / 2 : c.n / 4;
  const std::string shape = "m64n" + std::to_string(c.n) + "k" + std::to_string(k);
  const std::string types = std::string(ptx::name(c.dtype)) + "." + std::string(ptx::name(c.atype)) + "." +
                            std::string(ptx::name(c.atype));
  const std::string trans = half ? std::string(", ") + (c.a.mn_major ? "1" : "0") + ", " + (c.b.mn_major ? "1" : "0") : "";
  std::string init, stores;
  for (int i = 0; i < regs; ++i) {
    init += "  mov.b32 %d" + std::to_string(i) + ", 0x7FC00000;\n";
    stores += "  st.global.b32 [%rd3+" + std::to_string(4 * i) + "], %d" + std::to_string(i) + ";\n";
  }
  return ptx_module(fill(R"(
.visible .entry wg(.param .u64 in, .param .u64 out, .param .u64 da0, .param .u64 db0, .param .u64 da1,
                   .param .u64 db1)
{
  .reg .b32 %r<16>;
  .reg .b32 %d<$REGS>;
  .reg .b64 %rd<16>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 buf[$BYTES];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, buf;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r7, %r1;
COPY:
  setp.ge.u32 %p3, %r7, $WORDS;
  @%p3 bra COPIED;
  mul.wide.u32 %rd4, %r7, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.global.u32 %r10, [%rd5];
  shl.b32 %r8, %r7, 2;
  add.u32 %r9, %r3, %r8;
  st.shared.u32 [%r9], %r10;
  add.u32 %r7, %r7, 128;
  bra COPY;
COPIED:
  bar.sync 0;
  fence.proxy.async.shared::cta;
  ld.param.u64 %rd6, [da0];
  ld.param.u64 %rd7, [db0];
  ld.param.u64 %rd8, [da1];
  ld.param.u64 %rd9, [db1];
  cvt.u64.u32 %rd10, %r3;
  shr.u64 %rd10, %rd10, 4;
  add.u64 %rd6, %rd6, %rd10;
  add.u64 %rd7, %rd7, %rd10;
  add.u64 %rd8, %rd8, %rd10;
  add.u64 %rd9, %rd9, %rd10;
$INIT
  setp.ne.u32 %p1, %r1, 1000;
  setmaxnreg.inc.sync.aligned.u32 232;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.$SHAPE.$TYPES {$D}, %rd6, %rd7, 0, $SA, 1$TRANS;
  wgmma.mma_async.sync.aligned.$SHAPE.$TYPES {$D}, %rd8, %rd9, %p1, 1, 1$TRANS;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r1, $ROWBYTES;
  add.u64 %rd3, %rd2, %rd3;
$STORES
  ret;
}
)",
                         {{"REGS", std::to_string(regs)},
                          {"BYTES", std::to_string(image_bytes)},
                          {"WORDS", std::to_string(image_bytes / 4)},
                          {"INIT", init},
                          {"SHAPE", shape},
                          {"TYPES", types},
                          {"D", reg_list(regs)},
                          {"SA", c.negate_a ? "-1" : "1"},
                          {"TRANS", trans},
                          {"ROWBYTES", std::to_string(4 * regs)},
                          {"STORES", stores}}));
}


// The shared-memory image of a case: A's two K slices at 0 (slice s at
// s*a_step), B's at b_base, from A[m][k] and B[n][k] (k < 2K) as element bits.
struct WgmmaImage {
  std::vector<std::uint8_t> bytes;
  std::uint64_t b_base;
};
inline WgmmaImage wgmma_image(const Case& c, const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  const bool half = c.atype == ptx::Type::f16 || c.atype == ptx::Type::bf16;
  const int k = half ? 16 : 32, kk = 2 * k;
  const std::uint64_t eb = half ? 2 : 1;
  WgmmaImage img;
  img.b_base = (c.a_bytes + c.a_step + 1023) / 1024 * 1024;
  img.bytes.assign((img.b_base + c.b_bytes + c.b_step + 1023) / 1024 * 1024, 0xEE);
  auto put = [&](std::uint64_t at, std::uint32_t bits) {
    for (std::uint64_t i = 0; i < eb; ++i) img.bytes[at + i] = static_cast<std::uint8_t>(bits >> (8 * i));
  };
  for (int s = 0; s < 2; ++s)
    for (int kx = 0; kx < k; ++kx) {
      for (int m = 0; m < 64; ++m)
        put(swizzled(s * c.a_step + place(c.a, m, kx, eb), c.a.span), a[static_cast<std::size_t>(m * kk + s * k + kx)]);
      for (int n = 0; n < c.n; ++n)
        put(swizzled(img.b_base + s * c.b_step + place(c.b, n, kx, eb), c.b.span),
            b[static_cast<std::size_t>(n * kk + s * k + kx)]);
    }
  return img;
}

// The four descriptors the kernel takes (A0, B0, A1, B1), relative to `buf`.
inline std::vector<std::uint64_t> wgmma_descriptors(const Case& c, std::uint64_t b_base) {
  return {descriptor(0, c.a), descriptor(b_base, c.b), descriptor(c.a_step, c.a), descriptor(b_base + c.b_step, c.b)};
}

struct NamedCase {
  const char* name;
  Case c;
};

// The layouts the GEMM kernels use, each with the descriptor strides its
// image needs.
inline std::vector<NamedCase> wgmma_layout_cases() {
  using ptx::Type;
  // 8x16-byte core matrices: K chunks 128 bytes apart (LBO), 8-row groups 512 (SBO).
  const Layout core{false, 0, 128, 512};
  // 64-element rows of 128 bytes as a 128B-swizzled TMA box leaves them; the
  // second K slice starts 32 bytes into each row.
  const Layout k128{false, 128, 16, 1024};
  // K rows of 64 M/N elements; 8-row atoms 1024 apart (SBO); B's second 64
  // columns 4096 further (LBO, after its 32 K rows); K slices 16 rows apart.
  const Layout mn128_a{true, 128, 8192, 1024}, mn128_b{true, 128, 4096, 1024};
  // core matrices of 8 K rows x 16 bytes of M/N: K groups 128 apart (LBO),
  // M/N groups 512 apart (SBO)
  const Layout mn_core{true, 0, 128, 512};
  const Layout k64{false, 64, 16, 512};
  // 32-byte rows hold one K slice of 32 fp8 values; the second slice is the next tile.
  const Layout k32{false, 32, 16, 256};
  return {
      {"bf16 K-major core matrices", {.dtype = Type::f32, .atype = Type::bf16, .n = 8, .a = core, .b = core,
                                      .a_bytes = 8 * 512, .b_bytes = 512, .a_step = 256, .b_step = 256}},
      {"f16 K-major 128B swizzle, K advanced inside the atom",
       {.dtype = Type::f32, .atype = Type::f16, .n = 128, .a = k128, .b = k128, .a_bytes = 64 * 128,
        .b_bytes = 128 * 128, .a_step = 32, .b_step = 32}},
      {"bf16 MN-major 128B swizzle, two blocks along N",
       {.dtype = Type::f32, .atype = Type::bf16, .n = 128, .a = mn128_a, .b = mn128_b, .a_bytes = 32 * 128,
        .b_bytes = 2 * 4096, .a_step = 2048, .b_step = 2048}},
      {"f16 MN-major core matrices", {.dtype = Type::f32, .atype = Type::f16, .n = 16, .a = mn_core, .b = mn_core,
                                      .a_bytes = 8 * 512, .b_bytes = 2 * 512, .a_step = 256, .b_step = 256}},
      {"f16 accumulator, 64B swizzle, negated A",
       {.dtype = Type::f16, .atype = Type::f16, .n = 24, .a = k64, .b = k64, .a_bytes = 8 * 512, .b_bytes = 3 * 512,
        .a_step = 32, .b_step = 32, .negate_a = true}},
      {"e4m3, 32B swizzle", {.dtype = Type::f32, .atype = Type::e4m3, .n = 16, .a = k32, .b = k32, .a_bytes = 8 * 256,
                             .b_bytes = 2 * 256, .a_step = 8 * 256, .b_step = 2 * 256}},
  };
}

}  // namespace warpforge::sim::testing
