// Every DSL wrapper, in two kernels that use them all: run on the simulator
// with each work-item's results checked against host arithmetic, and compiled
// by LLVM for gfx90a and gfx942 with the expected instructions in the
// disassembly. (MFMA and buffer wrappers: mfma_mapping_test, buffer_test.)
#include <bit>

#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

constexpr int kGroup = 128;  // two waves, so that the LDS exchange crosses waves
constexpr sim::amdgpu::Grid kGrid{2, 2, 1};
constexpr int kItems = kGroup * 4;
constexpr int kSlots = 28;

// out[item * kSlots + slot] for each slot below; vec_out[item] = the 16-byte
// vector passed through a global load, LDS and a global store.
KernelIR alu_kernel(Target t) {
  AmdKernel k("every_wrapper", t, kGroup);
  Val px = k.param_ptr("x"), py = k.param_ptr("y"), pz = k.param_ptr("z"), ph = k.param_ptr("h");
  Val pv = k.param_ptr("v"), out = k.param_ptr("out"), vec_out = k.param_ptr("vec_out");
  Val scale = k.param_f32("scale");
  Val bias = k.param_i32("bias");
  Val tid = k.workitem_id(0);
  Val group = k.workgroup_id(1) * 2 + k.workgroup_id(0);
  Val item = group * kGroup + tid;
  Val x = k.load(Type::f32, k.ptr_add(px, item * 4));
  Val w = k.fmul(x, scale);
  Val y = k.load(Type::i32, k.ptr_add(py, item * 4));
  Val z = k.load(Type::i32, k.ptr_add(pz, item * 4));
  Val amount = z & 31;
  Val wide = k.mul(k.zext(y), k.zext(z));
  Val halves = k.bitcast(Type::v2i32, wide);
  Val lds = k.lds(kGroup * 4);
  k.store(k.ptr_add(lds, tid * 4), y + bias);
  Val vec_lds = k.lds(kGroup * 16);
  k.store(k.ptr_add(vec_lds, tid * 16), k.load(Type::v4i32, k.ptr_add(pv, item * 16)));
  k.barrier();
  Val neighbour = k.load(Type::i32, k.ptr_add(lds, ((tid + 1) & (kGroup - 1)) * 4));
  Val copied = k.reg(Type::i32);
  k.mov(copied, y);
  Val results[kSlots] = {
      y + z,
      y - z,
      y * z,
      y & z,
      y | z,
      y ^ z,
      y << amount,
      y >> amount,
      k.ashr(y, amount),
      k.select(k.icmp(Cmp::slt, y, z), y, z),
      k.select(y < z, 1, 0),
      k.select(k.icmp(Cmp::sge, y, z), 1, 0),
      k.extract(halves, 1),
      k.trunc(wide),
      k.bitcast(Type::i32, k.fadd(x, w)),
      k.bitcast(Type::i32, k.fsub(x, w)),
      k.bitcast(Type::i32, k.fmul(x, x)),
      k.bitcast(Type::i32, k.fma(x, w, 1.5f)),
      k.bitcast(Type::i32, k.sitofp(y)),
      k.fptosi(k.fmul(x, 1000.0f)),
      k.bitcast(Type::i32, k.bf16_to_f32(k.f32_to_bf16(x))),
      k.bitcast(Type::i32, k.f16_to_f32(k.f32_to_f16(x))),
      k.bitcast(Type::i32, k.f16_to_f32(k.load(Type::i16, k.ptr_add(ph, item * 2)))),
      k.workgroup_id(0) + k.workgroup_id(1) * 10,
      tid,
      neighbour,
      copied,
      k.readfirstlane(y),
  };
  for (int s = 0; s < kSlots; ++s) k.store(k.ptr_add(out, (item * kSlots + s) * 4), results[s]);
  k.store(k.ptr_add(vec_out, item * 16),
          k.load(Type::v4i32, k.ptr_add(vec_lds, k.sub(kGroup - 1, tid) * 16)));
  return k.ir();
}

std::uint32_t bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

