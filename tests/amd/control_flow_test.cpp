// Divergent control flow on the wave64 simulator: if / else run each side with
// the lanes that take it, loops run until the last lane leaves, and waves of a
// workgroup meet at barriers even when one has ended.
#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

// out[i] = sum of j for j in [0, trips[i]) stepping 3, plus 1000 if trips[i] is
// odd else minus 1000; the else side also counts its lanes into LDS.
TEST(AmdControlFlowOnSim, DivergentIfElseAndPerLaneLoopTripCounts) {
  constexpr int kGroup = 96;  // one full wave and one half wave
  AmdKernel k("divergent", Target::gfx942, kGroup);
  Val trips = k.param_ptr("trips"), out = k.param_ptr("out");
  Val tid = k.workitem_id(0);
  Val n = k.load(Type::i32, k.ptr_add(trips, tid * 4));
  Val sum = k.copy(0, Type::i32);
  k.for_range(0, n, 3, [&](Val j) { k.mov(sum, sum + j); });
  k.if_else((n & 1) == 1, [&] { k.mov(sum, sum + 1000); }, [&] { k.mov(sum, sum - 1000); });
  k.store(k.ptr_add(out, tid * 4), sum);

  std::uniform_int_distribution<std::int32_t> trip(0, 40);
  std::vector<std::int32_t> t(kGroup);
  for (auto& x : t) x = trip(rng());
  t[5] = 0;  // a lane that never enters the loop
  sim::GlobalMemory mem;
  std::uint64_t dout = upload(mem, std::vector<std::int32_t>(kGroup, -7));
  sim::amdgpu::run(k.ir(), {}, {upload(mem, t), dout}, mem);
  std::vector<std::int32_t> got = download<std::int32_t>(mem, dout, kGroup);
  for (int i = 0; i < kGroup; ++i) {
    std::int32_t want = 0;
    for (int j = 0; j < t[i]; j += 3) want += j;
    want += (t[i] & 1) ? 1000 : -1000;
    EXPECT_EQ(got[i], want) << "work-item " << i << " trips " << t[i];
  }
}

// Wave 1 exits early; wave 0 still passes its barrier and reads what it wrote.
TEST(AmdControlFlowOnSim, BarrierDoesNotWaitForEndedWaves) {
  AmdKernel k("early_exit", Target::gfx942, 128);
  Val out = k.param_ptr("out");
  Val tid = k.workitem_id(0);
  Val lds = k.lds(64 * 4);
  k.if_then(tid < 64, [&] {
    k.store(k.ptr_add(lds, tid * 4), tid * 3);
    k.barrier();
    k.store(k.ptr_add(out, tid * 4), k.load(Type::i32, k.ptr_add(lds, k.sub(63 * 4, tid * 4))));
  });
  sim::GlobalMemory mem;
  std::uint64_t dout = upload(mem, std::vector<std::int32_t>(64, -1));
  sim::amdgpu::run(k.ir(), {}, {dout}, mem);
  std::vector<std::int32_t> got = download<std::int32_t>(mem, dout, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[i], (63 - i) * 3) << i;
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
