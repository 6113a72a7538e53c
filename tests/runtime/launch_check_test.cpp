#include <gtest/gtest.h>

#include <array>

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
using testing::RecordedLaunch;

// .entry k(.param .u64 .ptr .global .align 16 A, .param .u64 B, .param .u32 n,
//          .param .f32 alpha, .param .align 64 .b8 tmap[128])
ptx::Module kernel_module(std::vector<ptx::Directive> directives = {}, std::vector<ptx::Statement> body = {},
                          std::string target = "sm_90a") {
  ptx::Module m;
  m.target = {std::move(target)};
  ptx::Function f;
  f.name = "k";
  f.params = {testing::pointer_param("A"), testing::param_of(ptx::Type::u64, "B"),
              testing::param_of(ptx::Type::u32, "n"), testing::param_of(ptx::Type::f32, "alpha"),
              testing::tensor_map_param("tmap")};
  f.directives = std::move(directives);
  body.push_back(ptx::Instruction::parse_opcode("ret"));
  f.body = ptx::Block{std::move(body)};
  m.items.push_back(f);
  return m;
}

class LaunchCheck : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> fake = std::make_shared<FakeBackend>();
  Device device{fake};
  Buffer a{device, 1024}, b{device, 1024};
  std::array<std::uint8_t, 128> descriptor{};
  LaunchConfig config{.grid = {4}, .block = {128}};

  std::vector<Arg> good_args() {
    return {a, Arg::pointer(b.address()), std::uint32_t{7}, 1.5f, Arg::bytes_of(descriptor)};
  }

  // Launches and expects a refusal with exactly `message`, and nothing sent to the backend.
  void expect_refused(Module& m, const LaunchConfig& c, const std::vector<Arg>& args, const std::string& message) {
    try {
      m.launch("k", c, args);
      ADD_FAILURE() << "launch accepted; expected: " << message;
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    EXPECT_TRUE(fake->launches.empty());
  }
  void expect_refused(const std::vector<Arg>& args, const std::string& message) {
    Module m(device, kernel_module());
    expect_refused(m, config, args, message);
  }
  void expect_refused(const LaunchConfig& c, const std::string& message, ptx::Module ir = kernel_module()) {
    Module m(device, std::move(ir));
    expect_refused(m, c, good_args(), message);
  }
};

TEST_F(LaunchCheck, PassesMatchingArgumentsAsTheirBytes) {
  Module m(device, kernel_module());
  descriptor[0] = 0xAB;
  descriptor[127] = 0xCD;
  Stream stream(device);
  m.launch("k", config, good_args(), &stream);
  ASSERT_EQ(fake->launches.size(), 1u);
  const RecordedLaunch& l = fake->launches[0];
  EXPECT_EQ(l.kernel, "k");
  EXPECT_EQ(l.config.grid, (Dim3{4, 1, 1}));
  EXPECT_EQ(l.stream, stream.handle());
  ASSERT_EQ(l.args.size(), 5u);
  DevicePtr pa, pb;
  std::uint32_t n;
  float alpha;
  std::memcpy(&pa, l.args[0].bytes.data(), 8);
  std::memcpy(&pb, l.args[1].bytes.data(), 8);
  std::memcpy(&n, l.args[2].bytes.data(), 4);
  std::memcpy(&alpha, l.args[3].bytes.data(), 4);
  EXPECT_EQ(l.args[0].bytes.size(), 8u);
  EXPECT_EQ(pa, a.address());
  EXPECT_EQ(pb, b.address());
  EXPECT_EQ(l.args[2].bytes.size(), 4u);
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(alpha, 1.5f);
  ASSERT_EQ(l.args[4].bytes.size(), 128u);
  EXPECT_EQ(l.args[4].bytes[0], std::byte{0xAB});
  EXPECT_EQ(l.args[4].bytes[127], std::byte{0xCD});
}

