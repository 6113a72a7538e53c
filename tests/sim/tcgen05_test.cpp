// The simulator's tcgen05 instructions, one at a time, against results worked
// out by hand from the PTX ISA's text (tensor memory, the data-path layouts,
// the descriptors, block scaling), and its refusals of misuse.
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>

#include "dsl_image.hpp"
#include "sim_harness.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/layout/tcgen05_instr_descriptor.hpp"
#include "warpforge/layout/tcgen05_smem_descriptor.hpp"

// Outside warpforge::sim, whose Kernel is the decoded form.
namespace warpforge::tcgen05_testing {
namespace {

using namespace dsl;
using sim::testing::arg_u32;
using sim::testing::arg_u64;

class Tcgen05Sim : public sim::testing::SimTest {
 protected:
  // Runs `m` (kernel "k") on one block of `threads` threads, or on one
  // cluster of `ctas` such blocks.
  void run_module(const ptx::Module& m, std::uint32_t threads,
                  const std::vector<runtime::KernelArg>& args, std::uint32_t ctas = 1) {
    auto loaded = sim.load(m);
    sim.launch(*loaded, "k", {.grid = {ctas}, .block = {threads}, .cluster = {ctas, 1, 1}}, args,
               nullptr);
  }
  // Decodes the module's last kernel, which the simulator does at its first
  // launch (before it checks the arguments: none are given).
  void decode(const ptx::Module& m) {
    auto loaded = sim.load(m);
    sim.launch(*loaded, std::get<ptx::Function>(m.items.back()).name, {.grid = {1}, .block = {32}}, {}, nullptr);
  }
  std::string error_of_module(const ptx::Module& m, std::uint32_t threads,
                              const std::vector<runtime::KernelArg>& args, std::uint32_t ctas = 1) {
    try {
      run_module(m, threads, args, ctas);
    } catch (const SimError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return "";
  }
  // The error of a kernel that allocates 32 columns, runs `body` with every
  // thread's tid and the address, and deallocates; `module` gets the kernel.
  std::string tensor_memory_error(
      std::uint32_t threads,
      const std::function<void(Kernel&, const Reg& tid, const Reg& taddr)>& body,
      ptx::Module* module = nullptr);
  // Runs one MmaCase (below) on random inputs and holds D to the hand-worked sums.
  void check_mma(const struct MmaCase& c, std::mt19937& rng);
};

// Warp 0 allocates `columns` and every thread gets the address (kernel prologue).
Reg allocate(Kernel& k, const Reg& tid, int columns, CtaGroup group = CtaGroup::one) {
  Shared slot = k.shared("tmem_slot", 4, 4);
  k.if_then(k.setp(Cmp::lt, tid, 32), [&] { k.tcgen05_alloc(group, at(slot), columns); });
  k.bar_sync();
  Reg taddr = k.reg(u32);
  k.ld(Space::shared, u32, taddr, at(slot));
  return taddr;
}

void deallocate(Kernel& k, const Reg& tid, const Reg& taddr, int columns,
                CtaGroup group = CtaGroup::one) {
  k.bar_sync();
  k.if_then(k.setp(Cmp::lt, tid, 32), [&] { k.tcgen05_dealloc(group, taddr, columns); });
}

std::string Tcgen05Sim::tensor_memory_error(
    std::uint32_t threads, const std::function<void(Kernel&, const Reg&, const Reg&)>& body,
    ptx::Module* module) {
  Kernel k("k", Target::sm_100a);
  Reg tid = k.sreg(SReg::tid_x);
  Reg taddr = allocate(k, tid, 32);
  body(k, tid, taddr);
  deallocate(k, tid, taddr, 32);
  const ptx::Module m = k.module();
  if (module) *module = m;
  return error_of_module(m, threads, {});
}

// The tensor-memory address of this warp's lane quarter: taddr + (32 * warp) << 16.
Reg quarter_address(const Reg& tid, const Reg& taddr) {
  return taddr + ((tid >> 5) << 21);
}

TEST_F(Tcgen05Sim, AllocGivesAlignedBlocksAndDeallocFreesThem) {
  Kernel k("k", Target::sm_100a);
  Reg out = k.param_ptr("out", 4);
  Reg tid = k.sreg(SReg::tid_x);
  Shared slots = k.shared("slots", 12, 4);
  k.tcgen05_alloc(CtaGroup::one, at(slots), 64);
  k.tcgen05_alloc(CtaGroup::one, at(slots, 4), 32);
  k.tcgen05_alloc(CtaGroup::one, at(slots, 8), 128);
  Regs got = k.regs(u32, 3);
  for (int i = 0; i < 3; ++i) k.ld(Space::shared, u32, got[i], at(slots, 4 * i));
  k.if_then(k.setp(Cmp::eq, tid, 0), [&] {
    for (int i = 0; i < 3; ++i) k.st(Space::global, u32, at(out, 4 * i), got[i]);
  });
  k.tcgen05_dealloc(CtaGroup::one, got[0], 64);
  k.tcgen05_dealloc(CtaGroup::one, got[1], 32);
  k.tcgen05_dealloc(CtaGroup::one, got[2], 128);
  auto o = upload(std::vector<std::uint32_t>(3, 0xDEADBEEF));
  run_module(k.module(), 32, {arg_u64(o)});
  // First fit on blocks aligned to their size: columns 0-63, 64-95, 128-255
  // (lane 0 in bits 31-16, the column in bits 15-0).
  EXPECT_EQ(download<std::uint32_t>(o, 3), (std::vector<std::uint32_t>{0, 64, 128}));
}

TEST_F(Tcgen05Sim, EachLoadShapeReadsTheCellsOfItsFigure) {
  // Every warp stores cell (lane, column) = lane * 1000 + column over its
  // quarter's 32 lanes and 16 columns with 32x32b.x16, then reads them back
  // with each shape; each register must hold its cell by the ISA's figures.
  struct Shape {
    TmemShape shape;
    int regs;      // per thread, with .num below
    int lane_off;  // the 16-lane shapes read the upper half of the quarter
  };
  const std::vector<Shape> shapes = {{TmemShape::lanes32_bits32, 16, 0},
                                     {TmemShape::lanes16_bits64, 8, 16},
                                     {TmemShape::lanes16_bits128, 8, 16},
                                     {TmemShape::lanes16_bits256, 8, 16}};
  Kernel k("k", Target::sm_100a);
  Reg out = k.param_ptr("out", 4);
  Reg tid = k.sreg(SReg::tid_x);
  Reg taddr = allocate(k, tid, 32);
  Reg mine = quarter_address(tid, taddr);
  Regs cells = k.regs(u32, 16, "c");
  Reg lane_value = k.reg(u32);
  k.mul(lane_value, tid, 1000);
  for (int i = 0; i < 16; ++i) k.add(cells[i], lane_value, i);
  k.tcgen05_st(TmemShape::lanes32_bits32, mine, cells);
  k.tcgen05_wait_st();
  Reg row = k.reg(u64);
  k.mul_wide(row, tid, 4 * 16 * 4);
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    Regs got(cells.begin(), cells.begin() + shapes[s].regs);
    k.tcgen05_ld(shapes[s].shape, got, mine + (shapes[s].lane_off << 16));
    k.tcgen05_wait_ld();
    for (int i = 0; i < shapes[s].regs; ++i)
      k.st(Space::global, u32, at(out + row, static_cast<std::int64_t>(4 * (16 * s + i))), got[i]);
  }
  deallocate(k, tid, taddr, 32);
  auto o = upload(std::vector<std::uint32_t>(128 * 64, 0xDEADBEEF));
  run_module(k.module(), 128, {arg_u64(o)});
  const auto got = download<std::uint32_t>(o, 128 * 64);
  auto at = [&](int thread, int shape, int reg) {
    return got[static_cast<std::size_t>(thread * 64 + 16 * shape + reg)];
  };
  auto cell = [](int lane, int column) { return static_cast<std::uint32_t>(lane * 1000 + column); };
  for (int t = 0; t < 128; ++t) {
    const int q = 32 * (t / 32), l = t % 32, h = q + 16;  // quarter base, lane in warp, upper half
    for (int i = 0; i < 16; ++i)
      ASSERT_EQ(at(t, 0, i), cell(q + l, i)) << "32x32b thread " << t << " reg " << i;
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(at(t, 1, i), cell(h + l / 4 + 8 * (l % 2), 2 * i + (l / 2) % 2))
          << "16x64b " << t << " " << i;
      ASSERT_EQ(at(t, 2, i), cell(h + l / 4 + 8 * (i % 2), 4 * (i / 2) + l % 4))
          << "16x128b " << t << " " << i;
      ASSERT_EQ(at(t, 3, i), cell(h + l / 4 + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (l % 4) + i % 2))
          << "16x256b " << t << " " << i;
    }
  }
  // Cells read by hand from the figures: warp 1 thread 5 (lane 37) register 3
  // of 16x256b is lane 32+16+1+8 = 57, column 3; 16x64b thread 3 register 0 is
  // lane 16+0+8 = 24, column 1.
  EXPECT_EQ(at(37, 3, 3), 57003u);
  EXPECT_EQ(at(3, 1, 0), 24001u);
}

TEST_F(Tcgen05Sim, AWarpReachesOnlyItsLaneQuarter) {
  ptx::Module m;
  const std::string msg = tensor_memory_error(
      64,
      [](Kernel& k, const Reg& tid, const Reg& taddr) {
        k.if_then(k.setp(Cmp::ge, tid, 32),
                  [&] { k.tcgen05_ld(TmemShape::lanes32_bits32, k.regs(u32, 1), taddr); });
      },
      &m);
  EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.ld"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("thread (32,0,0)"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("tcgen05.ld of lanes 0-31 by warp 1, which reaches only tensor-memory lanes 32-63"),
      std::string::npos)
      << msg;
}

