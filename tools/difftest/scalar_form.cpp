#include "difftest/scalar_form.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

int words_of(int width) {
  return width == 64 ? 2 : 1;
}

}  // namespace

std::function<void(Rng&, std::uint64_t*)> each(int count, std::function<std::uint64_t(Rng&)> one) {
  return [count, one = std::move(one)](Rng& rng, std::uint64_t* v) {
    for (int i = 0; i < count; ++i) v[i] = one(rng);
  };
}

InstructionForm scalar_form(ScalarSpec spec) {
  InstructionForm form;
  form.name = spec.opcode;
  for (std::int64_t imm : spec.immediates) form.name += " " + std::to_string(imm);
  form.threads = spec.threads;
  form.tolerance = spec.tolerance;
  form.in_words = 0;
  for (int w : spec.sources) form.in_words += words_of(w);
  form.out_words = words_of(spec.dest_width);
  const std::vector<int> sources = spec.sources;
  form.inputs = per_thread([sources, values = spec.values](Rng& rng, std::uint32_t* words) {
    std::uint64_t v[4] = {};
    values(rng, v);
    int at = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      words[at++] = static_cast<std::uint32_t>(v[i]);
      if (sources[i] == 64) words[at++] = static_cast<std::uint32_t>(v[i] >> 32);
    }
  });
  form.body = [spec](Kernel& k, const ThreadIo& io) {
    std::vector<ptx::Operand> operands;
    std::optional<Pred> pred_dest;
    std::optional<Reg> dest;
    if (spec.dest_width == kPredicate) {
      pred_dest = k.pred();
      operands.push_back(k.operand_of(*pred_dest));
    } else if (spec.dest_width == 32) {
      dest = io.out[0];
      operands.push_back(k.operand_of(*dest));
    } else {
      dest = k.reg(spec.dest_width == 64 ? b64 : b16);
      operands.push_back(k.operand_of(*dest));
    }
    std::size_t at = 0;
    for (int w : spec.sources) {
      const Reg& word = io.in[at];
      if (w == kPredicate) {
        Pred p = k.pred();
        k.setp(p, Cmp::ne, word & 1, 0);
        operands.push_back(k.operand_of(p));
      } else if (w == 16) {
        operands.push_back(k.operand_of(low16(k, b16, word)));
      } else if (w == 64) {
        operands.push_back(k.operand_of(join64(k, b64, word, io.in[at + 1])));
      } else {
        operands.push_back(k.operand_of(word));
      }
      at += static_cast<std::size_t>(words_of(w));
    }
    for (std::int64_t imm : spec.immediates) operands.push_back(ptx::Operand::imm(imm));
    k.emit(ptx::Instruction::parse_opcode(spec.opcode), operands);
    if (pred_dest)
      pred_word(k, io.out[0], *pred_dest);
    else if (spec.dest_width == 64)
      split64(k, *dest, io.out[0], io.out[1]);
    else if (spec.dest_width == 16)
      widen16(k, io.out[0], *dest);
  };
  return form;
}

}  // namespace warpforge::difftest
