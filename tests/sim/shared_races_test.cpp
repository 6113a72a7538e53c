// Shared-memory race checking (SimOptions::check_shared_races,
// src/sim/shared_races.hpp): accesses of one byte by two warps, one a
// write, with no barrier or mbarrier wait between them are reported with
// both instructions; the orderings bar.sync, bar.arrive/bar.sync on a named
// barrier and an mbarrier arrive/try_wait give are not.
#include "hopper_kernels.hpp"
#include "sim_harness.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::sim::testing {
namespace {

// Two warps. Warp 1 writes lane + $VALUE to its lane's word of `buf`, then
// runs $SYNC1; warp 0 runs $SYNC0, then reads the word warp 1's lane wrote
// and stores it to `out`: $SYNC1 and $SYNC0 are each warp's part of the
// synchronization (or none).
const char* kExchange = R"(
.visible .entry exchange(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 buf[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r5, buf;
  add.u32 %r6, %r5, %r3;
  mov.u32 %r7, bar;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra INIT;
  mbarrier.init.shared::cta.b64 [%r7], 32;
INIT:
  bar.sync 0;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra READER;
  add.u32 %r4, %r2, $VALUE;
  st.shared.u32 [%r6], %r4;
  $SYNC1
  bra DONE;
READER:
  $SYNC0
  ld.shared.u32 %r8, [%r6];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
DONE:
  ret;
}
)";

class SharedRacesTest : public SimTest {
 protected:
  SimBackend checked{SimOptions{.worker_threads = 2, .check_shared_races = true}};

  std::string kernel(const std::string& sync1, const std::string& sync0, const std::string& value = "100") {
    return ptx_module(fill(kExchange, {{"SYNC1", sync1}, {"SYNC0", sync0}, {"VALUE", value}}));
  }
  // Runs the kernel on `sim` with 64 threads; the message of its SimError, or "".
  std::string run_on(SimBackend& backend, const std::string& text, std::vector<std::uint32_t>* result = nullptr,
                     const std::string& name = "exchange", std::uint32_t threads = 64) {
    const runtime::DevicePtr out = backend.allocate(32 * 4);
    try {
      auto loaded = backend.load(ptx::parse(text));
      backend.launch(*loaded, name, {.grid = {1}, .block = {threads}}, {arg_u64(out)}, nullptr);
    } catch (const SimError& e) {
      return e.what();
    }
    if (result) {
      result->resize(32);
      backend.copy_to_host(result->data(), out, 32 * 4, nullptr);
    }
    return "";
  }
};

TEST_F(SharedRacesTest, ReadWithoutABarrierAfterAnotherWarpsWriteIsReported) {
  const std::string text = kernel("", "");
  const std::string msg = run_on(checked, text);
  // Whichever warp runs first, the second access reports both.
  EXPECT_NE(msg.find("shared-memory race: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("with no barrier or mbarrier wait ordering them"), std::string::npos) << msg;
  const auto store = line_of(ptx::parse(text), "st.shared.u32 [%r6], %r4");
  const auto load = line_of(ptx::parse(text), "ld.shared.u32 %r8, [%r6]");
  EXPECT_NE(msg.find("PTX line " + std::to_string(store)), std::string::npos) << msg;
  EXPECT_NE(msg.find("PTX line " + std::to_string(load)), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("by warp 1, and a read of it by warp 0") != std::string::npos ||
              msg.find("by warp 0, and a write of it by warp 1") != std::string::npos)
      << msg;
  EXPECT_EQ(run_on(sim, text), "") << "without the option, nothing is checked";
}

TEST_F(SharedRacesTest, BarrierBetweenTheAccessesOrdersThem) {
  std::vector<std::uint32_t> got;
  EXPECT_EQ(run_on(checked, kernel("bar.sync 1, 64;", "bar.sync 1, 64;"), &got), "");
  for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], 100 + lane);
}

TEST_F(SharedRacesTest, NamedBarrierArrivalOrdersTheProducersWrite) {
  std::vector<std::uint32_t> got;
  EXPECT_EQ(run_on(checked, kernel("bar.arrive 2, 64;", "bar.sync 2, 64;"), &got), "");
  for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], 100 + lane);
}

TEST_F(SharedRacesTest, MbarrierArriveAndWaitOrderTheAccesses) {
  const std::string wait = R"(
  WAIT0:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r7], 0;
    @!%p2 bra WAIT0;)";
  std::vector<std::uint32_t> got;
  EXPECT_EQ(run_on(checked, kernel("mbarrier.arrive.shared::cta.b64 %rd1, [%r7];", wait), &got), "");
  for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], 100 + lane);
}

TEST_F(SharedRacesTest, WarpsStoringTheSameBytesDoNotRaceButDifferentOnesDo) {
  // Warp 0 stores lane + 7 to the word warp 1 stores lane + VALUE to, before
  // the barrier both then pass.
  const std::string first = "add.u32 %r9, %r2, 7;\n  st.shared.u32 [%r6], %r9;\n  bar.sync 1, 64;";
  std::vector<std::uint32_t> got;
  EXPECT_EQ(run_on(checked, kernel("bar.sync 1, 64;", first, "7"), &got), "");
  for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], 7 + lane);
  const std::string msg = run_on(checked, kernel("bar.sync 1, 64;", first, "8"));
  EXPECT_NE(msg.find("shared-memory race: a write of shared byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find(", and a write of it by warp "), std::string::npos) << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
