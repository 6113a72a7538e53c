#include "difftest/instruction_kernel.hpp"

#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

ptx::Module build(const InstructionForm& form) {
  // sm_90a for every form: the recording runs on an H100 or H200 (the
  // simulator runs any target), and wgmma needs it.
  Kernel k("difftest", Target::sm_90a);
  Reg in = k.param_ptr("in", 4), out = k.param_ptr("out", 4);
  Reg thread = k.reg(u32);
  k.mad(thread, k.sreg(SReg::ctaid_x), kBlockThreads, k.sreg(SReg::tid_x));
  Reg in_offset = k.reg(u64), out_offset = k.reg(u64);
  k.mul_wide(in_offset, thread, 4 * form.in_words);
  k.mul_wide(out_offset, thread, 4 * form.out_words);
  Reg in_at = in + in_offset, out_at = out + out_offset;
  ThreadIo io{k.regs(b32, form.in_words, "in"), k.regs(b32, form.out_words, "out"), thread, out_at};
  for (int i = 0; i < form.in_words; ++i)
    k.ld(Space::global, b32, io.in[static_cast<std::size_t>(i)], at(in_at, 4 * i));
  form.body(k, io);
  for (int i = 0; i < form.out_words; ++i)
    k.st(Space::global, b32, at(out_at, 4 * i), io.out[static_cast<std::size_t>(i)]);
  return k.module();
}

}  // namespace

Unit instruction_unit(InstructionForm form) {
  Unit u;
  u.name = form.name;
  u.cases = form.cases_override ? form.cases_override : form.threads;
  u.tolerance = form.tolerance;
  u.in_words = form.in_words;
  u.inputs = [form](std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::uint32_t> words(static_cast<std::size_t>(form.threads) *
                                     static_cast<std::size_t>(form.in_words));
    form.inputs(rng, words, form.in_words);
    return words;
  };
  u.run = [form, inputs = u.inputs](const runtime::Device& device, std::uint64_t seed) {
    const ptx::Module module = build(form);
    const std::vector<std::uint32_t> words = inputs(seed);
    const std::size_t out_bytes =
        static_cast<std::size_t>(form.threads) * static_cast<std::size_t>(form.out_words) * 4;
    runtime::Buffer in(device, words.size() * 4), out(device, out_bytes);
    in.upload(words);
    out.fill(0xFF);
    runtime::Module loaded(device, module);
    loaded.launch("difftest",
                  {.grid = {static_cast<std::uint32_t>(form.threads / kBlockThreads)},
                   .block = {kBlockThreads}},
                  {in, out});
    Outcome o;
    o.bytes = out.download<std::uint8_t>(out_bytes);
    o.fingerprint = runtime::to_hex(runtime::sha256(module.to_ptx())).substr(0, 16);
    return o;
  };
  return u;
}

std::function<void(Rng&, std::vector<std::uint32_t>&, int)> per_thread(
    std::function<void(Rng&, std::uint32_t*)> one) {
  return [one = std::move(one)](Rng& rng, std::vector<std::uint32_t>& words, int in_words) {
    for (std::size_t t = 0; t < words.size(); t += static_cast<std::size_t>(in_words))
      one(rng, &words[t]);
  };
}

Reg join64(Kernel& k, Type t, const Reg& lo, const Reg& hi) {
  Reg v = k.reg(t);
  k.inst("mov.b64", v, Regs{lo, hi});
  return v;
}

void split64(Kernel& k, const Reg& v, const Reg& lo, const Reg& hi) {
  k.inst("mov.b64", Regs{lo, hi}, v);
}

Reg low16(Kernel& k, Type t, const Reg& word) {
  Reg lo = k.reg(b16), hi = k.reg(b16);
  k.inst("mov.b32", Regs{lo, hi}, word);
  return lo.as(t);
}

void widen16(Kernel& k, const Reg& out, const Reg& half) {
  Reg zero = k.reg(b16);
  k.mov(zero, 0);
  k.inst("mov.b32", out, Regs{half.as(b16), zero});
}

void pred_word(Kernel& k, const Reg& out, const Pred& p) {
  k.selp(out, 1, 0, p);
}

}  // namespace warpforge::difftest
