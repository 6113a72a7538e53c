#include "kernels/stream_read.hpp"

#include "warpforge/dsl.hpp"

namespace warpforge::examples {

using namespace dsl;

ptx::Module stream_read_kernel(ptx::Target target) {
  Kernel k(kStreamReadKernel, target);
  Reg src = k.param_ptr("src", 16);
  Reg vectors = k.param(u32, "vectors");
  Reg out = k.param_ptr("out", 4);
  Reg thread = k.sreg(SReg::ctaid_x) * k.sreg(SReg::ntid_x) + k.sreg(SReg::tid_x);
  Reg stride = k.sreg(SReg::nctaid_x) * k.sreg(SReg::ntid_x);
  Reg fold = k.mov(u32, 0u);
  Reg i = k.mov(u32, thread);
  // Vector i's four words, loaded 16 bytes at once (PTX ISA 9.7.9.8, ld.v4).
  auto load = [&](const Reg& index) {
    Reg offset = k.reg(u64);
    k.mul_wide(offset, index, 16u);
    Regs v = k.regs(b32, 4);
    k.ld(Space::global, b32, v, at(src + offset));
    return v;
  };
  // Four loads in flight a thread before any is used, while four fit: the
  // memory's latency is hidden by loads in flight, not by threads alone.
  Reg three = stride * 3u;
  Reg last = k.reg(u32);  // i < last leaves room for i + 3 * stride
  k.selp(last, vectors - three, 0u, vectors > three);
  k.while_loop([&] { return i < last; },
               [&] {
                 std::vector<Regs> v;
                 for (int j = 0; j < 4; ++j) v.push_back(load(j == 0 ? i : Reg(i + stride * static_cast<std::uint32_t>(j))));
                 for (const Regs& w : v) k.mov(fold, fold ^ w[0] ^ w[1] ^ w[2] ^ w[3]);
                 k.mov(i, i + stride * 4u);
               });
  k.while_loop([&] { return i < vectors; },
               [&] {
                 Regs w = load(i);
                 k.mov(fold, fold ^ w[0] ^ w[1] ^ w[2] ^ w[3]);
                 k.mov(i, i + stride);
               });
  Reg warp_fold = k.reg(u32);
  k.redux_sync(Redux::xor_, warp_fold, fold);  // PTX ISA 9.7.13.10, sm_80
  k.if_then((thread & 31u) == 0u, [&] {
    Reg offset = k.reg(u64);
    k.mul_wide(offset, thread >> 5u, 4u);
    k.st(Space::global, u32, at(out + offset), warp_fold);
  });
  return k.module();
}

std::vector<std::uint32_t> stream_read_reference(const std::vector<std::uint32_t>& words, std::uint32_t threads) {
  std::vector<std::uint32_t> folds(threads / 32, 0u);
  const std::size_t vectors = words.size() / 4;
  for (std::size_t v = 0; v < vectors; ++v)
    for (std::size_t w = 0; w < 4; ++w) folds[(v % threads) / 32] ^= words[4 * v + w];
  return folds;
}

}  // namespace warpforge::examples