TEST_F(Tcgen05Sim, AllocationMisuseIsRefusedNamingThreadAndLine) {
  // A column count that is not a power of two, from a register.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    k.tcgen05_alloc(CtaGroup::one, at(slot), k.mov(u32, 48));
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {});
    EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.alloc"))),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("thread (0,0,0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tcgen05.alloc of 48 columns; a power of two in 32..512"), std::string::npos)
        << msg;
  }
  // An allocation after the CTA relinquished its permit.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    k.tcgen05_relinquish_alloc_permit(CtaGroup::one);
    k.tcgen05_alloc(CtaGroup::one, at(slot), 32);
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {});
    EXPECT_NE(msg.find("after this CTA relinquished its allocation permit "
                       "(tcgen05.relinquish_alloc_permit at PTX "
                       "line " +
                       std::to_string(sim::testing::line_of(m, "tcgen05.relinquish"))),
              std::string::npos)
        << msg;
  }
  // A dealloc of another size than the block's.
  {
    Kernel k("k", Target::sm_100a);
    Reg tid = k.sreg(SReg::tid_x);
    Reg taddr = allocate(k, tid, 64);
    k.tcgen05_dealloc(CtaGroup::one, taddr, 32);
    const std::string msg = error_of_module(k.module(), 32, {});
    EXPECT_NE(msg.find("tcgen05.dealloc of 32 columns at tensor-memory address 0x0"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("allocated: columns 0-63"), std::string::npos) << msg;
  }
  // More columns than are free.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 8, 4);
    k.tcgen05_alloc(CtaGroup::one, at(slot), 512);
    k.tcgen05_alloc(CtaGroup::one, at(slot, 4), 32);
    const std::string msg = error_of_module(k.module(), 32, {});
    EXPECT_NE(
        msg.find("tcgen05.alloc of 32 columns with columns 0-511 of 512 allocated: no free block"),
        std::string::npos)
        << msg;
  }
  // Exiting with tensor memory allocated.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    k.tcgen05_alloc(CtaGroup::one, at(slot), 128);
    const std::string msg = error_of_module(k.module(), 32, {});
    EXPECT_NE(msg.find("block (0,0,0): every thread exited with tensor memory still allocated "
                       "(columns 0-127)"),
              std::string::npos)
        << msg;
  }
  // A load outside the allocated columns.
  {
    const std::string msg = tensor_memory_error(32, [](Kernel& k, const Reg&, const Reg& taddr) {
      k.tcgen05_ld(TmemShape::lanes32_bits32, k.regs(u32, 2), taddr + 31);
    });
    EXPECT_NE(msg.find("tcgen05.ld reaches tensor memory lane 0, column 32, outside the allocated "
                       "columns (columns "
                       "0-31)"),
              std::string::npos)
        << msg;
  }
}

// ---- tcgen05.mma --------------------------------------------------------------------

// The shared-memory image of the MMA tests: operands K-major without swizzle,
// one 32-byte K slice per MMA: row r, byte b of a slice at (r/8)*256 +
// (r%8)*16 + (b/16)*128 + b%16 (LBO 128, SBO 256).
std::uint64_t slice_offset(int row, int byte) {
  return (row / 8) * 256 + (row % 8) * 16 + (byte / 16) * 128 + byte % 16;
}

struct MmaCase {
  const char* name;
  Tcgen05Kind kind;
  std::optional<ScaleVec> scale_vec;
  layout::Tcgen05Element element;
  layout::Tcgen05Scaling scaling;
  int n;
  int mmas;  // K slices, each one instruction
  bool a_in_tmem = false;
  // .cta_group::2 over a cluster of two CTAs, M = 256: each CTA's image holds
  // its 128 rows of A, its N/2 rows of B, its rows' scale factors and all N
  // columns' (N <= 128).
  bool pair = false;
};

int ctas_of(const MmaCase& c) {
  return c.pair ? 2 : 1;
}

int bits_of(layout::Tcgen05Element e) {
  switch (e) {
    case layout::Tcgen05Element::f16:
    case layout::Tcgen05Element::bf16:
      return 16;
    case layout::Tcgen05Element::tf32:
      return 32;
    case layout::Tcgen05Element::e2m1:
      return 4;
    default:
      return 8;
  }
}

int vec_of(const MmaCase& c) {
  if (!c.scale_vec) return 1;
  return *c.scale_vec == ScaleVec::x1 ? 1 : *c.scale_vec == ScaleVec::x2 ? 2 : 4;
}

