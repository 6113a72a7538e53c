#include "difftest/coverage.hpp"

namespace warpforge::difftest {

const std::vector<Uncovered>& uncovered() {
  static const std::vector<Uncovered> list = {
      {"cvt with .e2m1x2 (and e2m3x2, e3m2x2, ue8m0x2)",
       "the simulator refuses them (src/sim/convert.cpp)"},
      {"wgmma with .tf32 inputs",
       "the simulator's wgmma takes f16, bf16, e4m3 and e5m2 only (src/sim/wgmma.cpp)"},
      {"mma.sync with .tf32, .s8/.u8, .s4/.u4, .b1, .f64 inputs, and m8n8k4",
       "the simulator's mma.sync takes m16n8k8/k16 f16/bf16 and m16n8k32 e4m3/e5m2 only "
       "(src/sim/mma.cpp)"},
      {"wmma.* as single instruction forms",
       "the ISA leaves a fragment's element order unspecified, so only load -> mma -> store is "
       "observable: nvcc's wmma kernels (tests/corpus/wmma*.cu, family nvcc) cover them whole"},
      {"atomics whose threads race for one address with an order-dependent result (float add, "
       "exch, cas)",
       "the GPU's order is not fixed, so no recorded result is the truth; they run on one address "
       "per thread"},
      {"prmt.b32 with a mode (.f4e, .b4e, .rc8, .ecl, .ecr, .rc16)",
       "the simulator refuses the modes (src/sim/decode.cpp)"},
      {"min/max with .NaN or .xorsign.abs",
       "the simulator refuses the modifiers (src/sim/decode.cpp)"},
      {"texture and surface instructions", "the simulator refuses them"},
      {"cooperative groups' grid.sync (tests/corpus/cg_scan.cu)",
       "it needs a cooperative launch, which the runtime does not make; the nvcc family runs "
       "the tile and block reductions of reduce_cg.cu"},
      {"cp.async, cp.async.bulk, TMA, mbarrier, barriers, fences",
       "they move or order data without computing values; the whole kernels (family kernels) run "
       "them"},
  };
  return list;
}

}  // namespace warpforge::difftest
