// wgmma.mma_async (PTX ISA 9.7.15): bf16, f16 and every pairing of e4m3 and
// e5m2, into f32 accumulators (and f16 ones for f16 and FP8 inputs), at
// several N; A and B from shared memory. A warpgroup (one CTA of 128
// threads) stores its input words, A (64 x K) and then B (N x K) as K-major
// 8 x 16-byte core matrices without swizzle (PTX ISA 9.7.15.5.1), to shared
// memory, loads its accumulators C from the rest, and computes D = A·B + C.
// The elements are drawn independently, so the harness needs no layout of
// its own: the descriptors tell the GPU and the simulator alike where each
// element sits. A case is one element of D.
#include "difftest/families.hpp"
#include "difftest/instruction_kernel.hpp"
#include "difftest/mma_inputs.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

// The operands' 8-row groups: two core matrices along K (32 bytes of K),
// 128 bytes apart (the leading byte offset), groups 256 bytes apart (the
// stride byte offset); the matrix descriptor's fields (PTX ISA 9.7.15.5.1.2):
// start >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, no swizzle.
constexpr std::uint64_t kLbo = 128, kSbo = 256;
constexpr std::uint64_t kDescriptorFields = (kLbo >> 4) << 16 | (kSbo >> 4) << 32;
constexpr int kOperandRowBytes = 32;  // K = 16 of 16-bit or 32 of 8-bit elements

}  // namespace

Family wgmma_family() {
  Family f{"wgmma",
           "wgmma.mma_async bf16/f16/e4m3/e5m2, f32 and f16 accumulators, N = 16, 64, 128, 256",
           {}};
  auto add = [&](const char* a, const char* b, bool f16_acc, int n) {
    const bool half = std::string(a) == "f16" || std::string(a) == "bf16";
    const int k_dim = half ? 16 : 32;
    const std::string acc = f16_acc ? "f16" : "f32";
    const int acc_words = f16_acc ? n / 4 : n / 2;
    const int a_words = 64 * kOperandRowBytes / 4, b_words = n * kOperandRowBytes / 4;
    const int image_words = (a_words + b_words + kBlockThreads - 1) / kBlockThreads;  // per thread
    const int warpgroups = std::max(1, 4096 / (64 * n));
    InstructionForm form;
    form.name = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k" +
                std::to_string(k_dim) + "." + acc + "." + a + "." + b;
    form.threads = kBlockThreads * warpgroups;
    form.cases_override = 64 * n * warpgroups;
    form.in_words = image_words + acc_words;
    form.out_words = acc_words;
    const FloatFormat& fa = element_format(a);
    const FloatFormat& fb = element_format(b);
    form.inputs = [&fa, &fb, a_words, b_words, image_words, acc_words, f16_acc](
                      Rng& rng, std::vector<std::uint32_t>& words, int in_words) {
      const std::size_t group = static_cast<std::size_t>(kBlockThreads * in_words);
      for (std::size_t g = 0; g < words.size(); g += group) {
        const MmaWarpInputs inputs = mma_warp_inputs(rng);
        for (int i = 0; i < kBlockThreads * image_words; ++i) {
          const std::uint32_t v = i < a_words             ? packed_elements(rng, fa, inputs)
                                  : i < a_words + b_words ? packed_elements(rng, fb, inputs)
                                                          : 0;
          words[g + static_cast<std::size_t>((i / image_words) * in_words + i % image_words)] = v;
        }
        for (int t = 0; t < kBlockThreads; ++t)
          for (int j = 0; j < acc_words; ++j)
            words[g + static_cast<std::size_t>(t * in_words + image_words + j)] =
                f16_acc ? packed_elements(rng, kF16, inputs, 2 * inputs.spread + 2)
                        : static_cast<std::uint32_t>(accumulator_value(rng, kF32, inputs));
      }
    };
    form.body = [a, b, half, f16_acc, image_words, acc_words, a_words, opcode = form.name](
                    Kernel& k, const ThreadIo& io) {
      Shared image = k.shared("image", 4 * kBlockThreads * image_words, 1024);
      Reg base = k.address_of(image);
      Reg mine = base + k.sreg(SReg::tid_x) * (4 * image_words);
      for (int i = 0; i < image_words; ++i)
        k.st(Space::shared, b32, at(mine, 4 * i), io.in[static_cast<std::size_t>(i)]);
      k.bar_sync();
      k.fence_proxy_async_shared();
      auto descriptor = [&](const Reg& address) {
        Reg d = k.reg(b64);
        k.cvt(u64, u32, d, address >> 4);
        k.add(d.as(u64), d.as(u64), static_cast<std::uint64_t>(kDescriptorFields));
        return d;
      };
      Reg desc_a = descriptor(base), desc_b = descriptor(base + 4 * a_words);
      Regs d = k.regs(f16_acc ? b32 : f32, acc_words, "acc");
      for (int j = 0; j < acc_words; ++j)
        k.mov(d[static_cast<std::size_t>(j)], io.in[static_cast<std::size_t>(image_words + j)]);
      k.wgmma_fence();
      if (f16_acc) {
        std::vector<ptx::Operand> ops = {k.operand_of(d),      k.operand_of(desc_a),
                                         k.operand_of(desc_b), ptx::Operand::imm(1),
                                         ptx::Operand::imm(1), ptx::Operand::imm(1)};
        if (half) ops.insert(ops.end(), {ptx::Operand::imm(0), ptx::Operand::imm(0)});
        k.emit(ptx::Instruction::parse_opcode(opcode), ops);
      } else {
        k.wgmma_mma_async(*ptx::parse_type(a), *ptx::parse_type(b), d, desc_a, desc_b, true,
                          WgmmaMajor::k, WgmmaMajor::k);
      }
      k.wgmma_commit_group();
      k.wgmma_wait_group(0);
      for (int j = 0; j < acc_words; ++j)
        k.mov(io.out[static_cast<std::size_t>(j)], d[static_cast<std::size_t>(j)]);
    };
    f.units.push_back(instruction_unit(std::move(form)));
  };
  const std::pair<const char*, const char*> types[] = {{"bf16", "bf16"}, {"f16", "f16"},
                                                       {"e4m3", "e4m3"}, {"e4m3", "e5m2"},
                                                       {"e5m2", "e4m3"}, {"e5m2", "e5m2"}};
  for (const auto& [a, b] : types) {
    for (int n : {16, 64, 256}) add(a, b, false, n);
    if (std::string(a) != "bf16")
      for (int n : {16, 128}) add(a, b, true, n);
  }
  return f;
}

}  // namespace warpforge::difftest