// Small exact values and their encodings.
struct Encoded {
  std::uint32_t bits;
  double value;
};
Encoded random_element(layout::Tcgen05Element e, std::mt19937& rng) {
  const int v = std::uniform_int_distribution<int>(-3, 3)(rng);
  const double x = v == 0 ? 0.5 : v;  // never zero, so a missed element shows
  switch (e) {
    case layout::Tcgen05Element::bf16: {
      const float f = static_cast<float>(x);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return {u >> 16, x};
    }
    case layout::Tcgen05Element::tf32: {
      const float f = static_cast<float>(x);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return {u | 0x1FFFu, x};  // the low 13 bits are not read: poison them
    }
    case layout::Tcgen05Element::e4m3: {
      // e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits; 0.5 = 0x30, 1 = 0x38, 2 = 0x40, 3 =
      // 0x44.
      static const std::map<double, std::uint32_t> kCodes = {
          {0.5, 0x30}, {1, 0x38}, {2, 0x40}, {3, 0x44}};
      return {kCodes.at(std::abs(x)) | (x < 0 ? 0x80u : 0u), x};
    }
    default: {  // e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit: 0.5 = 1, 1 = 2, 2 = 4, 3 =
                // 5
      static const std::map<double, std::uint32_t> kCodes = {{0.5, 1}, {1, 2}, {2, 4}, {3, 5}};
      return {kCodes.at(std::abs(x)) | (x < 0 ? 8u : 0u), x};
    }
  }
}

// Scale factors: ue8m0 2^-2 .. 2^2 (bytes 125..129), ue4m3 0.5, 1, 1.5, 2.
Encoded random_scale(bool ue8m0, std::mt19937& rng) {
  const int i = std::uniform_int_distribution<int>(0, ue8m0 ? 4 : 3)(rng);
  if (ue8m0) return {static_cast<std::uint32_t>(125 + i), std::ldexp(1.0, i - 2)};
  static constexpr Encoded kUe4m3[] = {{0x30, 0.5}, {0x38, 1}, {0x3C, 1.5}, {0x40, 2}};
  return kUe4m3[i];
}

struct MmaInputs {
  std::vector<std::uint8_t> image;  // each CTA's image_bytes, by %cluster_ctarank
  std::size_t image_bytes = 0;
  std::vector<double> a, b;           // a[m * K + k], b[n * K + k], K over all slices
  std::vector<double> sa, sb;         // sa[m * blocks + j], sb[n * blocks + j]
  std::vector<std::uint32_t> a_tmem;  // A packed for tcgen05.st: M lanes x (K*bits/32) words
  std::uint32_t a_base = 0, b_base = 0, sf_base = 0;
};

MmaInputs mma_inputs(const MmaCase& c, std::mt19937& rng) {
  const int bits = bits_of(c.element), k_slice = 256 / bits, kk = k_slice * c.mmas;
  const int blocks = vec_of(c) * c.mmas, ctas = ctas_of(c), b_rows = c.n / ctas;
  MmaInputs in;
  in.a_base = 0;
  in.b_base = 4096 * static_cast<std::uint32_t>(c.mmas);
  in.sf_base = in.b_base + static_cast<std::uint32_t>(b_rows / 8 * 256 * c.mmas);
  EXPECT_LE(blocks, 4) << "the kernel copies one 128x4 group of scale factors per operand";
  in.image_bytes = in.sf_base + 2 * 512;
  in.image.assign(in.image_bytes * static_cast<std::size_t>(ctas), 0);
  // Element (row, k) of an operand of CTA `cta` whose K slices are
  // `slice_bytes` apart from `base`.
  auto put = [&](int cta, std::uint32_t base, std::uint32_t slice_bytes, int row, int k,
                 std::uint32_t code) {
    const int slice = k / k_slice, within = k % k_slice;
    const std::uint64_t off =
        in.image_bytes * cta + base + static_cast<std::uint64_t>(slice) * slice_bytes;
    if (bits == 4) {
      in.image[off + slice_offset(row, within / 2)] |=
          static_cast<std::uint8_t>(code << (4 * (within % 2)));
      return;
    }
    for (int byte = 0; byte < bits / 8; ++byte)
      in.image[off + slice_offset(row, within * bits / 8 + byte)] =
          static_cast<std::uint8_t>(code >> (8 * byte));
  };
  const int m_rows = 128 * ctas;
  in.a_tmem.assign(m_rows * static_cast<std::size_t>(kk * bits / 32), 0);
  for (int m = 0; m < m_rows; ++m)
    for (int k = 0; k < kk; ++k) {
      const Encoded e = random_element(c.element, rng);
      in.a.push_back(e.value);
      put(m / 128, in.a_base, 4096, m % 128, k, e.bits);
      const int bit = k * bits;
      in.a_tmem[static_cast<std::size_t>(m * (kk * bits / 32) + bit / 32)] |= e.bits << (bit % 32);
    }
  for (int n = 0; n < c.n; ++n)
    for (int k = 0; k < kk; ++k) {
      const Encoded e = random_element(c.element, rng);
      in.b.push_back(e.value);
      put(n / b_rows, in.b_base, static_cast<std::uint32_t>(b_rows / 8 * 256), n % b_rows, k,
          e.bits);
    }
  in.sa.assign(static_cast<std::size_t>(m_rows) * blocks, 1.0);
  in.sb.assign(static_cast<std::size_t>(c.n) * blocks, 1.0);
  if (c.scale_vec) {
    // The 128x4 layout: row m, K block j at (m%32)*16 + (m/32)*4 + j, one
    // 512-byte group of 4 K blocks for A (the CTA's rows), then one for B
    // (every column, in each CTA).
    const bool ue8m0 = c.scaling != layout::Tcgen05Scaling::fp4_ue4m3;
    auto layout_128x4 = [](int r, int j) { return (r % 32) * 16 + (r / 32) * 4 + j; };
    for (int who = 0; who < 2; ++who)
      for (int r = 0; r < (who ? c.n : m_rows); ++r)
        for (int j = 0; j < blocks; ++j) {
          const Encoded s = random_scale(ue8m0, rng);
          (who ? in.sb : in.sa)[static_cast<std::size_t>(r * blocks + j)] = s.value;
          for (int cta = 0; cta < ctas; ++cta)
            if (who || cta == r / 128)
              in.image[in.image_bytes * cta + in.sf_base + 512 * who + layout_128x4(r % 128, j)] =
                  static_cast<std::uint8_t>(s.bits);
        }
  }
  return in;
}

constexpr int kScaleColumn = 256;  // tensor-memory columns of the scale factors: A's 4, then B's 4

