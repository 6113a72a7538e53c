// PTX's block scoping in the simulator: registers declared in a `{ }` block
// shadow the function's, sibling blocks each place a label of the same name,
// and the outer registers hold their values across the blocks.
#include "sim_harness.hpp"
#include "warpforge/ptx/parser.hpp"

namespace warpforge::sim::testing {
namespace {

TEST_F(SimTest, ShadowedRegistersAndSiblingLabelsFollowTheirBlocks) {
  const ptx::Module m = ptx::parse(R"(
  .version 8.0
  .target sm_90a
  .address_size 64
  .visible .entry scopes(.param .u64 out)
  {
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, 1000;
    setp.ne.u32 %p1, %r1, 3;
    {
      .reg .b32 %r3;
      .reg .pred %p<2>;
      mov.u32 %r3, 0;
    waitLoop:
      add.u32 %r3, %r3, 1;
      setp.lt.u32 %p1, %r3, %r1;
      @%p1 bra waitLoop;
      mov.u32 %r4, %r3;
    }
    {
      .reg .b32 %r3;
      .reg .pred %p1;
      mov.u32 %r3, 0;
    waitLoop:
      add.u32 %r3, %r3, 2;
      setp.lt.u32 %p1, %r3, 6;
      @%p1 bra waitLoop;
      add.u32 %r4, %r4, %r3;
    }
    add.u32 %r3, %r3, %r4;
    selp.u32 %r5, 1, 0, %p1;
    mul.wide.u32 %rd2, %r1, 8;
    add.u64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r3, %r5};
    ret;
  }
  )");
  auto out = upload(std::vector<std::uint32_t>(64, 0xDEADBEEFu));  // poisoned
  auto loaded = sim.load(m);
  sim.launch(*loaded, "scopes", {.grid = {1, 1, 1}, .block = {32, 1, 1}}, {arg_u64(out)}, nullptr);
  auto h = download<std::uint32_t>(out, 64);
  for (std::uint32_t t = 0; t < 32; ++t) {
    // The first block counts to max(tid, 1), the second to 6; the outer %r3
    // kept 1000 and the outer %p1 (tid != 3) survived both blocks' %p1.
    EXPECT_EQ(h[2 * t], 1000 + std::max(t, 1u) + 6) << t;
    EXPECT_EQ(h[2 * t + 1], t != 3 ? 1u : 0u) << t;
  }
}

}  // namespace
}  // namespace warpforge::sim::testing
