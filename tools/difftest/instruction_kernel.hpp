// A kernel that applies one instruction form to arrays of inputs: thread t
// loads its `in_words` 32-bit input words, the form's body computes its
// `out_words` output words, and thread t stores them. Blocks of 128 threads
// (a warpgroup, so that wgmma forms fit the same frame). Outputs are poisoned
// (all bytes 0xFF) before the launch, so a word the body never writes shows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "difftest/family.hpp"
#include "difftest/values.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::difftest {

inline constexpr int kBlockThreads = 128;

struct ThreadIo {
  dsl::Regs in;          // this thread's input words (b32)
  dsl::Regs out;         // its output words (b32): the body writes every one
  dsl::Reg thread;       // the thread's index in the grid (u32)
  dsl::Reg out_address;  // the global address of its output words (u64)
};

struct InstructionForm {
  std::string name;  // the PTX form it covers
  int in_words = 1, out_words = 1;
  int threads = 1024;  // a multiple of kBlockThreads
  // Cases per thread (1) or threads per case (warp collectives count each
  // lane's result as a case too; MMAs count output elements, see cases_override).
  std::int64_t cases_override = 0;
  // Fills every thread's input words: words[t * in_words + i].
  std::function<void(Rng&, std::vector<std::uint32_t>& words, int in_words)> inputs;
  std::function<void(dsl::Kernel&, const ThreadIo&)> body;
  Tolerance tolerance{};
};

Unit instruction_unit(InstructionForm form);

// Per-thread input generation: `one` fills one thread's words.
std::function<void(Rng&, std::vector<std::uint32_t>&, int)> per_thread(
    std::function<void(Rng&, std::uint32_t* words)> one);

// Body helpers: 64-bit and 16-bit values from and to the b32 words.
dsl::Reg join64(dsl::Kernel& k, dsl::Type t, const dsl::Reg& lo, const dsl::Reg& hi);
void split64(dsl::Kernel& k, const dsl::Reg& v, const dsl::Reg& lo, const dsl::Reg& hi);
dsl::Reg low16(dsl::Kernel& k, dsl::Type t, const dsl::Reg& word);  // the word's low half as t
void widen16(dsl::Kernel& k, const dsl::Reg& out,
             const dsl::Reg& half);  // out = zero-extended half
void pred_word(dsl::Kernel& k, const dsl::Reg& out, const dsl::Pred& p);  // out = p ? 1 : 0

}  // namespace warpforge::difftest