// The MMA kernel: 128 threads per CTA copy the CTA's image into shared
// memory (and A into tensor memory when it is read from there); one thread
// (of the pair's even CTA) copies the scale factors, issues the MMAs and
// commits to the barrier of every CTA; every CTA reads back its rows of D.
ptx::Module mma_kernel(const MmaCase& c, std::size_t image_bytes) {
  const CtaGroup group = c.pair ? CtaGroup::two : CtaGroup::one;
  Kernel k("k", Target::sm_100a);
  Reg in = k.param_ptr("in", 4), a_words = k.param_ptr("a_words", 4), out = k.param_ptr("out", 4);
  Regs idesc;
  for (int s = 0; s < c.mmas; ++s) idesc.push_back(k.param(b32, "idesc" + std::to_string(s)));
  Reg adesc = k.param(u64, "adesc"), bdesc = k.param(u64, "bdesc"), sfdesc = k.param(u64, "sfdesc");
  Shared buf = k.shared("buf", static_cast<std::int64_t>(image_bytes), 1024);
  Shared bar = k.shared("bar", 8, 8);
  Reg tid = k.sreg(SReg::tid_x);
  Reg rank = c.pair ? k.sreg(SReg::cluster_ctarank) : k.mov(u32, 0);
  Reg base = k.address_of(buf);
  Reg image = k.reg(u64);
  k.mul_wide(image, rank, static_cast<std::int64_t>(image_bytes));
  sim::testing::copy_image_to_shared(k, in + image, base, tid,
                                     static_cast<std::int64_t>(image_bytes));
  Pred thread0 = k.setp(Cmp::eq, tid, 0);
  k.if_then(thread0, [&] { k.mbarrier_init(at(bar), 1); });
  Reg taddr =
      allocate(k, tid, 512, group);  // its bar.sync also publishes the image and the barrier
  // The descriptor's 14-bit start field: a cluster launch's shared addresses
  // carry the CTA's rank above bit 18.
  Reg start = k.reg(u64);
  k.cvt(start, (base >> 4) & 0x3FFFu);
  const int bits = bits_of(c.element), kk = 256 / bits * c.mmas, words = kk * bits / 32;
  // Row tid of this CTA: row 128 * rank + tid of the MMA.
  Reg row = k.reg(u32);
  k.mad(row, rank, 128, tid);
  if (c.a_in_tmem) {  // A into columns 128.. : row m in lane m, K packed along the columns
    Regs a = k.regs(b32, words, "a");
    Reg a_row = k.reg(u64);
    k.mul_wide(a_row, row, 4 * words);
    for (int i = 0; i < words; ++i) k.ld(Space::global, b32, a[i], at(a_words + a_row, 4 * i));
    k.tcgen05_st(TmemShape::lanes32_bits32, quarter_address(tid, taddr) + 128, a);
    k.tcgen05_wait_st();
    k.tcgen05_fence_before_thread_sync();
    k.bar_sync();
    k.tcgen05_fence_after_thread_sync();
  }
  if (c.pair) {  // the peer's image, A and barrier are ready before the MMA reads them
    k.barrier_cluster_arrive();
    k.barrier_cluster_wait();
  }
  const int b_rows = c.n / ctas_of(c);
  k.if_then(k.setp(Cmp::eq, tid + rank, 0), [&] {
    if (c.scale_vec)
      for (int g = 0; g < 2;
           ++g)  // A's and B's 512-byte groups, each into 4 columns of every lane quarter
        k.tcgen05_cp(group, TmemCopyShape::rows32_bits128_warpx4, taddr + (kScaleColumn + 4 * g),
                     sfdesc + start + 32 * g);
    for (int s = 0; s < c.mmas; ++s) {
      const std::variant<bool, PredUse> accumulate = s > 0;
      // Each K slice is the next 4096 bytes of A and b_rows/8 * 256 of B
      // (descriptor units of 16 bytes).
      Reg a_desc = adesc + start + 256 * s, b_desc = bdesc + start + b_rows / 8 * 16 * s;
      Reg sfa = taddr + kScaleColumn, sfb = taddr + (kScaleColumn + 4);
      if (c.a_in_tmem && c.scale_vec)
        k.tcgen05_mma_block_scale_a_tmem(group, c.kind, *c.scale_vec, taddr,
                                         taddr + (128 + words / c.mmas * s), b_desc, idesc[s], sfa,
                                         sfb, accumulate);
      else if (c.a_in_tmem)
        k.tcgen05_mma_a_tmem(group, c.kind, taddr, taddr + (128 + words / c.mmas * s), b_desc,
                             idesc[s], accumulate);
      else if (c.scale_vec)
        k.tcgen05_mma_block_scale(group, c.kind, *c.scale_vec, taddr, a_desc, b_desc, idesc[s], sfa,
                                  sfb, accumulate);
      else
        k.tcgen05_mma(group, c.kind, taddr, a_desc, b_desc, idesc[s], accumulate);
    }
    if (c.pair)  // both CTAs' barriers: ranks 0 and 1
      k.tcgen05_commit_multicast(group, k.address_of(bar), k.mov(u16, 3));
    else
      k.tcgen05_commit(group, k.address_of(bar));
  });
  k.mbarrier_wait_parity(at(bar), 0);
  k.tcgen05_fence_after_thread_sync();
  Regs d = k.regs(f32, c.n, "d");
  k.tcgen05_ld(TmemShape::lanes32_bits32, d, quarter_address(tid, taddr));
  k.tcgen05_wait_ld();
  Reg d_row = k.reg(u64);
  k.mul_wide(d_row, row, 4 * c.n);
  for (int i = 0; i < c.n; ++i) k.st(Space::global, f32, at(out + d_row, 4 * i), d[i]);
  k.tcgen05_fence_before_thread_sync();
  deallocate(k, tid, taddr, 512, group);
  return k.module();
}

runtime::KernelArg arg_bytes(std::uint32_t v) {
  return arg_u32(v);
}

TEST_F(Tcgen05Sim, MmaOfEachKindMatchesTheHandWorkedSums) {
  using E = layout::Tcgen05Element;
  using S = layout::Tcgen05Scaling;
  const std::vector<MmaCase> cases = {
      {"kind::f16 bf16, N = 16, two K slices", Tcgen05Kind::f16, std::nullopt, E::bf16, S::none, 16,
       2},
      {"kind::tf32, N = 32", Tcgen05Kind::tf32, std::nullopt, E::tf32, S::none, 32, 1},
      {"kind::f8f6f4 e4m3, N = 128", Tcgen05Kind::f8f6f4, std::nullopt, E::e4m3, S::none, 128, 1},
      {"kind::f16 bf16 with A in tensor memory, N = 32", Tcgen05Kind::f16, std::nullopt, E::bf16,
       S::none, 32, 2, true},
      {"MXFP8: mxf8f6f4 e4m3, scale_vec::1X, four K slices", Tcgen05Kind::mxf8f6f4, ScaleVec::x1,
       E::e4m3, S::mxf8f6f4_ue8m0, 32, 4},
      {"MXFP4: mxf4 e2m1, scale_vec::2X, two K slices", Tcgen05Kind::mxf4, ScaleVec::x2, E::e2m1,
       S::fp4_ue8m0, 64, 2},
      {"NVFP4: mxf4nvf4 e2m1, scale_vec::4X ue4m3", Tcgen05Kind::mxf4nvf4, ScaleVec::x4, E::e2m1,
       S::fp4_ue4m3, 16, 1},
      {"MXFP4 with A in tensor memory", Tcgen05Kind::mxf4nvf4, ScaleVec::x2, E::e2m1, S::fp4_ue8m0,
       32, 2, true},
  };
  std::mt19937 rng(27);
  for (const MmaCase& c : cases) {
    SCOPED_TRACE(c.name);
    check_mma(c, rng);
  }
}

