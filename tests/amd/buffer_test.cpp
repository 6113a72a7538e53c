// Buffer resource descriptors and raw buffer loads / stores (x1, x2, x4): on
// the simulator, dwords past num_records read as zero and are not written; a
// descriptor reaching past its allocation is reported; LLVM compiles each
// width to its buffer instruction.
#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::amdgpu::testing {
namespace {

// Lane l: loads src at byte offsets 4l (x1), 8l (x2) and 16l (x4) through a
// descriptor of `src_bytes`, writes them plainly to out (7 dwords per lane),
// and stores them through a descriptor of `dst_bytes` over dst1 / dst2 / dst4
// at the same offsets.
KernelIR buffer_kernel(Target t) {
  AmdKernel k("buffer_probe", t, 64);
  Val src = k.param_ptr("src"), out = k.param_ptr("out");
  Val dst1 = k.param_ptr("dst1"), dst2 = k.param_ptr("dst2"), dst4 = k.param_ptr("dst4");
  Val src_bytes = k.param_i32("src_bytes"), dst_bytes = k.param_i32("dst_bytes");
  Val lane = k.workitem_id(0);
  Val rsrc = k.make_rsrc(src, src_bytes);
  Val x1 = k.buffer_load(Type::i32, rsrc, lane * 4);
  Val x2 = k.buffer_load(Type::v2i32, rsrc, lane * 8);
  Val x4 = k.buffer_load(Type::v4i32, rsrc, lane * 16);
  Val row = k.ptr_add(out, lane * 32);
  k.store(row, x4);
  k.store(k.ptr_add(row, 16), x2);
  k.store(k.ptr_add(row, 24), x1);
  k.buffer_store(k.make_rsrc(dst1, dst_bytes), lane * 4, x1);
  k.buffer_store(k.make_rsrc(dst2, dst_bytes), lane * 8, x2);
  k.buffer_store(k.make_rsrc(dst4, dst_bytes), lane * 16, x4);
  return k.ir();
}

constexpr std::uint32_t kPoison = 0xDEADBEEFu;

TEST(AmdBufferOnSim, OutOfRangeDwordsReadZeroAndAreNotWritten) {
  std::uniform_int_distribution<std::uint32_t> any(1);
  std::vector<std::uint32_t> src(256);
  for (auto& s : src) s = any(rng());
  // Ranges that end inside a dword's lanes, not at a multiple of 16 or 8.
  const std::uint32_t src_bytes = 4 * (100 + any(rng()) % 60) + 2 * (any(rng()) % 2);
  const std::uint32_t dst_bytes = 4 * (20 + any(rng()) % 100);
  sim::GlobalMemory mem;
  std::uint64_t dsrc = upload(mem, src),
                out = upload(mem, std::vector<std::uint32_t>(64 * 8, kPoison));
  std::uint64_t d1 = upload(mem, std::vector<std::uint32_t>(64, kPoison));
  std::uint64_t d2 = upload(mem, std::vector<std::uint32_t>(128, kPoison));
  std::uint64_t d4 = upload(mem, std::vector<std::uint32_t>(256, kPoison));
  sim::amdgpu::run(buffer_kernel(Target::gfx942), {}, {dsrc, out, d1, d2, d4, src_bytes, dst_bytes},
                   mem);
  // The value of source dword i as a buffer read with range src_bytes gives it.
  auto read = [&](std::uint32_t i) { return 4 * i + 4 <= src_bytes ? src[i] : 0u; };
  std::vector<std::uint32_t> got = download<std::uint32_t>(mem, out, 64 * 8);
  for (std::uint32_t l = 0; l < 64; ++l) {
    const std::uint32_t want[8] = {read(4 * l), read(4 * l + 1), read(4 * l + 2), read(4 * l + 3),
                                   read(2 * l), read(2 * l + 1), read(l),         kPoison};
    for (int w = 0; w < 8; ++w)
      ASSERT_EQ(got[l * 8 + w], want[w])
          << "lane " << l << " dword " << w << " range " << src_bytes;
  }
  // Stores: dword i of each destination is written (with the loaded value) iff in range.
  for (auto [dst, words] : {std::pair{d1, 64u}, {d2, 128u}, {d4, 256u}}) {
    std::vector<std::uint32_t> d = download<std::uint32_t>(mem, dst, words);
    for (std::uint32_t i = 0; i < words; ++i)
      ASSERT_EQ(d[i], 4 * i + 4 <= dst_bytes ? read(i) : kPoison)
          << words << "-dword destination, dword " << i;
  }
}

TEST(AmdBufferOnSim, DescriptorRangeBeyondItsAllocationIsReported) {
  sim::GlobalMemory mem;
  std::uint64_t small = upload(mem, std::vector<std::uint32_t>(16, 1));  // 64 bytes
  std::uint64_t big = upload(mem, std::vector<std::uint32_t>(256, 0));
  try {
    sim::amdgpu::run(buffer_kernel(Target::gfx942), {}, {small, big, big, big, big, 1024, 0}, mem);
    FAIL() << "no error";
  } catch (const SimError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("buffer_probe"), std::string::npos) << what;
    EXPECT_NE(what.find("buffer load (in the descriptor's range) of 4 bytes at 0x"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("lane 16"), std::string::npos) << what;  // the first lane past 64 bytes
    EXPECT_NE(what.find("past its end"), std::string::npos) << what;
  }
}

class AmdBufferCompiles : public ::testing::TestWithParam<Target> {};

TEST_P(AmdBufferCompiles, EachWidthBecomesItsBufferInstruction) {
  Target t = GetParam();
  std::string dis = compiled_disassembly(buffer_kernel(t), t);
  for (const char* want : {"buffer_load_dword ", "buffer_load_dwordx2 ", "buffer_load_dwordx4 ",
                           "buffer_store_dword ", "buffer_store_dwordx2 ", "buffer_store_dwordx4 "})
    EXPECT_EQ(count(dis, want), 1) << want << " on " << to_string(t) << ":\n" << dis;
}

INSTANTIATE_TEST_SUITE_P(Targets, AmdBufferCompiles,
                         ::testing::Values(Target::gfx90a, Target::gfx942),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace warpforge::amdgpu::testing
