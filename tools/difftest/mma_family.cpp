// mma.sync (PTX ISA 9.7.14.5.14): every shape and type the simulator runs
// (m16n8k8 and m16n8k16 with f16 or bf16 inputs, m16n8k32 with any pairing
// of e4m3 and e5m2), into f32 and f16 accumulators. Each lane's fragment
// registers come from its input words and its D registers go to its output
// words, so the harness needs no fragment layout: a case is one element of
// D, a dot product of K products plus C. Per warp the elements' exponents
// spread over a narrow, medium or wide range with random signs (the sums
// cancel, and alignment and truncation inside the hardware's additions
// show); one warp in eight also carries infinities and NaNs.
#include "difftest/families.hpp"
#include "difftest/instruction_kernel.hpp"
#include "difftest/mma_inputs.hpp"

namespace warpforge::difftest {

using namespace dsl;

Family mma_family() {
  Family f{"mma_sync",
           "mma.sync m16n8k8/k16 f16/bf16, m16n8k32 e4m3/e5m2, f32 and f16 accumulators",
           {}};
  struct Shape {
    const char* name;
    int a_regs, b_regs;
  };
  struct Types {
    const char *a, *b;
  };
  auto add = [&](const Shape& shape, const Types& t, bool f16_acc) {
    const std::string acc = f16_acc ? "f16" : "f32";
    const int c_regs = f16_acc ? 2 : 4;
    constexpr int kWarps = 32;
    InstructionForm form;
    form.name = std::string("mma.sync.aligned.") + shape.name + ".row.col." + acc + "." + t.a +
                "." + t.b + "." + acc;
    form.threads = 32 * kWarps;
    form.cases_override = 16 * 8 * kWarps;
    form.in_words = shape.a_regs + shape.b_regs + c_regs;
    form.out_words = c_regs;
    const FloatFormat& fa = element_format(t.a);
    const FloatFormat& fb = element_format(t.b);
    form.inputs = [&fa, &fb, a_regs = shape.a_regs, b_regs = shape.b_regs, c_regs, f16_acc](
                      Rng& rng, std::vector<std::uint32_t>& words, int in_words) {
      for (std::size_t w = 0; w < words.size(); w += 32 * static_cast<std::size_t>(in_words)) {
        const MmaWarpInputs warp = mma_warp_inputs(rng);
        for (int l = 0; l < 32; ++l) {
          std::uint32_t* lane = &words[w + static_cast<std::size_t>(l * in_words)];
          for (int r = 0; r < a_regs; ++r) lane[r] = packed_elements(rng, fa, warp);
          for (int r = 0; r < b_regs; ++r) lane[a_regs + r] = packed_elements(rng, fb, warp);
          for (int r = 0; r < c_regs; ++r)
            lane[a_regs + b_regs + r] =
                f16_acc ? packed_elements(rng, kF16, warp, 2 * warp.spread)
                        : static_cast<std::uint32_t>(accumulator_value(rng, kF32, warp));
        }
      }
    };
    form.body = [opcode = form.name, a_regs = shape.a_regs, b_regs = shape.b_regs, c_regs](
                    Kernel& k, const ThreadIo& io) {
      auto slice = [&](int from, int n) {
        return Regs(io.in.begin() + from, io.in.begin() + from + n);
      };
      k.inst(opcode, io.out, slice(0, a_regs), slice(a_regs, b_regs),
             slice(a_regs + b_regs, c_regs));
    };
    f.units.push_back(instruction_unit(std::move(form)));
  };
  for (const Shape& shape : {Shape{"m16n8k8", 2, 1}, Shape{"m16n8k16", 4, 2}}) {
    add(shape, {"f16", "f16"}, false);
    add(shape, {"f16", "f16"}, true);
    add(shape, {"bf16", "bf16"}, false);
  }
  for (const char* a : {"e4m3", "e5m2"})
    for (const char* b : {"e4m3", "e5m2"})
      for (bool f16_acc : {false, true}) add({"m16n8k32", 4, 2}, {a, b}, f16_acc);
  return f;
}

}  // namespace warpforge::difftest
