// Each atom against the closed forms of REFERENCE.md and the PTX ISA fragment
// tables, for every lane and register slot.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "warpforge/error.hpp"
#include "warpforge/layout/ldmatrix_atom.hpp"
#include "warpforge/layout/mfma_atom.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/layout/tmem_datapath.hpp"
#include "warpforge/layout/wgmma_a_fragment.hpp"
#include "warpforge/layout/wgmma_accumulator.hpp"

namespace warpforge::layout {
namespace {

struct Element {
  int64_t row, col;
};
using ClosedForm = std::function<Element(int64_t lane, int64_t value)>;

// Every (lane, value) lands where the closed form says, each tile element is
// held exactly once, and inverse() gives the owner back.
void expect_matches(const Fragment& f, int64_t lanes, int64_t values, int64_t rows, int64_t cols,
                    const ClosedForm& expected) {
  ASSERT_EQ(f.layout.extent(Axis::lane), lanes) << f.layout.name();
  ASSERT_EQ(f.layout.extent(Axis::value), values) << f.layout.name();
  ASSERT_EQ(f.layout.extent(Axis::row), rows);
  ASSERT_EQ(f.layout.extent(Axis::col), cols);
  ASSERT_TRUE(f.layout.is_bijective()) << f.layout.name();
  std::set<std::pair<int64_t, int64_t>> held;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    for (int64_t value = 0; value < values; ++value) {
      AxisPoint at = f.layout({{Axis::lane, lane}, {Axis::value, value}});
      Element e = expected(lane, value);
      ASSERT_EQ(at.at(Axis::row), e.row)
          << f.layout.name() << " lane " << lane << " value " << value;
      ASSERT_EQ(at.at(Axis::col), e.col)
          << f.layout.name() << " lane " << lane << " value " << value;
      held.insert({e.row, e.col});
      AxisPoint owner = f.layout.inverse({{Axis::row, e.row}, {Axis::col, e.col}});
      ASSERT_EQ(owner.at(Axis::lane), lane);
      ASSERT_EQ(owner.at(Axis::value), value);
    }
  }
  EXPECT_EQ(static_cast<int64_t>(held.size()), rows * cols) << f.layout.name();
}

TEST(MmaAtoms, M16n8k16MatchesReferenceClosedForms) {
  MmaAtom atom = mma_m16n8k16_f16();
  EXPECT_EQ(atom.m * atom.n * atom.k, 16 * 8 * 16);
  // REFERENCE.md, "Fragment layouts": t0 = lane % 4, t1 = lane / 4.
  expect_matches(atom.a, 32, 8, 16, 16, [](int64_t l, int64_t s) {
    return Element{l / 4 + 8 * ((s / 2) % 2), 2 * (l % 4) + s % 2 + 8 * (s / 4)};
  });
  expect_matches(atom.b, 32, 4, 16, 8, [](int64_t l, int64_t s) {
    return Element{2 * (l % 4) + s % 2 + 8 * (s / 2), l / 4};
  });
  expect_matches(atom.c, 32, 4, 16, 8, [](int64_t l, int64_t s) {
    return Element{l / 4 + 8 * (s / 2), 2 * (l % 4) + s % 2};
  });
  // CuTe's spelling of the same C map (REFERENCE.md).
  EXPECT_EQ(to_string(atom.c.layout.layout()), "((4,8),(2,2)):((32,1),(16,8))");
  EXPECT_EQ(atom.a.registers(), 4);
  EXPECT_EQ(atom.b.registers(), 2);
  EXPECT_EQ(atom.c.registers(), 4);
}

TEST(MmaAtoms, M16n8k8IsTheFirstHalfInK) {
  MmaAtom atom = mma_m16n8k8_f16();
  MmaAtom k16 = mma_m16n8k16_f16();
  // PTX ISA 9.7.14.5.7: row = groupID (+8 for a2, a3), col = 2 * threadID_in_group + (i & 1).
  expect_matches(atom.a, 32, 4, 16, 8, [](int64_t l, int64_t s) {
    return Element{l / 4 + 8 * (s / 2), 2 * (l % 4) + s % 2};
  });
  expect_matches(atom.b, 32, 2, 8, 8, [](int64_t l, int64_t s) {
    return Element{2 * (l % 4) + s, l / 4};
  });
  expect_matches(atom.c, 32, 4, 16, 8, [](int64_t l, int64_t s) {
    return Element{l / 4 + 8 * (s / 2), 2 * (l % 4) + s % 2};
  });
  // Slots 0..3 of A and 0..1 of B agree with m16n8k16 (REFERENCE.md).
  for (int64_t l = 0; l < 32; ++l) {
    for (int64_t s = 0; s < 4; ++s) {
      EXPECT_EQ(atom.a.layout({{Axis::lane, l}, {Axis::value, s}}),
                k16.a.layout({{Axis::lane, l}, {Axis::value, s}}));
    }
    for (int64_t s = 0; s < 2; ++s) {
      EXPECT_EQ(atom.b.layout({{Axis::lane, l}, {Axis::value, s}}),
                k16.b.layout({{Axis::lane, l}, {Axis::value, s}}));
    }
  }
  EXPECT_EQ(atom.a.registers(), 2);
  EXPECT_EQ(atom.b.registers(), 1);
}

TEST(MmaAtoms, M16n8k32MatchesThePtxTables) {
  MmaAtom atom = mma_m16n8k32_f8();
  // PTX ISA, "Matrix Fragments for mma.m16n8k32" (.e4m3/.e5m2).
  expect_matches(atom.a, 32, 16, 16, 32, [](int64_t l, int64_t i) {
    bool upper = (i >= 4 && i < 8) || i >= 12;
    return Element{l / 4 + (upper ? 8 : 0), 4 * (l % 4) + (i & 3) + (i >= 8 ? 16 : 0)};
  });
  expect_matches(atom.b, 32, 8, 32, 8, [](int64_t l, int64_t i) {
    return Element{4 * (l % 4) + (i & 3) + (i >= 4 ? 16 : 0), l / 4};
  });
  expect_matches(atom.c, 32, 4, 16, 8, [](int64_t l, int64_t s) {
    return Element{l / 4 + 8 * (s / 2), 2 * (l % 4) + s % 2};
  });
  EXPECT_EQ(atom.a.values_per_register(), 4);
  EXPECT_EQ(atom.a.registers(), 4);
  EXPECT_EQ(atom.b.registers(), 2);
  EXPECT_EQ(atom.a.slot(13).reg, 3);
  EXPECT_EQ(atom.a.slot(13).part, 1);
}

TEST(LdmatrixAtom, MatchesThePtxDescriptionForEveryVariant) {
  for (int count : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      LdmatrixAtom atom = ldmatrix(count, trans);
      // Value 2i + h is half h of register i, which holds matrix i (rows 8i..).
      expect_matches(atom.result, 32, 2 * count, 8 * count, 8, [&](int64_t l, int64_t v) {
        int64_t matrix = v / 2, h = v % 2;
        return trans ? Element{8 * matrix + 2 * (l % 4) + h, l / 4}
                     : Element{8 * matrix + l / 4, 2 * (l % 4) + h};
      });
      ASSERT_EQ(atom.row_addresses.extent(Axis::lane), 8 * count);
      for (int64_t l = 0; l < 8 * count; ++l) {
        // Lane 8i + r addresses row r of matrix i.
        EXPECT_EQ(atom.row_addresses({{Axis::lane, l}}).at(Axis::row), 8 * (l / 8) + l % 8);
      }
      EXPECT_EQ(atom.result.registers(), count);
    }
  }
}