TEST_F(Tcgen05Sim, PairMmaOfM256SplitsAAndDByRowsAndBByColumnsOverTheCtas) {
  // .cta_group::2: the even CTA's shared memory holds rows 0-127 of A and
  // rows 0..N/2-1 of B, the odd CTA's the rest; D's rows 0-127 land in the
  // even CTA's tensor memory, 128-255 in the odd's (data-path layout A).
  using E = layout::Tcgen05Element;
  using S = layout::Tcgen05Scaling;
  const std::vector<MmaCase> cases = {
      {"pair: kind::f16 bf16, N = 32, two K slices", Tcgen05Kind::f16, std::nullopt, E::bf16,
       S::none, 32, 2, false, true},
      {"pair: kind::f16 bf16 with A in tensor memory, N = 16", Tcgen05Kind::f16, std::nullopt,
       E::bf16, S::none, 16, 1, true, true},
      {"pair MXFP8: mxf8f6f4 e4m3, scale_vec::1X, N = 64, two K slices", Tcgen05Kind::mxf8f6f4,
       ScaleVec::x1, E::e4m3, S::mxf8f6f4_ue8m0, 64, 2, false, true},
      {"pair NVFP4: mxf4nvf4 e2m1, scale_vec::4X ue4m3, N = 128", Tcgen05Kind::mxf4nvf4,
       ScaleVec::x4, E::e2m1, S::fp4_ue4m3, 128, 1, false, true},
      {"pair MXFP4 with A in tensor memory, N = 32", Tcgen05Kind::mxf4, ScaleVec::x2, E::e2m1,
       S::fp4_ue8m0, 32, 2, true, true},
  };
  std::mt19937 rng(2);
  for (const MmaCase& c : cases) {
    SCOPED_TRACE(c.name);
    check_mma(c, rng);
  }
}

void Tcgen05Sim::check_mma(const MmaCase& c, std::mt19937& rng) {
  const MmaInputs in = mma_inputs(c, rng);
  const int vec = vec_of(c), m_rows = 128 * ctas_of(c);
  std::vector<runtime::KernelArg> args;
  auto image = upload(in.image);
  auto a_words = upload(in.a_tmem);
  auto out =
      upload(std::vector<std::uint32_t>(static_cast<std::size_t>(m_rows) * c.n, 0xFFFFFFFFu));
  args = {arg_u64(image), arg_u64(a_words), arg_u64(out)};
  for (int s = 0; s < c.mmas; ++s) {
    layout::Tcgen05InstrDescriptor d{c.element, c.element};
    d.m = m_rows;
    d.n = c.n;
    d.scaling = c.scaling;
    // The scale bytes of slice s: blocks vec*s .. within its group of 4.
    d.scale_a_id = d.scale_b_id = c.scale_vec ? (vec * s) % 4 : 0;
    args.push_back(arg_bytes(d.encode()));
  }
  // The slices' descriptors are the first slice's advanced in the kernel.
  const layout::Tcgen05SmemDescriptor adesc{in.a_base, 128, 256}, bdesc{in.b_base, 128, 256},
      sfdesc{in.sf_base, 0, 128};
  args.push_back(arg_u64(adesc.encode()));
  args.push_back(arg_u64(bdesc.encode()));
  args.push_back(arg_u64(sfdesc.encode()));
  run_module(mma_kernel(c, in.image_bytes), 128, args, static_cast<std::uint32_t>(ctas_of(c)));
  const auto got = download<float>(out, static_cast<std::size_t>(m_rows) * c.n);
  const int kk = static_cast<int>(in.a.size()) / m_rows, blocks = vec * c.mmas, block = kk / blocks;
  for (int m = 0; m < m_rows; ++m)
    for (int n = 0; n < c.n; ++n) {
      double want = 0;
      for (int k = 0; k < kk; ++k)
        want += in.a[static_cast<std::size_t>(m * kk + k)] *
                in.b[static_cast<std::size_t>(n * kk + k)] *
                in.sa[static_cast<std::size_t>(m * blocks + k / block)] *
                in.sb[static_cast<std::size_t>(n * blocks + k / block)];
      // Small powers of two and integers: every sum is exact in f32.
      ASSERT_EQ(got[static_cast<std::size_t>(m * c.n + n)], static_cast<float>(want))
          << "D[" << m << "][" << n << "]";
    }
}

TEST_F(Tcgen05Sim, MmaRefusesADescriptorOfAnotherFormatAtIssue) {
  MmaCase c{"bf16",
            Tcgen05Kind::f16,
            std::nullopt,
            layout::Tcgen05Element::bf16,
            layout::Tcgen05Scaling::none,
            16,
            1};
  std::mt19937 rng(1);
  const MmaInputs in = mma_inputs(c, rng);
  const ptx::Module m = mma_kernel(c, in.image_bytes);
  layout::Tcgen05InstrDescriptor d{c.element, c.element};
  d.n = 16;
  // A wgmma descriptor: no version bits at 46-48.
  const std::string msg =
      error_of_module(m, 128,
                      {arg_u64(upload(in.image)), arg_u64(upload(std::vector<std::uint32_t>{0})),
                       arg_u64(upload(std::vector<std::uint32_t>(128 * 16))), arg_bytes(d.encode()),
                       arg_u64((1ull << 16) | (16ull << 32)),
                       arg_u64(layout::Tcgen05SmemDescriptor{0, 128, 256}.encode()), arg_u64(0)});
  EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.mma"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("thread (0,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shared-memory descriptor of A"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bits 46-48 hold 0; an sm_100 descriptor has the fixed value 0b001 there"),
            std::string::npos)
      << msg;
}

