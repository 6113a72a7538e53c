// ldmatrix and stmatrix (PTX ISA 9.7.9.24-25... "ldmatrix", "stmatrix"):
// x1/x2/x4, with and without .trans. Each warp owns 32 rows of 16 bytes of
// shared memory, filled from its lanes' input words; lane L names row
// (7·L + w) mod 32 of its warp w (a permutation, so no two lanes of a
// stmatrix write one row). ldmatrix returns its registers; stmatrix stores
// the lanes' registers and each lane returns its row of the result.
#include "difftest/families.hpp"
#include "difftest/instruction_kernel.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

constexpr int kRowBytes = 16, kWarpBytes = 32 * kRowBytes;

// The warp's rows and this lane's row address: {rows base, lane's own row, named row}.
struct Rows {
  Reg own, named;
};

Rows rows(Kernel& k) {
  Shared buf = k.shared("rows", kWarpBytes * (kBlockThreads / 32), 16);
  Reg tid = k.sreg(SReg::tid_x), ctaid = k.sreg(SReg::ctaid_x);
  Reg lane = tid & 31, warp = tid >> 5;
  Reg base = k.address_of(buf) + warp * kWarpBytes;
  Reg global_warp = ctaid * (kBlockThreads / 32) + warp;
  Reg named = ((lane * 7 + global_warp) & 31) * kRowBytes;
  return {base + lane * kRowBytes, base + named};
}

}  // namespace

Family matrix_memory_family() {
  Family f{"matrix_memory", "ldmatrix and stmatrix, x1/x2/x4, .trans", {}};
  for (int count : {1, 2, 4})
    for (bool trans : {false, true}) {
      const std::string shape =
          ".m8n8.x" + std::to_string(count) + (trans ? ".trans" : "") + ".shared.b16";
      InstructionForm load;
      load.name = "ldmatrix.sync.aligned" + shape;
      load.threads = 1024;
      load.in_words = 4;
      load.out_words = count;
      load.inputs = per_thread([](Rng& rng, std::uint32_t* w) {
        for (int i = 0; i < 4; ++i) w[i] = rng.u32();
      });
      load.body = [count, trans](Kernel& k, const ThreadIo& io) {
        const Rows r = rows(k);
        for (int i = 0; i < 4; ++i)
          k.st(Space::shared, b32, at(r.own, 4 * i), io.in[static_cast<std::size_t>(i)]);
        k.bar_warp_sync();
        Regs d(io.out.begin(), io.out.begin() + count);
        k.ldmatrix(d, at(r.named), trans);
      };
      f.units.push_back(instruction_unit(std::move(load)));

      InstructionForm store;
      store.name = "stmatrix.sync.aligned" + shape;
      store.threads = 1024;
      store.in_words = 4 + count;  // the row's first contents, then the registers to store
      store.out_words = 4;
      store.inputs = per_thread([count](Rng& rng, std::uint32_t* w) {
        for (int i = 0; i < 4 + count; ++i) w[i] = rng.u32();
      });
      store.body = [count, trans](Kernel& k, const ThreadIo& io) {
        const Rows r = rows(k);
        for (int i = 0; i < 4; ++i)
          k.st(Space::shared, b32, at(r.own, 4 * i), io.in[static_cast<std::size_t>(i)]);
        k.bar_warp_sync();
        Regs s(io.in.begin() + 4, io.in.end());
        k.stmatrix(at(r.named), s, trans);
        k.bar_warp_sync();
        for (int i = 0; i < 4; ++i)
          k.ld(Space::shared, b32, io.out[static_cast<std::size_t>(i)], at(r.own, 4 * i));
      };
      f.units.push_back(instruction_unit(std::move(store)));
    }
  return f;
}

}  // namespace warpforge::difftest
