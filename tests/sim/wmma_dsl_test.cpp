// The DSL's wmma wrappers (dsl/isa/wmma.hpp): one warp loads A, B and C from
// global memory, multiplies and stores D, in each floating-point form, on
// the simulator against a host reference; ptxas assembles every kernel for
// sm_80 and sm_90a; and the wrappers refuse forms wmma lacks, saying which.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/ptxas.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::sim::testing {
namespace {

using namespace warpforge::dsl;
using dsl::Kernel;  // not the simulator's sim::Kernel, which other files of a unity batch declare

struct Form {
  const char* name;
  WmmaShape shape;
  int m, n, k;
  Type input, acc;
  WmmaLayout b_layout;  // A and C are row-major
};

const Form kForms[] = {
    {"f16 m16n16k16 -> f32", WmmaShape::m16n16k16, 16, 16, 16, f16, f32, WmmaLayout::col},
    {"f16 m32n8k16 -> f16", WmmaShape::m32n8k16, 32, 8, 16, f16, f16, WmmaLayout::row},
    {"bf16 m8n32k16 -> f32", WmmaShape::m8n32k16, 8, 32, 16, bf16, f32, WmmaLayout::col},
    {"tf32 m16n16k8 -> f32", WmmaShape::m16n16k8, 16, 16, 8, tf32, f32, WmmaLayout::row},
};

int registers(const Form& f, WmmaMatrix x, Type t) {
  return ptx::wmma_fragment_registers(f.shape == WmmaShape::m16n16k16  ? ptx::MmaShape::m16n16k16
                                      : f.shape == WmmaShape::m32n8k16 ? ptx::MmaShape::m32n8k16
                                      : f.shape == WmmaShape::m8n32k16 ? ptx::MmaShape::m8n32k16
                                                                       : ptx::MmaShape::m16n16k8,
                                      x, t);
}

// d = a·b + c for one tile: a m×k row-major, b k×n (row- or column-major),
// c and d m×n row-major, elements of the form's types.
ptx::Module wmma_kernel(const Form& f, Target target) {
  Kernel k("wmma_tile", target);
  Reg a = k.param_ptr("a"), b = k.param_ptr("b"), c = k.param_ptr("c"), d = k.param_ptr("d");
  const Type acc_reg = f.acc == f32 ? f32 : b32;
  Regs fa = k.regs(b32, registers(f, WmmaMatrix::a, f.input), "frag_a");
  Regs fb = k.regs(b32, registers(f, WmmaMatrix::b, f.input), "frag_b");
  Regs fc = k.regs(acc_reg, registers(f, WmmaMatrix::c, f.acc), "frag_c");
  Regs fd = k.regs(acc_reg, registers(f, WmmaMatrix::d, f.acc), "frag_d");
  k.wmma_load(WmmaMatrix::a, f.shape, WmmaLayout::row, Space::global, f.input, fa, at(a), f.k);
  k.wmma_load(WmmaMatrix::b, f.shape, f.b_layout, Space::global, f.input, fb, at(b),
              f.b_layout == WmmaLayout::row ? f.n : f.k);
  k.wmma_load(WmmaMatrix::c, f.shape, WmmaLayout::row, Space::global, f.acc, fc, at(c), f.n);
  k.wmma_mma(f.shape, WmmaLayout::row, f.b_layout, f.input, f.acc, f.acc, fd, fa, fb, fc);
  k.wmma_store(f.shape, WmmaLayout::row, Space::global, f.acc, at(d), fd, f.n);
  return k.module();
}

// Element bits of a value (exactly representable in the type).
std::uint32_t bits_of(Type t, float x) {
  if (t == f16) return ops::f32_to_f16_bits(x);
  if (t == bf16) return ops::f32_to_bf16_bits(x);
  return std::bit_cast<std::uint32_t>(x);  // tf32 and f32 elements are 32-bit
}

std::vector<std::uint8_t> to_bytes(Type t, const std::vector<float>& v) {
  const std::size_t width = t == f16 || t == bf16 ? 2 : 4;
  std::vector<std::uint8_t> out(v.size() * width);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint32_t bits = bits_of(t, v[i]);
    std::memcpy(&out[i * width], &bits, width);
  }
  return out;
}