TEST_F(Tcgen05Sim, CopyShapesPlaceRowsInTheirLanesAndShiftMovesRowsDown) {
  // Shared memory holds 128 rows of 32 bytes, byte b of row r = (r + 3b) % 251,
  // K-major without swizzle (row r, byte b at (r/8)*256 + (r%8)*16 + (b/16)*128
  // + b%16). Each shape copies into its own columns; every warp then reads its
  // quarter with 32x32b.x32. Over a CTA pair (.cta_group::2, issued once by
  // the even CTA) each CTA's copy and shift come from its own shared memory,
  // whose bytes differ by 101 * rank.
  struct Copy {
    TmemCopyShape shape;
    int column, words;
  };
  const std::vector<Copy> copies = {{TmemCopyShape::rows128_bits256, 0, 8},
                                    {TmemCopyShape::rows128_bits128, 8, 4},
                                    {TmemCopyShape::rows64_bits128_warpx2_02_13, 12, 4},
                                    {TmemCopyShape::rows64_bits128_warpx2_01_23, 16, 4},
                                    {TmemCopyShape::rows32_bits128_warpx4, 20, 4},
                                    {TmemCopyShape::rows4_bits256, 24, 8}};
  constexpr std::size_t kImage = 128 * 32;
  auto byte_of = [](int cta, int r, int b) {
    return static_cast<std::uint8_t>((r + 3 * b + 101 * cta) % 251);
  };
  for (const bool pair : {false, true}) {
    SCOPED_TRACE(pair ? ".cta_group::2" : ".cta_group::1");
    const CtaGroup group = pair ? CtaGroup::two : CtaGroup::one;
    const int ctas = pair ? 2 : 1;
    std::vector<std::uint8_t> image(kImage * ctas);
    for (int cta = 0; cta < ctas; ++cta)
      for (int r = 0; r < 128; ++r)
        for (int b = 0; b < 32; ++b) image[kImage * cta + slice_offset(r, b)] = byte_of(cta, r, b);
    Kernel k("k", Target::sm_100a);
    Reg in = k.param_ptr("in", 4), out = k.param_ptr("out", 4);
    Shared buf = k.shared("buf", static_cast<std::int64_t>(kImage), 1024);
    Shared bar = k.shared("bar", 8, 8);
    Reg tid = k.sreg(SReg::tid_x);
    Reg rank = pair ? k.sreg(SReg::cluster_ctarank) : k.mov(u32, 0);
    Reg base = k.address_of(buf);
    Reg mine = k.reg(u64);
    k.mul_wide(mine, rank, static_cast<std::int64_t>(kImage));
    sim::testing::copy_image_to_shared(k, in + mine, base, tid, static_cast<std::int64_t>(kImage));
    k.if_then(k.setp(Cmp::eq, tid, 0), [&] { k.mbarrier_init(at(bar), 1); });
    Reg taddr = allocate(k, tid, 64, group);
    Reg zero = k.mov(u32, 0);
    Regs fill(32, zero);
    k.tcgen05_st(TmemShape::lanes32_bits32, quarter_address(tid, taddr),
                 fill);  // poison-free start: zeros
    k.tcgen05_wait_st();
    k.tcgen05_fence_before_thread_sync();
    k.bar_sync();
    if (pair) {  // the peer's image and barrier are ready before the copies read them
      k.barrier_cluster_arrive();
      k.barrier_cluster_wait();
    }
    k.tcgen05_fence_after_thread_sync();
    Reg start = k.reg(u64);
    k.cvt(start, (base >> 4) & 0x3FFFu);
    const std::uint64_t desc = layout::Tcgen05SmemDescriptor{0, 128, 256}.encode();
    k.if_then(k.setp(Cmp::eq, tid + rank, 0), [&] {
      for (const Copy& c : copies)
        k.tcgen05_cp(group, c.shape, taddr + c.column, k.mov(u64, desc) + start);
      // Rows 96..126 of the 128x256b copy move down to 97..127.
      k.tcgen05_shift_down(group, taddr + (96 << 16));
      if (pair)
        k.tcgen05_commit_multicast(group, k.address_of(bar), k.mov(u16, 3));
      else
        k.tcgen05_commit(group, k.address_of(bar));
    });
    k.mbarrier_wait_parity(at(bar), 0);
    k.tcgen05_fence_after_thread_sync();
    Regs got = k.regs(u32, 32, "g");
    k.tcgen05_ld(TmemShape::lanes32_bits32, got, quarter_address(tid, taddr));
    k.tcgen05_wait_ld();
    Reg lane = k.reg(u32), row = k.reg(u64);
    k.mad(lane, rank, 128, tid);  // this thread's lane over the pair
    k.mul_wide(row, lane, 4 * 32);
    for (int i = 0; i < 32; ++i) k.st(Space::global, u32, at(out + row, 4 * i), got[i]);
    deallocate(k, tid, taddr, 64, group);
    auto o = upload(std::vector<std::uint32_t>(128 * 32 * ctas, 0xDEADBEEF));
    run_module(k.module(), 128, {arg_u64(upload(image)), arg_u64(o)},
               static_cast<std::uint32_t>(ctas));
    const auto cells = download<std::uint32_t>(o, 128 * 32 * ctas);
    for (int cta = 0; cta < ctas; ++cta) {
      auto word_of = [&](int r, int w) {
        return static_cast<std::uint32_t>(byte_of(cta, r, 4 * w) | byte_of(cta, r, 4 * w + 1) << 8 |
                                          byte_of(cta, r, 4 * w + 2) << 16 |
                                          byte_of(cta, r, 4 * w + 3) << 24);
      };
      for (int lane = 0; lane < 128; ++lane) {
        SCOPED_TRACE("CTA " + std::to_string(cta) + " lane " + std::to_string(lane));
        auto cell = [&](int column) {
          return cells[static_cast<std::size_t>((128 * cta + lane) * 32 + column)];
        };
        const int shifted = lane >= 97 ? lane - 1 : lane;  // rows 96..126 moved down one
        for (int w = 0; w < 8; ++w) EXPECT_EQ(cell(w), word_of(shifted, w)) << "128x256b";
        for (int w = 0; w < 4; ++w) {
          EXPECT_EQ(cell(8 + w), word_of(lane, w)) << "128x128b";
          // 02_13: rows 0-31 to lanes 0-31 and 64-95, rows 32-63 to lanes 32-63 and 96-127.
          EXPECT_EQ(cell(12 + w), word_of(lane % 64, w)) << "warpx2::02_13";
          // 01_23: rows 0-31 to lanes 0-63, rows 32-63 to lanes 64-127.
          EXPECT_EQ(cell(16 + w), word_of(lane % 32 + 32 * (lane / 64), w)) << "warpx2::01_23";
          EXPECT_EQ(cell(20 + w), word_of(lane % 32, w)) << "warpx4";
        }
        for (int w = 0; w < 8; ++w)
          EXPECT_EQ(cell(24 + w), lane < 4 ? word_of(lane, w) : 0u) << "4x256b";
      }
    }
  }
}

// ---- the CTA pair (.cta_group::2) ---------------------------------------------------

// Warp 0 of each CTA of a cluster of two: pair allocations of 64 and 32
// columns, a pair dealloc of the first, another 32; each CTA stores the three
// addresses at out[3 * rank ..].
TEST_F(Tcgen05Sim, PairAllocationIsTheSameBlockInBothCtasAndDeallocFreesBoth) {
  Kernel k("k", Target::sm_100a);
  Reg out = k.param_ptr("out", 4);
  Reg tid = k.sreg(SReg::tid_x), rank = k.sreg(SReg::cluster_ctarank);
  Shared slots = k.shared("slots", 12, 4);
  k.tcgen05_alloc(CtaGroup::two, at(slots), 64);
  k.tcgen05_alloc(CtaGroup::two, at(slots, 4), 32);
  Regs got = k.regs(u32, 3);
  for (int i = 0; i < 2; ++i) k.ld(Space::shared, u32, got[i], at(slots, 4 * i));
  k.tcgen05_dealloc(CtaGroup::two, got[0], 64);
  k.tcgen05_alloc(CtaGroup::two, at(slots, 8), 32);
  k.ld(Space::shared, u32, got[2], at(slots, 8));
  Reg mine = k.reg(u64);
  k.mul_wide(mine, rank, 12);
  k.if_then(k.setp(Cmp::eq, tid, 0), [&] {
    for (int i = 0; i < 3; ++i) k.st(Space::global, u32, at(out + mine, 4 * i), got[i]);
  });
  k.tcgen05_dealloc(CtaGroup::two, got[1], 32);
  k.tcgen05_dealloc(CtaGroup::two, got[2], 32);
  auto o = upload(std::vector<std::uint32_t>(6, 0xDEADBEEF));
  run_module(k.module(), 32, {arg_u64(o)}, 2);
  // CTA 0's warp runs ahead and waits in each instruction for CTA 1's: the
  // dealloc frees columns 0-63 of both before the third alloc, which reuses 0.
  EXPECT_EQ(download<std::uint32_t>(o, 6), (std::vector<std::uint32_t>{0, 64, 0, 0, 64, 0}));
}