TEST(LdmatrixAtom, RefusesOtherMatrixCounts) {
  try {
    ldmatrix(3, false);
    FAIL() << "ldmatrix has no .x3";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("3 matrices; the instruction loads .x1, .x2 or .x4"),
              std::string::npos);
  }
}

TEST(LdmatrixAtom, X4FeedsTheM16n8k16AOperand) {
  // The classic pairing: ldmatrix.x4 of the 16x16 A tile, with matrix i =
  // (rows 8*(i%2).., cols 8*(i/2)..), gives each lane exactly its mma A slots.
  LdmatrixAtom load = ldmatrix(4, false);
  MmaAtom mma = mma_m16n8k16_f16();
  for (int64_t l = 0; l < 32; ++l) {
    for (int64_t v = 0; v < 8; ++v) {
      AxisPoint stacked = load.result.layout({{Axis::lane, l}, {Axis::value, v}});
      int64_t matrix = stacked.at(Axis::row) / 8;
      int64_t row = 8 * (matrix % 2) + stacked.at(Axis::row) % 8;
      int64_t col = 8 * (matrix / 2) + stacked.at(Axis::col);
      AxisPoint a = mma.a.layout({{Axis::lane, l}, {Axis::value, v}});
      EXPECT_EQ(a.at(Axis::row), row);
      EXPECT_EQ(a.at(Axis::col), col);
    }
  }
}