TEST(WmmaDsl, EveryFormMatchesTheHostReference) {
  for (const Form& f : kForms) {
    SCOPED_TRACE(f.name);
    // Multiples of 1/64 in [-2, 2]: exact in every input type, and sums
    // exact in f32 that need more bits than f16 keeps.
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> step(-128, 128);
    const auto values = [&](int n) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& x : v) x = static_cast<float>(step(rng)) / 64.0f;
      return v;
    };
    const std::vector<float> a = values(f.m * f.k), b = values(f.k * f.n), c = values(f.m * f.n);
    runtime::Device dev = runtime::Device::sim();
    runtime::Module module(dev, wmma_kernel(f, Target::sm_80));
    const auto upload = [&](Type t, const std::vector<float>& v) {
      const std::vector<std::uint8_t> bytes = to_bytes(t, v);
      runtime::Buffer buf = dev.allocate(bytes.size());
      buf.upload(bytes);
      return buf;
    };
    runtime::Buffer da = upload(f.input, a), db = upload(f.input, b), dc = upload(f.acc, c);
    runtime::Buffer dd = dev.allocate(static_cast<std::size_t>(f.m * f.n) * 4);
    dd.fill(0xFF);  // poison
    module.launch("wmma_tile", {.grid = {1}, .block = {32}}, {da, db, dc, dd});
    dev.synchronize();
    const std::vector<std::uint8_t> out =
        dd.download<std::uint8_t>(static_cast<std::size_t>(f.m * f.n) * (f.acc == f16 ? 2 : 4));
    for (int i = 0; i < f.m; ++i)
      for (int j = 0; j < f.n; ++j) {
        float exact = c[static_cast<std::size_t>(i * f.n + j)];
        float magnitude = std::fabs(exact);
        for (int kk = 0; kk < f.k; ++kk) {
          const float bv = b[static_cast<std::size_t>(
              f.b_layout == WmmaLayout::row ? kk * f.n + j : j * f.k + kk)];
          const float p = a[static_cast<std::size_t>(i * f.k + kk)] * bv;
          exact += p;
          magnitude += std::fabs(p);
        }
        const std::size_t e = static_cast<std::size_t>(i * f.n + j);
        if (f.acc == f16) {  // the exact sum rounded once: multiples of 2^-12 below 4 lose
                             // nothing to the H100's alignment (25 bits below 2^2)
          std::uint16_t got;
          std::memcpy(&got, &out[e * 2], 2);
          EXPECT_EQ(got, ops::f32_to_f16_bits(exact)) << "D[" << i << "][" << j << "]";
        } else {  // the tensor-core sum: below 2^-20 of the terms' magnitudes
          float got;
          std::memcpy(&got, &out[e * 4], 4);
          EXPECT_NEAR(got, exact, 0x1p-20f * magnitude) << "D[" << i << "][" << j << "]";
        }
      }
  }
}

TEST(WmmaDsl, KernelsAssembleWithPtxas) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "no ptxas ($WARPFORGE_PTXAS, $PATH, /usr/local/cuda/bin)";
  for (const Form& f : kForms)
    for (Target t : {Target::sm_80, Target::sm_90a}) {
      const ptx::PtxasResult r =
          ptx::run_ptxas(ptx::emit(wmma_kernel(f, t)), t == Target::sm_80 ? "sm_80" : "sm_90a");
      EXPECT_TRUE(r.ok) << f.name << ":\n" << r.log;
    }
}

template <class F>
std::string dsl_error(F&& build) {
  try {
    build();
  } catch (const warpforge::DslError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a DslError";
  return "";
}

TEST(WmmaDsl, RefusesFormsWmmaLacks) {
  Kernel k("refusals", Target::sm_80);
  Reg p = k.param_ptr("p");
  Regs eight = k.regs(b32, 8), four = k.regs(b32, 4), acc = k.regs(f32, 8);
  // f16 A fragments take 8 registers.
  std::string msg = dsl_error([&] {
    k.wmma_load(WmmaMatrix::a, WmmaShape::m16n16k16, WmmaLayout::row, Space::global, f16, four,
                at(p), 16);
  });
  EXPECT_NE(msg.find("has 4 registers; this fragment takes 8"), std::string::npos) << msg;
  // bf16 inputs accumulate in f32 only.
  msg = dsl_error([&] {
    k.wmma_mma(WmmaShape::m16n16k16, WmmaLayout::row, WmmaLayout::col, bf16, f16, f16, four, four,
               four, four);
  });
  EXPECT_NE(msg.find("inputs .bf16 with .f16 accumulators"), std::string::npos) << msg;
  // tf32 is m16n16k8's type only.
  msg = dsl_error([&] {
    k.wmma_load(WmmaMatrix::a, WmmaShape::m16n16k16, WmmaLayout::row, Space::global, tf32, four,
                at(p), 16);
  });
  EXPECT_NE(msg.find(".tf32 elements in matrix a"), std::string::npos) << msg;
  // Loads read global, shared or generic addresses.
  msg = dsl_error([&] {
    k.wmma_load(WmmaMatrix::c, WmmaShape::m16n16k16, WmmaLayout::row, Space::local, f32, acc, at(p),
                16);
  });
  EXPECT_NE(msg.find("take global, shared or generic addresses"), std::string::npos) << msg;
  // D is stored, not loaded.
  msg = dsl_error([&] {
    k.wmma_load(WmmaMatrix::d, WmmaShape::m16n16k16, WmmaLayout::row, Space::global, f32, acc,
                at(p), 16);
  });
  EXPECT_NE(msg.find("D is stored"), std::string::npos) << msg;
  // Packed fragments are b32 registers.
  msg = dsl_error([&] {
    k.wmma_mma(WmmaShape::m16n16k16, WmmaLayout::row, WmmaLayout::col, f16, f32, f32, acc, acc,
               eight, acc);
  });
  EXPECT_NE(msg.find("packed fragments are b32 registers"), std::string::npos) << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