TEST_F(Tcgen05Sim, PairMisuseIsRefusedNamingThreadAndLine) {
  // A pair without its other CTA: a cluster of one, and rank 2 of a cluster of three.
  for (std::uint32_t ctas : {1u, 3u}) {
    SCOPED_TRACE(ctas);
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    k.tcgen05_alloc(CtaGroup::two, at(slot), 32);
    Reg taddr = k.reg(u32);
    k.ld(Space::shared, u32, taddr, at(slot));
    k.tcgen05_dealloc(CtaGroup::two, taddr, 32);
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {}, ctas);
    EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.alloc"))),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("thread (0,0,0)"), std::string::npos) << msg;
    const std::string rank = ctas == 1 ? "0" : "2";
    EXPECT_NE(
        msg.find(".cta_group::2 in the CTA of %cluster_ctarank " + rank + " of a cluster of " +
                 std::to_string(ctas) + ", which has no CTA of rank " + (ctas == 1 ? "1" : "3") +
                 " to pair with; a CTA pair is ranks 2i and 2i+1 of a cluster"),
        std::string::npos)
        << msg;
  }
  // The two warps of a pair allocating different column counts.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    Reg columns = k.reg(u32);
    k.shr(columns, k.mov(u32, 64), k.sreg(SReg::cluster_ctarank));
    k.tcgen05_alloc(CtaGroup::two, at(slot), columns);
    const ptx::Module m = k.module();
    const std::string line = std::to_string(sim::testing::line_of(m, "tcgen05.alloc"));
    const std::string msg = error_of_module(m, 32, {}, 2);
    EXPECT_NE(msg.find("block (1,0,0) thread (0,0,0): tcgen05.alloc.cta_group::2 of 32 columns "
                       "(PTX line " +
                       line +
                       ") meets the peer CTA's tcgen05.alloc.cta_group::2 of 64 columns (PTX "
                       "line " +
                       line + "); the warps of a CTA pair perform the same"),
              std::string::npos)
        << msg;
  }
  // A pair allocation past the free columns of the pair (rank 1's warp,
  // whose 512 columns matched rank 0's, comes first to the second alloc).
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 8, 4);
    k.tcgen05_alloc(CtaGroup::two, at(slot), 512);
    k.tcgen05_alloc(CtaGroup::two, at(slot, 4), 32);
    const std::string msg = error_of_module(k.module(), 32, {}, 2);
    EXPECT_NE(msg.find("block (1,0,0) thread (0,0,0): tcgen05.alloc of 32 columns with columns "
                       "0-511 in this CTA and columns 0-511 in its peer of 512 allocated: no "
                       "free block"),
              std::string::npos)
        << msg;
  }
  // A pair allocation after the peer CTA exited (rank 1 arrives at the
  // cluster barrier and exits; rank 0 waits there, then allocates).
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    Pred odd = k.setp(Cmp::eq, k.sreg(SReg::cluster_ctarank), 1);
    k.barrier_cluster_arrive();
    k.if_then(odd, [&] { k.exit(); });
    k.barrier_cluster_wait();
    k.tcgen05_alloc(CtaGroup::two, at(slot), 32);
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {}, 2);
    EXPECT_NE(msg.find("block (0,0,0) thread (0,0,0): tcgen05.alloc.cta_group::2 of 32 columns "
                       "(PTX line " +
                       std::to_string(sim::testing::line_of(m, "tcgen05.alloc")) +
                       "), which one warp of each CTA of the pair performs, after the peer CTA "
                       "(%cluster_ctarank 1) exited"),
              std::string::npos)
        << msg;
  }
  // A warp of rank 0 allocating while rank 1's never does: it waits for ever.
  {
    Kernel k("k", Target::sm_100a);
    Shared slot = k.shared("slot", 4, 4);
    k.if_then(k.setp(Cmp::eq, k.sreg(SReg::cluster_ctarank), 0),
              [&] { k.tcgen05_alloc(CtaGroup::two, at(slot), 32); });
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {}, 2);
    EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("warp 0 waits in the .cta_group::2 instruction at PTX line " +
                       std::to_string(sim::testing::line_of(m, "tcgen05.alloc")) +
                       " for a warp of the peer CTA (%cluster_ctarank 1) to perform it too"),
              std::string::npos)
        << msg;
  }
  // An MMA of the pair issued after the peer CTA exited (rank 1 arrives at the
  // cluster barrier and exits; rank 0 waits there, then issues).
  {
    Kernel k("k", Target::sm_100a);
    Pred odd = k.setp(Cmp::eq, k.sreg(SReg::cluster_ctarank), 1);
    k.barrier_cluster_arrive();
    k.if_then(odd, [&] { k.exit(); });
    k.barrier_cluster_wait();
    Reg zero = k.mov(u32, 0), desc = k.mov(u64, 0);
    k.tcgen05_mma(CtaGroup::two, Tcgen05Kind::f16, zero, desc, desc, zero, false);
    const ptx::Module m = k.module();
    const std::string msg = error_of_module(m, 32, {}, 2);
    EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.mma"))),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("block (0,0,0) thread (0,0,0): the peer CTA (%cluster_ctarank 1) of this "
                       ".cta_group::2 operation has exited"),
              std::string::npos)
        << msg;
  }
}