TEST(WgmmaAccumulator, MatchesTheClosedFormForEveryN) {
  for (int64_t n = 8; n <= 256; n += 8) {
    Fragment f = wgmma_accumulator(n);
    ASSERT_EQ(f.layout.extent(Axis::warp), 4);
    ASSERT_EQ(f.layout.extent(Axis::value), n / 2);
    ASSERT_TRUE(f.layout.is_bijective()) << n;
    for (int64_t w = 0; w < 4; ++w) {
      for (int64_t l = 0; l < 32; ++l) {
        for (int64_t i = 0; i < n / 2; ++i) {
          AxisPoint at = f.layout({{Axis::lane, l}, {Axis::warp, w}, {Axis::value, i}});
          ASSERT_EQ(at.at(Axis::row), 16 * w + l / 4 + 8 * ((i / 2) % 2)) << n;
          ASSERT_EQ(at.at(Axis::col), 8 * (i / 4) + 2 * (l % 4) + i % 2) << n;
          AxisPoint owner = f.layout.inverse(at);
          ASSERT_EQ(owner.at(Axis::lane), l);
          ASSERT_EQ(owner.at(Axis::warp), w);
          ASSERT_EQ(owner.at(Axis::value), i);
        }
      }
    }
  }
}

TEST(WgmmaAccumulator, RefusesOtherN) {
  EXPECT_THROW(wgmma_accumulator(12), LayoutError);
  EXPECT_THROW(wgmma_accumulator(264), LayoutError);
  EXPECT_THROW(wgmma_accumulator(0), LayoutError);
}

// PTX ISA 9.7.15.5.1.1, the A register fragment figures of m64nNk16
// (.f16/.bf16, a0..a7) and m64nNk32 (.e4m3/.e5m2, a0..a15), for every warp,
// lane and element, stated as the ISA states them ("for ai where ...").
TEST(WgmmaAFragment, MatchesTheIsaFiguresForBothWidths) {
  struct Width {
    int bits;
    int64_t k, values;
    std::function<Element(int64_t lane, int64_t i)> warp0;
  };
  const Width widths[] = {
      {16, 16, 8,
       [](int64_t l, int64_t i) {
         const bool lower = i == 2 || i == 3 || i == 6 || i == 7;
         return Element{l / 4 + (lower ? 8 : 0), 2 * (l % 4) + (i & 1) + (i >= 4 ? 8 : 0)};
       }},
      {8, 32, 16,
       [](int64_t l, int64_t i) {
         const bool lower = (i >= 4 && i < 8) || i >= 12;
         return Element{l / 4 + (lower ? 8 : 0), 4 * (l % 4) + (i & 3) + (i >= 8 ? 16 : 0)};
       }},
  };
  for (const Width& w : widths) {
    Fragment f = wgmma_a_fragment(w.bits);
    ASSERT_EQ(f.layout.extent(Axis::lane), 32);
    ASSERT_EQ(f.layout.extent(Axis::warp), 4);
    ASSERT_EQ(f.layout.extent(Axis::value), w.values);
    ASSERT_EQ(f.layout.extent(Axis::row), 64);
    ASSERT_EQ(f.layout.extent(Axis::col), w.k);
    ASSERT_TRUE(f.layout.is_bijective()) << f.layout.name();
    EXPECT_EQ(f.registers(), 4) << "four .b32 registers per thread";
    for (int64_t warp = 0; warp < 4; ++warp)
      for (int64_t l = 0; l < 32; ++l)
        for (int64_t i = 0; i < w.values; ++i) {
          AxisPoint at = f.layout({{Axis::lane, l}, {Axis::warp, warp}, {Axis::value, i}});
          const Element e = w.warp0(l, i);
          ASSERT_EQ(at.at(Axis::row), 16 * warp + e.row) << f.layout.name() << " lane " << l << " a" << i;
          ASSERT_EQ(at.at(Axis::col), e.col) << f.layout.name() << " lane " << l << " a" << i;
          AxisPoint owner = f.layout.inverse(at);
          ASSERT_EQ(owner.at(Axis::lane), l);
          ASSERT_EQ(owner.at(Axis::warp), warp);
          ASSERT_EQ(owner.at(Axis::value), i);
        }
  }
}

// Each warp's 16 rows are the mma.sync A operand of the same element width.
TEST(WgmmaAFragment, EachWarpHoldsAnMmaSyncAOperand) {
  const std::pair<Fragment, Fragment> pairs[] = {{wgmma_a_fragment(16), mma_m16n8k16_f16().a},
                                                 {wgmma_a_fragment(8), mma_m16n8k32_f8().a}};
  for (const auto& [wgmma, mma] : pairs)
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t i = 0; i < mma.layout.extent(Axis::value); ++i) {
        AxisPoint want = mma.layout({{Axis::lane, l}, {Axis::value, i}});
        AxisPoint got = wgmma.layout({{Axis::lane, l}, {Axis::warp, 2}, {Axis::value, i}});
        ASSERT_EQ(got.at(Axis::row), 32 + want.at(Axis::row)) << wgmma.layout.name();
        ASSERT_EQ(got.at(Axis::col), want.at(Axis::col)) << wgmma.layout.name();
      }
}

