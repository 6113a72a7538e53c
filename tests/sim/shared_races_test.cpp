// Shared-memory race checking (SimOptions::check_shared_races,
// src/sim/shared_races.hpp): accesses of one byte by two warps, one a
// write, with no barrier or mbarrier wait between them are reported with
// both instructions; the orderings bar.sync, bar.arrive/bar.sync on a named
// barrier and an mbarrier arrive/try_wait give are not. A wgmma.mma_async
// reads its shared operands until the wgmma.wait_group that retires it.
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

TEST_F(SharedRacesTest, AReadAfterItsOwnWriteOfTheSameValueAsAnothersDoesNotRace) {
  // Warp 0 stores lane + 7 to the word warp 1 stores lane + VALUE to, with
  // nothing ordering the two, then reads it: with equal values it sees them
  // whichever landed last.
  const std::string own = "add.u32 %r9, %r2, 7;\n  st.shared.u32 [%r6], %r9;";
  std::vector<std::uint32_t> got;
  EXPECT_EQ(run_on(checked, kernel("", own, "7"), &got), "");
  for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], 7 + lane);
  EXPECT_NE(run_on(checked, kernel("", own, "8")).find("shared-memory race: "), std::string::npos);
}

// Warpgroup 0 (warps 0-3) runs one wgmma m64n8k16 on A (2 KiB at `buf`) and
// B (256 bytes after it), K-major without swizzle, after $BEFORE, then
// $CONSUMER; warp 4
// runs $PRODUCER, which may store lane + 1 to B's first 128 bytes with
// STORE. %p3: thread 0; %r2: the mbarrier (expecting one arrival).
const char* kStage = R"(
.visible .entry stage(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b32 %d<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 buf[2304];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, buf;
  and.b32 %r4, %r1, 31;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r3, 2048;
  add.u32 %r6, %r6, %r5;
  add.u32 %r7, %r4, 1;
  setp.eq.u32 %p3, %r1, 0;
  @!%p3 bra INIT;
  mbarrier.init.shared::cta.b64 [%r2], 1;
INIT:
  bar.sync 0;
  setp.ge.u32 %p1, %r1, 128;
  @%p1 bra PRODUCER;
  cvt.u64.u32 %rd1, %r3;
  shr.u64 %rd1, %rd1, 4;
  or.b64 %rd1, %rd1, 0x0000001000080000;
  add.u64 %rd2, %rd1, 128;
  $BEFORE
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd2, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  $CONSUMER
  bra DONE;
PRODUCER:
  $PRODUCER
DONE:
  ret;
}
)";

class WgmmaReadRacesTest : public SharedRacesTest {
 protected:
  static constexpr const char* kStore = "st.shared.u32 [%r6], %r7;";
  static constexpr const char* kWait = "wgmma.wait_group.sync.aligned 0;";
  static constexpr const char* kArrive = "@%p3 mbarrier.arrive.shared::cta.b64 %rd3, [%r2];";
  static constexpr const char* kAwait = R"(
  WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;)";

  std::string stage(const std::string& consumer, const std::string& producer, const std::string& before = "") {
    return ptx_module(fill(kStage, {{"BEFORE", before}, {"CONSUMER", consumer}, {"PRODUCER", producer}}));
  }
  // The message of running `text`, which must report a race between the
  // wgmma and the store.
  void expect_race(const std::string& text) {
    const std::string msg = run_on(checked, text, nullptr, "stage", 160);
    const ptx::Module m = ptx::parse(text);
    EXPECT_NE(msg.find("shared-memory race: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("wgmma.mma_async at PTX line " + std::to_string(line_of(m, "wgmma.mma_async"))),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(m, kStore))), std::string::npos) << msg;
    EXPECT_NE(msg.find("st.shared.u32 [%r6], %r7)"), std::string::npos) << msg;
  }
};

TEST_F(WgmmaReadRacesTest, AStoreToBBeforeTheWaitGroupRetiresTheWgmmaIsReported) {
  // The consumer releases the stage before its wait: the producer's store
  // lands while the wgmma may still read B.
  expect_race(stage(std::string(kArrive) + "\n  " + kWait, std::string(kAwait) + "\n  " + kStore));
  expect_race(stage(std::string("bar.arrive 1, 160;\n  ") + kWait, std::string("bar.sync 1, 160;\n  ") + kStore));
  // Warp 0's own store between the issue and the wait.
  const std::string own = stage(std::string("@%p3 ") + kStore + "\n  " + kWait, "");
  expect_race(own);
  EXPECT_NE(run_on(checked, own, nullptr, "stage", 160).find("warp 0 itself wrote it"), std::string::npos);
}

TEST_F(WgmmaReadRacesTest, AStoreOrderedAfterTheWaitGroupIsNot) {
  // One thread's arrival after its warp's wait releases the stage for the
  // whole warpgroup (the wgmma is the warpgroup's), as CUTLASS's
  // consumer_release does; so does a named barrier all four warps arrive at.
  const std::string mbarrier = stage(std::string(kWait) + "\n  " + kArrive, std::string(kAwait) + "\n  " + kStore);
  EXPECT_EQ(run_on(checked, mbarrier, nullptr, "stage", 160), "");
  EXPECT_EQ(run_on(checked, stage(std::string(kWait) + "\n  bar.arrive 1, 160;", std::string("bar.sync 1, 160;\n  ") + kStore),
                   nullptr, "stage", 160),
            "");
}

TEST_F(WgmmaReadRacesTest, AWarpsReadsBeforeItsIssueAreOrderedBeforeAnotherWarpsRelease) {
  // Every consumer thread loads its word of B; thread 0 alone releases the
  // stage after its warp's wait. Loads before the issue are ordered before
  // the release (the wgmma, taking all four warps' registers, completes
  // after all four issued it); a load after the issue is not.
  const std::string load = "ld.shared.u32 %r8, [%r6];";
  const std::string release = std::string(kWait) + "\n  " + kArrive;
  const std::string produce = std::string(kAwait) + "\n  " + kStore;
  EXPECT_EQ(run_on(checked, stage(release, produce, load), nullptr, "stage", 160), "");
  const std::string msg = run_on(checked, stage(load + "\n  " + release, produce), nullptr, "stage", 160);
  EXPECT_NE(msg.find("shared-memory race: a write of shared byte 0x"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(ld.shared.u32 %r8, [%r6])"), std::string::npos) << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
