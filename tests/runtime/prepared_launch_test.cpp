// Module::prepare and PreparedLaunch on the fake backend (its launches go
// through DeviceBackend's default prepared path), and the parameter layout
// the launch packs arguments into.
#include <gtest/gtest.h>

#include "fake_backend.hpp"
#include "mixed_params_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/launch_check.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {
namespace {

using testing::FakeBackend;
using testing::MixedParamsValues;
using testing::mixed_params_kernel;

std::vector<std::vector<std::uint8_t>> recorded_bytes(const testing::RecordedLaunch& l) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const KernelArg& a : l.args) {
    const auto* b = reinterpret_cast<const std::uint8_t*>(a.bytes.data());
    out.emplace_back(b, b + a.bytes.size());
  }
  return out;
}

// .entry wide(<count> .u64 parameters), or (<count> .align 64 .b8 [128]).
ptx::Module wide_kernel(int count, bool maps) {
  ptx::Function f;
  f.name = "wide";
  for (int i = 0; i < count; ++i) {
    ptx::Variable v{.space = ptx::Space::param, .type = maps ? ptx::Type::b8 : ptx::Type::u64,
                    .name = "p" + std::to_string(i)};
    if (maps) {
      v.align = 64;
      v.dims = {128};
    }
    f.params.push_back(v);
  }
  f.body = ptx::Block{{ptx::Instruction::parse_opcode("ret")}};
  ptx::Module m;
  m.target = {"sm_90a"};
  m.items.push_back(f);
  return m;
}

TEST(ParamLayout, PlacesEachParameterAtItsAlignmentInOrder) {
  const ptx::Module m = mixed_params_kernel();
  const ParamLayout layout = param_layout(*m.find_function("mixed"));
  // u8 at 0; u32 at 4; u64 at 8; f32 at 16; the pointer at 24; the .align 64
  // map at 64 (128 bytes); s16 at 192; f64 at 200.
  EXPECT_EQ(layout.offsets, (std::vector<std::uint32_t>{0, 4, 8, 16, 24, 64, 192, 200}));
  EXPECT_EQ(layout.sizes, (std::vector<std::uint32_t>{1, 4, 8, 4, 8, 128, 2, 8}));
  EXPECT_EQ(layout.bytes, 208u);
  EXPECT_EQ(layout.align, 64u);
}

class PreparedLaunchTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> fake = std::make_shared<FakeBackend>();
  Device device{fake};
  Buffer out{device, 1024};
  LaunchConfig config{.grid = {2}, .block = {64}};
};

TEST_F(PreparedLaunchTest, PassesEveryParameterSizeAsItsBytesByNameAndByHandle) {
  Module m(device, mixed_params_kernel());
  MixedParamsValues v;
  v.out = out.address();
  m.launch("mixed", config, v.args());
  const PreparedLaunch mixed = m.prepare("mixed");
  EXPECT_EQ(mixed.kernel(), "mixed");
  Stream stream(device);
  v.flag = 0x5A;
  v.beta = -7.0e300;
  mixed.launch(config, v.args(), &stream);
  ASSERT_EQ(fake->launches.size(), 2u);
  MixedParamsValues first;
  first.out = out.address();
  EXPECT_EQ(recorded_bytes(fake->launches[0]), first.expected());
  EXPECT_EQ(recorded_bytes(fake->launches[1]), v.expected());
  EXPECT_EQ(fake->launches[1].kernel, "mixed");
  EXPECT_EQ(fake->launches[1].stream, stream.handle());
  EXPECT_EQ(fake->launches[1].config.block, (Dim3{64, 1, 1}));
}