TEST(WgmmaAFragment, RefusesOtherElementWidths) {
  for (int bits : {4, 32}) {
    try {
      wgmma_a_fragment(bits);
      ADD_FAILURE() << bits << "-bit elements were accepted";
    } catch (const LayoutError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::to_string(bits) + "-bit elements"), std::string::npos) << msg;
      EXPECT_NE(msg.find("16-bit (bf16, f16) or 8-bit (e4m3, e5m2)"), std::string::npos) << msg;
    }
  }
}

TEST(MfmaAtom, MatchesReferenceClosedForms) {
  MfmaAtom atom = mfma_f32_32x32x8_bf16();
  // REFERENCE.md: A[i][k] in lane 32*(k/4) + i, slot k % 4; B likewise with j.
  expect_matches(atom.a, 64, 4, 32, 8, [](int64_t l, int64_t v) {
    return Element{l % 32, 4 * (l / 32) + v};
  });
  expect_matches(atom.b, 64, 4, 8, 32, [](int64_t l, int64_t v) {
    return Element{4 * (l / 32) + v, l % 32};
  });
  // C/D: register r of lane l holds i = 8(r/4) + 4(l/32) + r%4, j = l%32.
  expect_matches(atom.c, 64, 16, 32, 32, [](int64_t l, int64_t r) {
    return Element{8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32};
  });
  EXPECT_EQ(atom.a.registers(), 2);  // four bf16 in 2 VGPRs
  EXPECT_EQ(atom.c.registers(), 16);
}

TEST(TmemDatapath, EachShapeMatchesTheIsaFigures) {
  // PTX ISA 9.7.16.2.3.1, Figures 183-186, for .num = 1, 2 and 4.
  for (int64_t num : {1, 2, 4}) {
    expect_matches(tmem_datapath(TmemDataPath::lanes32_bits32, num), 32, num, 32, num,
                   [](int64_t t, int64_t i) { return Element{t, i}; });
    expect_matches(tmem_datapath(TmemDataPath::lanes16_bits64, num), 32, num, 16, 2 * num,
                   [](int64_t t, int64_t i) { return Element{t / 4 + 8 * (t % 2), 2 * i + (t / 2) % 2}; });
    expect_matches(tmem_datapath(TmemDataPath::lanes16_bits128, num), 32, 2 * num, 16, 4 * num,
                   [](int64_t t, int64_t i) { return Element{t / 4 + 8 * (i % 2), 4 * (i / 2) + t % 4}; });
    expect_matches(tmem_datapath(TmemDataPath::lanes16_bits256, num), 32, 4 * num, 16, 8 * num,
                   [](int64_t t, int64_t i) {
                     return Element{t / 4 + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * (t % 4) + i % 2};
                   });
  }
  // Hand-read cells: 16x256b thread 5 register 3 is lane 9, column 3; 16x64b
  // thread 3 is lane 8, column 1; 16x128b.x2 thread 6 register 3 is lane 9, column 6.
  EXPECT_EQ(tmem_datapath(TmemDataPath::lanes16_bits256, 1).layout({{Axis::lane, 5}, {Axis::value, 3}}),
            (AxisPoint{{Axis::row, 9}, {Axis::col, 3}}));
  EXPECT_EQ(tmem_datapath(TmemDataPath::lanes16_bits64, 1).layout({{Axis::lane, 3}, {Axis::value, 0}}),
            (AxisPoint{{Axis::row, 8}, {Axis::col, 1}}));
  EXPECT_EQ(tmem_datapath(TmemDataPath::lanes16_bits128, 2).layout({{Axis::lane, 6}, {Axis::value, 3}}),
            (AxisPoint{{Axis::row, 9}, {Axis::col, 6}}));
  EXPECT_EQ(tmem_datapath(TmemDataPath::lanes32_bits32, 128).registers(), 128);
}

TEST(TmemDatapath, RefusesANumTheShapeLacks) {
  for (auto [shape, num] : {std::pair{TmemDataPath::lanes32_bits32, int64_t{3}},
                            std::pair{TmemDataPath::lanes16_bits128, int64_t{128}},
                            std::pair{TmemDataPath::lanes16_bits256, int64_t{64}},
                            std::pair{TmemDataPath::lanes16_bits64, int64_t{0}}}) {
    try {
      tmem_datapath(shape, num);
      ADD_FAILURE() << ".num " << num << " was accepted";
    } catch (const LayoutError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(".num = " + std::to_string(num)), std::string::npos) << msg;
      EXPECT_NE(msg.find("a power of two in 1.."), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace warpforge::layout