TEST(AmdWrappersOnSim, EveryWrapperComputesWhatTheHostDoes) {
  std::uniform_int_distribution<std::int32_t> any(std::numeric_limits<std::int32_t>::min());
  std::normal_distribution<float> normal;
  std::vector<float> x(kItems);
  std::vector<std::int32_t> y(kItems), z(kItems), v(kItems * 4);
  std::vector<std::uint16_t> h(kItems);
  for (int i = 0; i < kItems; ++i) {
    x[i] = normal(rng());
    y[i] = any(rng());
    z[i] = any(rng());
    h[i] = ops::f32_to_f16_bits(normal(rng()));
    for (int e = 0; e < 4; ++e) v[i * 4 + e] = any(rng());
  }
  const float scale = 0.75f + normal(rng()) * 0.01f;
  const std::int32_t bias = any(rng());
  sim::GlobalMemory mem;
  std::uint64_t out = upload(mem, std::vector<std::uint32_t>(kItems * kSlots, 0xDEADBEEFu));
  std::uint64_t vec_out = upload(mem, std::vector<std::uint32_t>(kItems * 4, 0xDEADBEEFu));
  sim::amdgpu::run(alu_kernel(Target::gfx942), kGrid,
                   {upload(mem, x), upload(mem, y), upload(mem, z), upload(mem, h), upload(mem, v),
                    out, vec_out, sim::amdgpu::f32_arg(scale), static_cast<std::uint32_t>(bias)},
                   mem);
  std::vector<std::uint32_t> got = download<std::uint32_t>(mem, out, kItems * kSlots);
  std::vector<std::int32_t> got_vec = download<std::int32_t>(mem, vec_out, kItems * 4);
  for (int i = 0; i < kItems; ++i) {
    const std::uint32_t uy = static_cast<std::uint32_t>(y[i]),
                        uz = static_cast<std::uint32_t>(z[i]), n = uz & 31;
    const float w = x[i] * scale;
    const std::uint64_t wide = std::uint64_t{uy} * uz;
    const int group = i / kGroup, tid = i % kGroup;
    const int next = group * kGroup + (tid + 1) % kGroup;
    const std::uint32_t want[kSlots] = {
        uy + uz,
        uy - uz,
        uy * uz,
        uy & uz,
        uy | uz,
        uy ^ uz,
        uy << n,
        uy >> n,
        static_cast<std::uint32_t>(y[i] >> n),
        static_cast<std::uint32_t>(std::min(y[i], z[i])),
        uy < uz,
        y[i] >= z[i],
        static_cast<std::uint32_t>(wide >> 32),
        static_cast<std::uint32_t>(wide),
        bits(x[i] + w),
        bits(x[i] - w),
        bits(x[i] * x[i]),
        bits(std::fma(x[i], w, 1.5f)),
        bits(static_cast<float>(y[i])),
        static_cast<std::uint32_t>(static_cast<std::int32_t>(x[i] * 1000.0f)),
        bits(ops::round_to_bf16(x[i])),
        bits(ops::round_to_f16(x[i])),
        bits(ops::f16_bits_to_f32(h[i])),
        static_cast<std::uint32_t>(group % 2 + (group / 2) * 10),
        static_cast<std::uint32_t>(tid),
        static_cast<std::uint32_t>(y[next]) + static_cast<std::uint32_t>(bias),
        uy,
        static_cast<std::uint32_t>(y[group * kGroup + tid / 64 * 64]),  // the wave's lane 0
    };
    for (int s = 0; s < kSlots; ++s)
      ASSERT_EQ(got[i * kSlots + s], want[s]) << "item " << i << " slot " << s;
    const int mirror = group * kGroup + (kGroup - 1 - tid);
    for (int e = 0; e < 4; ++e)
      ASSERT_EQ(got_vec[i * 4 + e], v[mirror * 4 + e]) << "item " << i << " element " << e;
  }
}

class AmdWrappersCompile : public ::testing::TestWithParam<Target> {};

TEST_P(AmdWrappersCompile, DisassemblyHoldsEachWrappersInstructions) {
  Target t = GetParam();
  std::string dis = compiled_disassembly(alu_kernel(t), t);
  for (const char* want :
       {"global_load_dwordx4", "global_store_dwordx4", "global_load_ushort", "global_load_dword ",
        "ds_write_b128",       "ds_read_b128",         "ds_write_b32",       "ds_read_b32",
        "s_barrier",           "v_mad_u64_u32",        "v_mul_lo_u32",       "v_cvt_f32_i32",
        "v_cvt_i32_f32",       "v_cvt_f16_f32",        "v_cvt_f32_f16",      "v_ashrrev_i32",
        "v_readfirstlane_b32", "v_lshrrev_b32",        "v_lshlrev_b32",      "v_fma"})
    EXPECT_GT(count(dis, want), 0) << want << " missing for " << to_string(t) << ":\n" << dis;
  EXPECT_EQ(count(dis, "scratch_"), 0) << "registers spilled to scratch:\n" << dis;
}

INSTANTIATE_TEST_SUITE_P(Targets, AmdWrappersCompile,
                         ::testing::Values(Target::gfx90a, Target::gfx942),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace warpforge::amdgpu::testing