TEST_F(Tcgen05Sim, AKernelMixingCtaGroupsIsRefusedAtLaunch) {
  sim::testing::KernelSource k("mixed");
  k.regs(ptx::Type::b32, "%r", 2).shared(ptx::Type::b32, "slot", 1, 4);
  k.code(
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;\n"
      "ld.shared.b32 %r1, [slot];\n"
      "tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r1, 32;\n"
      "ret;");
  try {
    decode(k.module());
    ADD_FAILURE() << "decoded";
  } catch (const SimError& e) {
    const std::string msg = e.what();
    const std::string alloc = std::to_string(sim::testing::line_of(k.module(), "tcgen05.alloc")),
                      dealloc =
                          std::to_string(sim::testing::line_of(k.module(), "tcgen05.dealloc"));
    EXPECT_NE(msg.find("PTX line " + dealloc + " (tcgen05.dealloc.cta_group::2"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(".cta_group::2 here and ::1 at PTX line " + alloc +
                       " (tcgen05.alloc.cta_group::1"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("every tcgen05 instruction of a kernel names the same .cta_group"),
              std::string::npos)
        << msg;
  }
}

TEST_F(Tcgen05Sim, MmaRefusesDescriptorFieldsItDoesNotSimulateOrTheIsaForbids) {
  // One bf16 MMA (and one NVFP4 one), each run with a spoilt descriptor; the
  // refusal names the field, the rule and what is accepted.
  using E = layout::Tcgen05Element;
  const MmaCase bf16{
      "bf16", Tcgen05Kind::f16, std::nullopt, E::bf16, layout::Tcgen05Scaling::none, 16, 1};
  const MmaCase nvfp4{
      "nvfp4", Tcgen05Kind::mxf4nvf4, ScaleVec::x4, E::e2m1, layout::Tcgen05Scaling::fp4_ue4m3, 16,
      1};
  struct Bad {
    const MmaCase* c;
    std::uint32_t idesc;
    std::uint64_t adesc;
    std::string needle;
  };
  auto idesc_of = [](const MmaCase& c,
                     const std::function<void(layout::Tcgen05InstrDescriptor&)>& change) {
    layout::Tcgen05InstrDescriptor d{c.element, c.element};
    d.n = c.n;
    d.scaling = c.scaling;
    change(d);
    return d.encode();
  };
  const std::uint32_t good = idesc_of(bf16, [](auto&) {});
  const std::uint64_t plain = layout::Tcgen05SmemDescriptor{0, 128, 256}.encode();
  const std::vector<Bad> cases = {
      {&bf16, idesc_of(bf16, [](auto& d) { d.m = 64; }), plain,
       "M = 64 with .cta_group::1; the simulator runs M = 128 with .cta_group::1 and M = 256 with "
       "::2"},
      {&bf16, idesc_of(bf16, [](auto& d) { d.m = 256; }), plain,
       "M = 256 with .cta_group::1; the simulator runs M = 128"},
      {&bf16, idesc_of(bf16, [](auto& d) { d.n = 24; }), plain,
       "N = 24; with M = 128, N is a multiple of 16 in 16..256"},
      {&bf16, idesc_of(bf16, [](auto& d) { d.d_f32 = false; }), plain,
       "D type 0 (bits 4-5); the simulator accumulates in f32 (1)"},
      {&bf16, good | 4u, plain, "sparse MMAs (bit 2) are not simulated"},
      {&bf16, (good & ~(7u << 7)) | (2u << 7), plain,
       "type code 2; simulated for this kind: 0 (f16), 1 (bf16)"},
      {&nvfp4, idesc_of(nvfp4, [](auto& d) { d.scaling = layout::Tcgen05Scaling::fp4_ue8m0; }),
       plain,
       "scale type ue8m0 (bit 23) with .scale_vec::4X; scale_vec::1X and 2X take ue8m0, 4X takes "
       "ue4m3"},
      {&nvfp4, idesc_of(nvfp4, [](auto& d) { d.scale_a_id = 1; }), plain,
       "scale-factor ID 1 with .scale_vec::4X"},
      {&bf16, good,
       layout::Tcgen05SmemDescriptor{0, 128, 256, layout::SmemSwizzle::none, 1}.encode(),
       "base offset 1; the simulator takes 0"},
      {&bf16, good,
       layout::Tcgen05SmemDescriptor{0, 128, 256, layout::SmemSwizzle::none, 0, true}.encode(),
       "the absolute leading-dimension mode (bit 52) is not simulated"},
      {&bf16, good, plain | (1ull << 61),
       "the 128-byte swizzle with 32-byte atoms (mode 1) is not simulated"},
      {&bf16, good, plain | (3ull << 61), "swizzle mode 3 is not defined (0, 1, 2, 4 or 6)"},
  };
  std::mt19937 rng(5);
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.needle);
    const MmaInputs in = mma_inputs(*bad.c, rng);
    const ptx::Module m = mma_kernel(*bad.c, in.image_bytes);
    const std::string msg = error_of_module(
        m, 128,
        {arg_u64(upload(in.image)), arg_u64(upload(std::vector<std::uint32_t>{0})),
         arg_u64(upload(std::vector<std::uint32_t>(128 * 16))), arg_bytes(bad.idesc),
         arg_u64(bad.adesc), arg_u64(layout::Tcgen05SmemDescriptor{in.b_base, 128, 256}.encode()),
         arg_u64(layout::Tcgen05SmemDescriptor{in.sf_base, 0, 128}.encode())});
    EXPECT_NE(msg.find("PTX line " + std::to_string(sim::testing::line_of(m, "tcgen05.mma"))),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("thread (0,0,0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad.needle), std::string::npos) << msg;
  }
}

TEST_F(Tcgen05Sim, AlignedOperandsMustAgreeAcrossTheWarp) {
  const std::string msg = tensor_memory_error(32, [](Kernel& k, const Reg& tid, const Reg& taddr) {
    k.tcgen05_ld(TmemShape::lanes32_bits32, k.regs(u32, 1),
                 taddr + (tid >> 4));  // lanes 16-31: column 1
  });
  EXPECT_NE(msg.find("thread (16,0,0): the address 0x1 differs from lane 0's 0x0; every thread of "
                     "the warp gives the "
                     "same (.aligned)"),
            std::string::npos)
      << msg;
}

TEST_F(Tcgen05Sim, MalformedFormsAreRefusedAtLaunch) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tcgen05.cp.cta_group::1.32x128b [%r1], %rd1", "tcgen05.cp.32x128b needs .warpx4"},
      {"tcgen05.cp.cta_group::1.64x128b [%r1], %rd1",
       "tcgen05.cp.64x128b needs .warpx2::02_13 or .warpx2::01_23"},
      {"tcgen05.mma.cta_group::1.kind::mxf4.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r3], 1",
       ".block_scale without .scale_vec::1X/2X/4X is not simulated"},
      {"tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, 1",
       "tcgen05.mma kinds simulated: f16, tf32"},
      {"tcgen05.ld.sync.aligned.32x32b.b32 {%r1}, [%r2]",
       "tcgen05.ld/st needs .num (.x1 .. .x128)"},
      {"tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r2], 2",
       "shapes simulated: 32x32b, 16x64b, 16x128b, 16x256b"},
      {"tcgen05.ld.sync.aligned.16x256b.x1.b32 {%r1, %r2}, [%r3]",
       "the register vector has 2 registers; the shape and .num need 4"},
      {"tcgen05.commit.cta_group::1.shared::cluster.b64 [%r1]",
       "completes through .mbarrier::arrive::one"},
      {"tcgen05.shift.cta_group::1 [%r1]", "tcgen05.shift takes .down"},
      {"tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2", "takes 5 operands, not 4"},
      {"tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, 1",
       "tcgen05.mma.ws (the weight-stationary MMA) is not simulated"},
      {"tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r3], %r2, 1",
       "tcgen05.mma.sp (structurally sparse A) is not simulated"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32 {%r1}, [%r2]",
       "tcgen05.ld.pack::16b and tcgen05.st.unpack::16b (two 16-bit columns per register) are not "
       "simulated"},
  };
  for (const auto& [line, needle] : cases) {
    SCOPED_TRACE(line);
    sim::testing::KernelSource k("malformed");
    k.regs(ptx::Type::b32, "%r", 4).regs(ptx::Type::b64, "%rd", 3);
    k.code(line + ";\nret;");
    try {
      decode(k.module());
      ADD_FAILURE() << "decoded";
    } catch (const SimError& e) {
      const std::string msg = e.what();
      EXPECT_NE(
          msg.find("PTX line " + std::to_string(sim::testing::line_of(k.module(), "tcgen05"))),
          std::string::npos)
          << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace warpforge::tcgen05_testing
