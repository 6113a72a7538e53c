// Warp collectives (PTX ISA 9.7.9.6 shfl.sync, 9.7.13.9 vote.sync,
// 9.7.13.11 redux.sync, 9.7.13.12 elect.sync), every mode, all 32 lanes
// taking part. Each lane's result counts as a case. shfl lanes take random
// offsets (past 31 too) and, per warp, a segment width and clamp of c; votes
// see per-warp patterns (all set, none set, random, one lane different).
#include "difftest/families.hpp"
#include "difftest/instruction_kernel.hpp"

namespace warpforge::difftest {

using namespace dsl;

namespace {

constexpr int kThreads = 2048;

// Inputs generated a warp at a time: `one` fills the warp's 32 lanes' words.
std::function<void(Rng&, std::vector<std::uint32_t>&, int)> per_warp(
    std::function<void(Rng&, std::uint32_t* words, int in_words)> one) {
  return [one = std::move(one)](Rng& rng, std::vector<std::uint32_t>& words, int in_words) {
    const std::size_t warp = 32 * static_cast<std::size_t>(in_words);
    for (std::size_t w = 0; w < words.size(); w += warp) one(rng, &words[w], in_words);
  };
}

// Per-warp predicate patterns in bit 0 of each lane's first word.
void predicate_pattern(Rng& rng, std::uint32_t* words, int in_words) {
  const std::uint64_t pattern = rng.below(4);
  const int odd_lane = static_cast<int>(rng.below(32));
  for (int l = 0; l < 32; ++l) {
    std::uint32_t bit = pattern == 0   ? 1
                        : pattern == 1 ? 0
                                       : static_cast<std::uint32_t>(rng.bits() & 1);
    if (pattern == 3) bit = l == odd_lane;
    words[l * in_words] = bit | (rng.u32() & ~1u);
  }
}

// One lane's redux operand. 32 random words AND to 0 and OR to all ones, so
// the logic operations take words with one bit clear (and) or set (or).
std::uint32_t lane_operand(Rng& rng, Redux op, bool small) {
  if (op == Redux::and_) return ~(1u << rng.below(32)) & ~(1u << rng.below(32));
  if (op == Redux::or_) return 1u << rng.below(32);
  return small ? static_cast<std::uint32_t>(rng.below(8))
               : static_cast<std::uint32_t>(int_value(rng, 32));
}

void add_form(Family& f, std::string name, int in_words, int out_words,
              std::function<void(Rng&, std::vector<std::uint32_t>&, int)> inputs,
              std::function<void(Kernel&, const ThreadIo&)> body) {
  InstructionForm form;
  form.name = std::move(name);
  form.in_words = in_words;
  form.out_words = out_words;
  form.threads = kThreads;
  form.inputs = std::move(inputs);
  form.body = std::move(body);
  f.units.push_back(instruction_unit(std::move(form)));
}

}  // namespace

Family warp_family() {
  Family f{"warp", "shfl.sync, vote.sync, redux.sync, elect.sync", {}};
  const std::pair<Shfl, const char*> modes[] = {
      {Shfl::up, "up"}, {Shfl::down, "down"}, {Shfl::bfly, "bfly"}, {Shfl::idx, "idx"}};
  for (const auto& [mode, mode_name] : modes) {
    const bool up = mode == Shfl::up;
    add_form(f, std::string("shfl.sync.") + mode_name + ".b32", 3, 2,
             per_warp([up](Rng& rng, std::uint32_t* words, int in_words) {
               // c: the segment width's mask in bits 12:8 and the clamp in 4:0, as
               // CUDA's __shfl*_sync builds it, or random bits for one warp in four.
               const std::uint32_t width = 1u << rng.below(6);
               const std::uint32_t c =
                   rng.percent(25) ? (rng.u32() & 0x1F1F) : ((32 - width) << 8) | (up ? 0 : 0x1F);
               for (int l = 0; l < 32; ++l) {
                 words[l * in_words] = rng.u32();
                 words[l * in_words + 1] =
                     static_cast<std::uint32_t>(rng.percent(80) ? rng.below(32) : rng.below(256));
                 words[l * in_words + 2] = c;
               }
             }),
             [mode](Kernel& k, const ThreadIo& io) {
               Pred in_range = k.pred();
               k.shfl_sync(mode, io.out[0], io.in[0], io.in[1], io.in[2], 0xffffffffu, in_range);
               pred_word(k, io.out[1], in_range);
             });
  }
  const std::pair<Vote, const char*> votes[] = {
      {Vote::all, "all"}, {Vote::any, "any"}, {Vote::uni, "uni"}};
  for (const auto& [vote, vote_name] : votes)
    add_form(f, std::string("vote.sync.") + vote_name + ".pred", 1, 1, per_warp(predicate_pattern),
             [vote](Kernel& k, const ThreadIo& io) {
               Pred p = k.setp(Cmp::ne, io.in[0] & 1, 0), d = k.pred();
               k.vote_sync(vote, d, p);
               pred_word(k, io.out[0], d);
             });
  add_form(f, "vote.sync.ballot.b32", 1, 1, per_warp(predicate_pattern),
           [](Kernel& k, const ThreadIo& io) {
             k.ballot_sync(io.out[0], k.setp(Cmp::ne, io.in[0] & 1, 0));
           });
  const std::tuple<Redux, const char*, Type> reductions[] = {
      {Redux::add, "add.u32", u32},  {Redux::min, "min.u32", u32}, {Redux::max, "max.u32", u32},
      {Redux::add, "add.s32", s32},  {Redux::min, "min.s32", s32}, {Redux::max, "max.s32", s32},
      {Redux::and_, "and.b32", b32}, {Redux::or_, "or.b32", b32},  {Redux::xor_, "xor.b32", b32}};
  for (const auto& [op, op_name, type] : reductions)
    add_form(f, std::string("redux.sync.") + op_name, 1, 1,
             per_warp([op](Rng& rng, std::uint32_t* words, int in_words) {
               const bool small = rng.percent(30);  // sums that do not wrap, extremes that tie
               for (int l = 0; l < 32; ++l) words[l * in_words] = lane_operand(rng, op, small);
             }),
             [op, type](Kernel& k, const ThreadIo& io) {
               k.redux_sync(op, io.out[0].as(type), io.in[0].as(type));
             });
  add_form(f, "elect.sync", 1, 2, per_thread([](Rng& rng, std::uint32_t* w) { w[0] = rng.u32(); }),
           [](Kernel& k, const ThreadIo& io) {
             Pred p = k.pred();
             k.elect_sync(io.out[0], p);
             pred_word(k, io.out[1], p);
           });
  return f;
}

}  // namespace warpforge::difftest
