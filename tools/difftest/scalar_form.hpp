// The commonest instruction form: one instruction `opcode d, a[, b[, c]][, imm...]`
// per thread, with sources and destination of 16, 32 or 64 bits or a
// predicate. Sources come from the thread's input words (a 16-bit source
// from the low half of one word, a 64-bit one from two, a predicate from bit
// 0 of one); the destination goes to one or two output words (a predicate as
// 0 or 1, a 16-bit value zero-extended).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "difftest/instruction_kernel.hpp"

namespace warpforge::difftest {

inline constexpr int kPredicate = 1;  // a width: a predicate operand

struct ScalarSpec {
  std::string opcode;        // "add.rz.ftz.f32"
  int dest_width = 32;       // kPredicate, 16, 32 or 64
  std::vector<int> sources;  // widths, as dest_width
  // One thread's source values, in the low bits of each (a predicate's in bit 0).
  std::function<void(Rng&, std::uint64_t* values)> values;
  std::vector<std::int64_t> immediates;  // trailing immediate operands (lop3's table)
  int threads = 256;
  Tolerance tolerance{};
};

InstructionForm scalar_form(ScalarSpec spec);

// Values where every source is drawn alike.
std::function<void(Rng&, std::uint64_t*)> each(int count, std::function<std::uint64_t(Rng&)> one);

}  // namespace warpforge::difftest
