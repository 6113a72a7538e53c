// A wgmma kernel written with the DSL (dsl/isa/wgmma.hpp), in both of its A
// forms, with its inputs: shared by the simulator test
// (tests/sim/wgmma_dsl_test.cpp) and the GPU test that checks the
// simulator against the hardware (tests/gpu/hopper_test.cpp). B, and A when
// it is in shared memory, use the K-major core-matrix layout of
// wgmma_kernels.hpp; A in registers is laid out by layout::wgmma_a_fragment,
// so the simulator (which reads fragments from the ISA's formulas on its
// own) and layout/ check each other, and the GPU checks both.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../../src/sim/float_format.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/layout/wgmma_a_fragment.hpp"
#include "warpforge/layout/wgmma_accumulator.hpp"
#include "dsl_image.hpp"
#include "wgmma_kernels.hpp"

namespace warpforge::wgmma_dsl_testing {

struct DslWgmmaCase {
  const char* name;
  ptx::Type a_type, b_type;  // bf16/f16 (A and B alike) or e4m3/e5m2 (any pairing)
  int n;
  bool a_in_registers;
};

inline int k_of(const DslWgmmaCase& c) { return ptx::bits(c.a_type) == 16 ? 16 : 32; }

// The shared-memory geometry of wgmma_kernels.hpp's "K-major core matrices":
// 8 x 16-byte core matrices, the two K slices (32 bytes each) 256 bytes
// apart inside 512-byte groups of 8 rows. Element widths only matter to it
// through the bytes, so one Case serves both operands' types.
inline sim::testing::Case image_case(const DslWgmmaCase& c) {
  const sim::testing::Layout core{false, 0, 128, 512};
  return {.dtype = ptx::Type::f32, .atype = c.a_type, .n = c.n, .a = core, .b = core, .a_bytes = 8 * 512,
          .b_bytes = static_cast<std::uint64_t>(c.n / 8) * 512, .a_step = 256, .b_step = 256};
}

// Each thread's eight A words: slice s's four fragment registers at 4s..4s+3.
constexpr int kFragmentWords = 8;

// The kernel "wg_dsl"(in, frag, out, da0, db0, da1, db1): copies `in` (the
// shared-memory image) to shared memory, loads its A fragments from
// frag[thread] when A is in registers, then
//   D  = A0·B0   (scale-d false)
//   D += A1·B1   (scale-d a predicate that holds)
// and writes each thread's N/2 accumulators to out[thread]. The descriptors
// are relative to the shared buffer.
inline ptx::Module dsl_wgmma_kernel(const DslWgmmaCase& c, std::uint64_t image_bytes) {
  using namespace dsl;
  Kernel k("wg_dsl", Target::sm_90a);
  Reg in = k.param_ptr("in", 4), frag = k.param_ptr("frag", 16), out = k.param_ptr("out", 4);
  Reg da0 = k.param(u64, "da0"), db0 = k.param(u64, "db0"), da1 = k.param(u64, "da1"), db1 = k.param(u64, "db1");
  Shared buf = k.shared("buf", static_cast<std::int64_t>(image_bytes), 1024);
  Reg tid = k.sreg(SReg::tid_x);
  Reg base = k.address_of(buf);
  sim::testing::copy_image_to_shared(k, in, base, tid, static_cast<std::int64_t>(image_bytes));
  k.bar_sync();
  k.fence_proxy_async_shared();
  Reg start = k.reg(u64);
  k.cvt(start, base >> 4);
  Regs a0, a1;  // A's two slices, when A is in registers
  if (c.a_in_registers) {
    a0 = k.regs(b32, 4, "fa");
    a1 = k.regs(b32, 4, "fb");
    Reg at_thread = k.reg(u64);
    k.mul_wide(at_thread, tid, 4 * kFragmentWords);
    k.ld(Space::global, b32, a0, at(frag + at_thread));
    k.ld(Space::global, b32, a1, at(frag + at_thread, 16));
  }
  Regs acc = k.regs(f32, c.n / 2, "acc");
  Pred holds = k.setp(Cmp::ne, tid, 1000);
  k.wgmma_fence();
  if (c.a_in_registers) {
    k.wgmma_mma_async(c.a_type, c.b_type, acc, a0, db0 + start, false, WgmmaMajor::k);
    k.wgmma_mma_async(c.a_type, c.b_type, acc, a1, db1 + start, holds, WgmmaMajor::k);
  } else {
    k.wgmma_mma_async(c.a_type, c.b_type, acc, da0 + start, db0 + start, false, WgmmaMajor::k, WgmmaMajor::k);
    k.wgmma_mma_async(c.a_type, c.b_type, acc, da1 + start, db1 + start, holds, WgmmaMajor::k, WgmmaMajor::k);
  }
  k.wgmma_commit_group();
  k.wgmma_wait_group(0);
  Reg row = k.reg(u64);
  k.mul_wide(row, tid, 2 * c.n);  // N/2 f32 per thread
  for (int i = 0; i < c.n / 2; ++i) k.st(Space::global, f32, at(out + row, 4 * i), acc[static_cast<std::size_t>(i)]);
  return k.module();
}

// Random inputs for a case: A (64 x 2K) and B (N x 2K) as values, the
// shared-memory image holding both, A's fragments per thread, and the four
// descriptors.
struct DslWgmmaInputs {
  std::vector<double> a, b;  // a[m * 2K + k], b[n * 2K + k]
  std::vector<std::uint8_t> image;
  std::vector<std::uint32_t> fragments;  // 128 threads x kFragmentWords
  std::vector<std::uint64_t> descriptors;
};

inline DslWgmmaInputs dsl_wgmma_inputs(const DslWgmmaCase& c, std::mt19937& rng) {
  const int k = k_of(c), kk = 2 * k;
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  auto random = [&](ptx::Type t, std::size_t n, std::vector<double>& values) {
    std::vector<std::uint32_t> bits(n);
    values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      double v = u(rng);
      if (std::abs(v) < 0.1) v = 0.75;  // never zero: a missed element must show
      bits[i] = sim::encode_float(v, sim::float_format(t), sim::Rounding::rn, true);
      values[i] = sim::decode_float(bits[i], sim::float_format(t));
    }
    return bits;
  };
  DslWgmmaInputs in;
  const auto abits = random(c.a_type, std::size_t{64} * kk, in.a);
  const auto bbits = random(c.b_type, static_cast<std::size_t>(c.n) * kk, in.b);
  const sim::testing::Case geometry = image_case(c);
  const sim::testing::WgmmaImage img = sim::testing::wgmma_image(geometry, abits, bbits);
  in.image = img.bytes;
  in.descriptors = sim::testing::wgmma_descriptors(geometry, img.b_base);
  const layout::Fragment f = layout::wgmma_a_fragment(static_cast<int>(ptx::bits(c.a_type)));
  in.fragments.assign(128 * kFragmentWords, 0);
  for (int t = 0; t < 128; ++t)
    for (int s = 0; s < 2; ++s)
      for (int64_t v = 0; v < f.layout.extent(layout::Axis::value); ++v) {
        const layout::AxisPoint e =
            f.layout({{layout::Axis::lane, t % 32}, {layout::Axis::warp, t / 32}, {layout::Axis::value, v}});
        const std::uint32_t bits =
            abits[static_cast<std::size_t>(e.at(layout::Axis::row) * kk + s * k + e.at(layout::Axis::col))];
        const layout::RegisterSlot slot = f.slot(v);
        in.fragments[static_cast<std::size_t>(t * kFragmentWords + 4 * s + slot.reg)] |=
            bits << (f.element_bits * slot.part);
      }
  return in;
}