TEST_F(LaunchCheck, AcceptsA64BitIntegerForAPlainU64AndTheRawBitsOfAnyScalar) {
  Module m(device, kernel_module());
  m.launch("k", config,
           {a, std::uint64_t{0}, Arg::bytes_of(std::int32_t{-1}), Arg::bytes_of(0x3f800000u), Arg::bytes_of(descriptor)});
  EXPECT_EQ(fake->launches.size(), 1u);
}

TEST_F(LaunchCheck, RefusesAWrongArgumentCount) {
  expect_refused({a, b, std::uint32_t{1}, 1.0f},
                 "kernel 'k': takes 5 parameters (A, B, n, alpha, tmap); 4 arguments given");
}

TEST_F(LaunchCheck, RefusesAPointerForA32BitParameter) {
  expect_refused({a, b, b, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 2 'n' (.param .u32 n) is not a 64-bit integer and takes no pointer, got "
                 "pointer 0x10500");
}

TEST_F(LaunchCheck, RefusesAnIntegerOfAnotherWidth) {
  expect_refused({a, b, std::int64_t{7}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 2 'n' (.param .u32 n) takes a 32-bit integer, got i64 7");
  expect_refused({a, b, std::int16_t{-3}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 2 'n' (.param .u32 n) takes a 32-bit integer, got i16 -3");
}

TEST_F(LaunchCheck, RefusesAFloatForAnIntegerAndTheReverse) {
  expect_refused({a, b, 2.5f, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 2 'n' (.param .u32 n) takes an integer, got f32 2.5");
  expect_refused({a, b, std::uint32_t{1}, 1, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 3 'alpha' (.param .f32 alpha) takes a floating-point value, got i32 1");
  expect_refused({a, b, std::uint32_t{1}, 1.5, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 3 'alpha' (.param .f32 alpha) takes a float, got f64 1.5");
}

TEST_F(LaunchCheck, RefusesNullAndMisalignedPointers) {
  expect_refused({Arg::pointer(0), b, std::uint32_t{1}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 0 'A' (.param .u64 .ptr .global .align 16 A) takes a non-null pointer, got "
                 "pointer 0x0");
  expect_refused({Arg::pointer(a.address() + 4), b, std::uint32_t{1}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 0 'A' (.param .u64 .ptr .global .align 16 A) needs a pointer aligned to 16 "
                 "bytes, got pointer 0x10004");
  expect_refused({a, Arg::pointer(0), std::uint32_t{1}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 1 'B' (.param .u64 B) takes a non-null pointer, got pointer 0x0");
}

TEST_F(LaunchCheck, RefusesAnIntegerForAPtrParameter) {
  expect_refused({std::uint64_t{0x10000}, b, std::uint32_t{1}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 0 'A' (.param .u64 .ptr .global .align 16 A) takes a device pointer, got "
                 "u64 65536");
}

TEST_F(LaunchCheck, RefusesByteArraysOfTheWrongSize) {
  std::array<std::uint8_t, 64> small{};
  expect_refused({a, b, std::uint32_t{1}, 1.0f, Arg::bytes_of(small)},
                 "kernel 'k': parameter 4 'tmap' (.param .align 64 .b8 tmap[128]) takes 128 bytes, got 64 bytes");
  expect_refused({a, b, std::uint32_t{1}, 1.0f, std::uint64_t{1}},
                 "kernel 'k': parameter 4 'tmap' (.param .align 64 .b8 tmap[128]) takes Arg::bytes of 128 bytes, "
                 "got u64 1");
}

TEST_F(LaunchCheck, RefusesAnUnknownKernelOrAFunction) {
  ptx::Module ir = kernel_module();
  ptx::Function helper;
  helper.is_entry = false;
  helper.name = "helper";
  helper.body = ptx::Block{};
  ir.items.push_back(helper);
  Module m(device, ir);
  try {
    m.launch("nope", config, good_args());
    ADD_FAILURE() << "an unknown kernel was launched";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "no kernel 'nope' in the module; its kernels: k");
  }
  try {
    m.launch("helper", config, {});
    ADD_FAILURE() << "a .func was launched";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "no kernel 'helper' in the module ('helper' is a .func); its kernels: k");
  }
}

TEST_F(LaunchCheck, RefusesAStreamOfAnotherDevice) {
  Device other(std::make_shared<FakeBackend>());
  Stream foreign(other);
  Module m(device, kernel_module());
  try {
    m.launch("k", config, good_args(), &foreign);
    ADD_FAILURE() << "a stream of another device was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "kernel 'k' launched on a stream of another device");
  }
  EXPECT_TRUE(fake->launches.empty());
}

TEST_F(LaunchCheck, AsksForTheRawBitsOfAHalfPrecisionParameter) {
  ptx::Module ir = kernel_module();
  std::get<ptx::Function>(ir.items[0]).params[3] = testing::param_of(ptx::Type::f16, "alpha");
  Module m(device, ir);
  expect_refused(m, config, {a, b, std::uint32_t{1}, 1.0f, Arg::bytes_of(descriptor)},
                 "kernel 'k': parameter 3 'alpha' (.param .f16 alpha) takes the 2 raw bytes of its value "
                 "(Arg::bytes_of), got f32 1");
  m.launch("k", config, {a, b, std::uint32_t{1}, Arg::bytes_of(std::uint16_t{0x3c00}), Arg::bytes_of(descriptor)});
  EXPECT_EQ(fake->launches.size(), 1u);
}

TEST_F(LaunchCheck, RefusesEmptyAndOversizedGridsAndBlocks) {
  expect_refused(LaunchConfig{.grid = {0}, .block = {32}}, "kernel 'k': grid (0, 1, 1) has a zero dimension");
  expect_refused(LaunchConfig{.grid = {1}, .block = {32, 0}}, "kernel 'k': block (32, 0, 1) has a zero dimension");
  expect_refused(LaunchConfig{.grid = {1, 70000}, .block = {32}},
                 "kernel 'k': grid (1, 70000, 1) exceeds the limits (2147483647, 65535, 65535)");
  expect_refused(LaunchConfig{.grid = {1}, .block = {2048}},
                 "kernel 'k': block (2048, 1, 1) exceeds the limits (1024, 1024, 64)");
  expect_refused(LaunchConfig{.grid = {1}, .block = {32, 32, 2}},
                 "kernel 'k': block (32, 32, 2) has 2048 threads; the device allows at most 1024");
}

TEST_F(LaunchCheck, HonoursTheKernelsThreadDirectives) {
  auto directive = [](std::string name, std::vector<std::int64_t> values) {
    ptx::Directive d{.name = std::move(name), .comma_separated = true};
    for (auto v : values) d.args.push_back(ptx::Operand::imm(v));
    return d;
  };
  expect_refused(LaunchConfig{.grid = {1}, .block = {64}},
                 "kernel 'k': block (64, 1, 1) differs from the kernel's .reqntid (128, 1, 1)",
                 kernel_module({directive("reqntid", {128, 1, 1})}));
  expect_refused(LaunchConfig{.grid = {1}, .block = {32, 8}},
                 "kernel 'k': block (32, 8, 1) has 256 threads, more than the kernel's .maxntid allows (128)",
                 kernel_module({directive("maxntid", {128, 1, 1})}));
}

TEST_F(LaunchCheck, RefusesMoreSharedMemoryThanTheDeviceAllows) {
  expect_refused(LaunchConfig{.grid = {1}, .block = {32}, .dynamic_shared_bytes = 300000},
                 "kernel 'k': 300000 bytes of dynamic shared memory plus 0 static exceed the 232448 bytes per "
                 "block that device 'Fake H100' allows");
  // Static shared memory counts: a 4 KB array in the body, and a module-scope
  // one the body names (an unreferenced one does not count).
  ptx::Module ir = kernel_module(
      {}, {ptx::Variable{.space = ptx::Space::shared, .type = ptx::Type::b8, .name = "tile", .align = 16, .dims = {4096}}});
  ptx::Instruction use = ptx::Instruction::parse_opcode("mov.u64");
  use.operands = {ptx::Operand::reg("%rd1"), ptx::Operand::symbol("staged")};
  std::get<ptx::Function>(ir.items[0]).body->body.insert(std::get<ptx::Function>(ir.items[0]).body->body.begin(), use);
  ir.items.insert(ir.items.begin(),
                  ptx::Variable{.space = ptx::Space::shared, .type = ptx::Type::b32, .name = "staged", .dims = {256}});
  ir.items.insert(ir.items.begin(),
                  ptx::Variable{.space = ptx::Space::shared, .type = ptx::Type::b8, .name = "unused", .dims = {99999}});
  EXPECT_EQ(static_shared_bytes(ir, std::get<ptx::Function>(ir.items.back())), 4096 + 1024);
  expect_refused(LaunchConfig{.grid = {1}, .block = {32}, .dynamic_shared_bytes = 228000},
                 "kernel 'k': 228000 bytes of dynamic shared memory plus 5120 static exceed the 232448 bytes per "
                 "block that device 'Fake H100' allows",
                 ir);
}

TEST_F(LaunchCheck, AcceptsSharedMemoryUpToTheOptInLimit) {
  Module m(device, kernel_module());
  m.launch("k", LaunchConfig{.grid = {1}, .block = {32}, .dynamic_shared_bytes = 232448}, good_args());
  ASSERT_EQ(fake->launches.size(), 1u);
  EXPECT_EQ(fake->launches[0].config.dynamic_shared_bytes, 232448u);
}

TEST_F(LaunchCheck, ChecksClusters) {
  expect_refused(LaunchConfig{.grid = {3}, .block = {32}, .cluster = {2}},
                 "kernel 'k': cluster (2, 1, 1) does not divide the grid (3, 1, 1)");
  expect_refused(LaunchConfig{.grid = {16}, .block = {32}, .cluster = {16}},
                 "kernel 'k': cluster (16, 1, 1) has 16 CTAs; at most 8 (the portable cluster size) are accepted");
  expect_refused(LaunchConfig{.grid = {16}, .block = {32}, .cluster = {0, 1, 1}},
                 "kernel 'k': cluster (0, 1, 1) has a zero dimension");
  Module m(device, kernel_module());
  m.launch("k", LaunchConfig{.grid = {8, 2}, .block = {32}, .cluster = {4, 2}}, good_args());
  ASSERT_EQ(fake->launches.size(), 1u);
  EXPECT_EQ(fake->launches[0].config.cluster, (Dim3{4, 2, 1}));
}

TEST_F(LaunchCheck, RefusesClustersBeforeHopper) {
  fake->props.name = "Fake A100";
  fake->props.compute_capability_major = 8;
  fake->fake_target = ptx::Target::sm_80;
  expect_refused(LaunchConfig{.grid = {2}, .block = {32}, .cluster = {2}},
                 "kernel 'k': cluster (2, 1, 1) needs compute capability 9.0 or newer; device 'Fake A100' is 8.0",
                 kernel_module({}, {}, "sm_80"));
  expect_refused(LaunchConfig{.grid = {2}, .block = {32}, .overlap_previous = true},
                 "kernel 'k': overlap_previous (programmatic dependent launch) needs compute capability 9.0 or "
                 "newer; device 'Fake A100' is 8.0",
                 kernel_module({}, {}, "sm_80"));
}

TEST(ModuleTarget, RefusesAModuleTheDeviceCannotRun) {
  auto fake = std::make_shared<FakeBackend>();
  fake->props.name = "Fake A100";
  fake->fake_target = ptx::Target::sm_80;
  Device device(fake);
  ptx::Module ir;
  ir.target = {"sm_90a"};
  try {
    Module m(device, ir);
    ADD_FAILURE() << "an sm_90a module was loaded on an sm_80 device";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "module for sm_90a cannot run on device 'Fake A100' (target sm_80)");
  }
  fake->fake_target = ptx::Target::sm_100a;
  ir.target = {"sm_80"};
  EXPECT_NO_THROW(Module(device, ir));  // sm_80 code runs on later GPUs
}

}  // namespace
}  // namespace warpforge::runtime