// Beyond 64 parameters or 1 KB of them the launch packs on the heap.
TEST_F(PreparedLaunchTest, PacksLongParameterListsToo) {
  Module many(device, wide_kernel(70, false));
  std::vector<Arg> args;
  for (std::uint64_t i = 0; i < 70; ++i) args.emplace_back(i * 0x0101010101010101ull + 7);
  many.prepare("wide").launch(config, args);
  Module big(device, wide_kernel(10, true));
  std::vector<std::array<std::uint8_t, 128>> maps(10);
  std::vector<Arg> map_args;
  for (int i = 0; i < 10; ++i) {
    maps[i].fill(static_cast<std::uint8_t>(0x10 + i));
    map_args.push_back(Arg::bytes_of(maps[i]));
  }
  big.launch("wide", config, map_args);
  ASSERT_EQ(fake->launches.size(), 2u);
  const auto wide = recorded_bytes(fake->launches[0]);
  ASSERT_EQ(wide.size(), 70u);
  for (std::uint64_t i = 0; i < 70; ++i) {
    std::uint64_t value;
    ASSERT_EQ(wide[i].size(), 8u);
    std::memcpy(&value, wide[i].data(), 8);
    EXPECT_EQ(value, i * 0x0101010101010101ull + 7) << "parameter " << i;
  }
  const auto packed = recorded_bytes(fake->launches[1]);
  ASSERT_EQ(packed.size(), 10u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(packed[i], std::vector<std::uint8_t>(maps[i].begin(), maps[i].end())) << "map " << i;
}

TEST_F(PreparedLaunchTest, ChecksAsLaunchByNameDoes) {
  Module m(device, mixed_params_kernel());
  const PreparedLaunch mixed = m.prepare("mixed");
  MixedParamsValues v;
  v.out = out.address();
  std::vector<Arg> args = v.args();
  args.pop_back();
  EXPECT_THROW(
      {
        try {
          mixed.launch(config, args);
        } catch (const RuntimeError& e) {
          EXPECT_STREQ(e.what(),
                       "kernel 'mixed': takes 8 parameters (flag, n, count, alpha, out, map, h, beta); 7 arguments "
                       "given");
          throw;
        }
      },
      RuntimeError);
  EXPECT_THROW(mixed.launch({.grid = {1}, .block = {2048}}, v.args()), RuntimeError);
  auto other = std::make_shared<FakeBackend>();
  Stream foreign(Device{other});
  try {
    mixed.launch(config, v.args(), &foreign);
    ADD_FAILURE() << "a launch on another device's stream was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "kernel 'mixed' launched on a stream of another device");
  }
  EXPECT_TRUE(fake->launches.empty());
}

TEST_F(PreparedLaunchTest, RefusesAnUnknownKernelNamingTheModulesKernels) {
  Module m(device, mixed_params_kernel());
  try {
    m.prepare("mixd");
    ADD_FAILURE() << "an unknown kernel was prepared";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "no kernel 'mixd' in the module; its kernels: mixed");
  }
  EXPECT_NO_THROW(m.prepare("mixed"));  // the refusal left nothing behind
}

// A moved Module keeps its prepared kernels valid.
TEST_F(PreparedLaunchTest, SurvivesTheModulesMove) {
  Module m(device, mixed_params_kernel());
  const PreparedLaunch mixed = m.prepare("mixed");
  Module moved = std::move(m);
  MixedParamsValues v;
  v.out = out.address();
  mixed.launch(config, v.args());
  ASSERT_EQ(fake->launches.size(), 1u);
  EXPECT_EQ(recorded_bytes(fake->launches[0]), v.expected());
}

TEST(PreparedKernel, IsRefusedByAnotherBackend) {
  FakeBackend one, two;
  auto loaded = one.load(mixed_params_kernel());
  auto kernel = one.prepare(*loaded, "mixed");
  std::array<std::uint8_t, 128> bytes{};  // enough for any of its parameters
  void* params[8];
  for (void*& p : params) p = bytes.data();
  try {
    two.launch_prepared(*kernel, {.grid = {1}, .block = {32}}, params, nullptr);
    ADD_FAILURE() << "another backend's kernel was launched";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "a kernel prepared by another device was launched");
  }
  EXPECT_TRUE(two.launches.empty());
}

}  // namespace
}  // namespace warpforge::runtime