// D[row][col] = sum over both slices of A[row][k]·B[col][k], for thread t's
// accumulator i (layout::wgmma_accumulator), with the sum of |products|.
struct Expected {
  double value, magnitude;
};
inline Expected expected(const DslWgmmaCase& c, const DslWgmmaInputs& in, int t, int i) {
  const layout::AxisPoint e = layout::wgmma_accumulator(c.n).layout(
      {{layout::Axis::lane, t % 32}, {layout::Axis::warp, t / 32}, {layout::Axis::value, i}});
  const int64_t row = e.at(layout::Axis::row), col = e.at(layout::Axis::col), kk = 2 * k_of(c);
  Expected x{0, 0};
  for (int64_t k = 0; k < kk; ++k) {
    const double p = in.a[static_cast<std::size_t>(row * kk + k)] * in.b[static_cast<std::size_t>(col * kk + k)];
    x.value += p;
    x.magnitude += std::abs(p);
  }
  return x;
}

// The cases both tests run: FP8 with A in shared memory, and A in registers
// for bf16, e4m3 and mixed FP8, at several N.
inline std::vector<DslWgmmaCase> dsl_wgmma_cases() {
  using ptx::Type;
  return {
      {"e4m3 x e5m2, A in shared memory, N = 24", Type::e4m3, Type::e5m2, 24, false},
      {"e5m2 x e5m2, A in shared memory, N = 128", Type::e5m2, Type::e5m2, 128, false},
      {"bf16, A in registers, N = 8", Type::bf16, Type::bf16, 8, true},
      {"bf16, A in registers, N = 256", Type::bf16, Type::bf16, 256, true},
      {"f16, A in registers, N = 40", Type::f16, Type::f16, 40, true},
      {"e4m3, A in registers, N = 16", Type::e4m3, Type::e4m3, 16, true},
      {"e4m3, A in registers, N = 64", Type::e4m3, Type::e4m3, 64, true},
      {"e4m3 x e5m2, A in registers, N = 72", Type::e4m3, Type::e5m2, 72, true},
      {"e5m2 x e4m3, A in registers, N = 8", Type::e5m2, Type::e4m3, 8, true},
  };
}

}  // namespace warpforge::wgmma_dsl_testing
