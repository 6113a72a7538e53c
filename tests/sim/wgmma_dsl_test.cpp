// wgmma.mma_async built with the DSL and run on the simulator, against a
// double-precision reference: e4m3/e5m2 with A in shared memory, and A in
// registers (bf16, f16, e4m3, mixed e4m3/e5m2) laid out by layout/, at
// several N. The kernel and its inputs are wgmma_dsl_kernel.hpp's.
#include "sim_harness.hpp"
#include "wgmma_dsl_kernel.hpp"

// Outside warpforge::sim, whose Kernel is the decoded form.
namespace warpforge::wgmma_dsl_testing {
namespace {

using sim::testing::arg_u64;

class WgmmaDslTest : public sim::testing::SimTest {
 protected:
  std::mt19937 rng{std::random_device{}()};
};

TEST_F(WgmmaDslTest, EachFormMatchesTheReference) {
  for (const DslWgmmaCase& c : dsl_wgmma_cases()) {
    SCOPED_TRACE(c.name);
    const DslWgmmaInputs in = dsl_wgmma_inputs(c, rng);
    const std::size_t words = 128 * static_cast<std::size_t>(c.n / 2);
    auto out = upload(std::vector<std::uint32_t>(words, 0xFFFFFFFFu));
    const auto& d = in.descriptors;
    auto loaded = sim.load(dsl_wgmma_kernel(c, in.image.size()));
    sim.launch(*loaded, "wg_dsl", {.grid = {1}, .block = {128}},
               {arg_u64(upload(in.image)), arg_u64(upload(in.fragments)), arg_u64(out), arg_u64(d[0]), arg_u64(d[1]),
                arg_u64(d[2]), arg_u64(d[3])},
               nullptr);
    const auto got = download<float>(out, words);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < c.n / 2; ++i) {
        const Expected want = expected(c, in, t, i);
        // Each of the two wgmma cuts its terms and its sum as the H100 does
        // (src/sim/tensor_core_sum.hpp): 16-bit inputs to 25 bits, well
        // within 2^-20 of the sum of |products|; FP8 inputs to 13 bits, at
        // most 33 cut terms and one cut sum per wgmma, each below 2^-13 of it.
        const double bound = ptx::bits(c.a_type) == 8 ? 2 * 34 * 0x1p-13 : 0x1p-20;
        ASSERT_NEAR(got[static_cast<std::size_t>(t * (c.n / 2) + i)], want.value, bound * std::max(1.0, want.magnitude))
            << "thread " << t << " accumulator " << i;
      }
  }
}

}  // namespace
}  // namespace warpforge::wgmma_dsl_testing
