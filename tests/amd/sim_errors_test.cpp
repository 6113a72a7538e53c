// The simulator's refusals: bad accesses name the kernel, the instruction, the
// workgroup, wave and lane, and the address; bad launches name the argument.
#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

std::string sim_error(const KernelIR& kernel, sim::amdgpu::Grid grid, const sim::amdgpu::Args& args,
                      sim::GlobalMemory& mem) {
  try {
    sim::amdgpu::run(kernel, grid, args, mem);
  } catch (const SimError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SimError";
  return "";
}

// Each work-item loads element (tid + shift) of p and stores it back.
KernelIR shifted_copy() {
  AmdKernel k("shifted_copy", Target::gfx942, 64);
  Val p = k.param_ptr("p");
  Val shift = k.param_i32("shift");
  Val tid = k.workitem_id(0);
  k.store(k.ptr_add(p, tid * 4), k.load(Type::f32, k.ptr_add(p, (tid + shift) * 4)));
  return k.ir();
}

TEST(AmdSimErrors, GlobalLoadPastTheAllocation) {
  sim::GlobalMemory mem;
  std::uint64_t p = upload(mem, std::vector<float>(64, 1.0f));
  std::string what = sim_error(shifted_copy(), {1, 2, 1}, {p, 3}, mem);
  EXPECT_CONTAINS(what, "amdgpu kernel 'shifted_copy', instruction `%");
  EXPECT_CONTAINS(what, "= load %");
  EXPECT_CONTAINS(what,
                  "workgroup (0,0,0), wave 0 lane 61 (work-item 61): global load of 4 bytes at " +
                      sim::hex(p + 256));
  EXPECT_CONTAINS(what, "is outside every allocation: nearest is allocation");
  EXPECT_CONTAINS(what, "0 bytes past its end");
}

TEST(AmdSimErrors, MisalignedGlobalAccess) {
  AmdKernel k("misaligned", Target::gfx942, 64);
  Val p = k.param_ptr("p");
  k.store(k.ptr_add(p, 4), k.load(Type::v4i32, k.ptr_add(p, k.workitem_id(0) * 16 + 4)));
  sim::GlobalMemory mem;
  std::uint64_t dp = upload(mem, std::vector<float>(512, 1.0f));
  std::string what = sim_error(k.ir(), {}, {dp}, mem);
  EXPECT_CONTAINS(what, "lane 0 (work-item 0): load of 16 bytes at " + sim::hex(dp + 4) +
                            " is misaligned: the address must be a multiple of 16");
}

TEST(AmdSimErrors, LdsAccessPastTheKernelsLds) {
  AmdKernel k("lds_overrun", Target::gfx942, 128);
  Val lds = k.lds(256);
  Val tid = k.workitem_id(0);
  k.store(k.ptr_add(lds, tid * 4), tid);
  sim::GlobalMemory mem;
  std::string what = sim_error(k.ir(), {2, 1, 1}, {}, mem);
  EXPECT_CONTAINS(what, "amdgpu kernel 'lds_overrun'");
  EXPECT_CONTAINS(
      what,
      "workgroup (0,0,0), wave 1 lane 0 (work-item 64): LDS store of 4 bytes at offset 256 is "
      "outside the kernel's 256-byte LDS");
}

TEST(AmdSimErrors, RuntimeShiftOfThirtyTwoOrMore) {
  AmdKernel k("wide_shift", Target::gfx942, 64);
  Val p = k.param_ptr("p");
  Val amount = k.param_i32("amount");
  k.store(p, k.workitem_id(0) << amount);
  sim::GlobalMemory mem;
  std::uint64_t dp = upload(mem, std::vector<int>(1, 0));
  EXPECT_CONTAINS(sim_error(k.ir(), {}, {dp, 40}, mem),
                  "shift amount 40 is not below 32 (LLVM: poison)");
}

TEST(AmdSimErrors, LaunchArgumentsAndGrid) {
  sim::GlobalMemory mem;
  std::uint64_t p = upload(mem, std::vector<float>(64, 1.0f));
  EXPECT_CONTAINS(sim_error(shifted_copy(), {}, {p}, mem),
                  "amdgpu kernel 'shifted_copy': 1 arguments for 2 parameters");
  EXPECT_CONTAINS(sim_error(shifted_copy(), {}, {p, 1ull << 33}, mem),
                  "argument 1 (shift, i32) = 8589934592 does not fit in 32 bits");
  EXPECT_CONTAINS(sim_error(shifted_copy(), {}, {p + 4096, 0}, mem),
                  "argument 0 (p) = " + sim::hex(p + 4096) + " is not inside an allocation");
  EXPECT_CONTAINS(sim_error(shifted_copy(), {0, 1, 1}, {p, 0}, mem),
                  "grid (0,1,1) is empty; every dimension must be at least 1");
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
