// The AMD section's example of README.md: it builds, runs on the simulator,
// and compiles with LLVM.
#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

TEST(AmdReadme, ScaleSnippetRunsAndCompiles) {
  Kernel k("scale", Target::gfx942, 64);
  Val x = k.param_ptr("x");
  Val n = k.param_i32("n");
  Val i = k.workitem_id(0);
  k.if_then(i < n, [&] {
    Val p = k.ptr_add(x, i << 2);
    k.store(p, k.fmul(k.load(Type::f32, p), 2.0f));
  });
  std::string ir = to_llvm_ir(k.ir(), k.target());
  EXPECT_CONTAINS(ir, "icmp ult i32");
  EXPECT_CONTAINS(ir, "fmul float");

  std::normal_distribution<float> normal;
  std::vector<float> host(40);
  for (auto& v : host) v = normal(rng());
  sim::GlobalMemory mem;
  std::uint64_t dx = upload(mem, host);
  sim::amdgpu::run(k.ir(), {}, {dx, 40}, mem);  // lanes 40-63 stay out of the 40-float buffer
  std::vector<float> got = download<float>(mem, dx, host.size());
  for (std::size_t j = 0; j < host.size(); ++j) EXPECT_EQ(got[j], host[j] * 2.0f) << j;

  std::string dis = compiled_disassembly(k.ir(), k.target());
  EXPECT_GT(count(dis, "global_store_dword"), 0) << dis;
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
