#include "warpforge/ptx/modifiers.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "warpforge/ptx/types.hpp"

namespace warpforge::ptx {
namespace {

using C = ModifierClass;

template <class E>
constexpr std::uint8_t v(E e) {
  return static_cast<std::uint8_t>(e);
}

// Every modifier word but the types (those are ptx::Type's, types.cpp). A word
// may have a meaning in several classes (.add is an atomic operation, .and a
// setp combination and an atomic operation, .sync a promise of convergence);
// the opcode's classes pick one (find_modifier).
constexpr Modifier kModifiers[] = {
    {"rn", C::rounding, v(Rounding::rn)},
    {"rz", C::rounding, v(Rounding::rz)},
    {"rm", C::rounding, v(Rounding::rm)},
    {"rp", C::rounding, v(Rounding::rp)},
    {"rna", C::rounding, v(Rounding::rna)},
    {"rni", C::integral_rounding, v(Rounding::rn)},
    {"rzi", C::integral_rounding, v(Rounding::rz)},
    {"rmi", C::integral_rounding, v(Rounding::rm)},
    {"rpi", C::integral_rounding, v(Rounding::rp)},
    {"ftz", C::ftz},
    {"sat", C::saturation, 0},
    {"satfinite", C::saturation, 1},
    {"relu", C::relu},
    {"approx", C::approximation, 0},
    {"full", C::approximation, 1},
    {"noftz", C::noftz},
    {"eq", C::comparison, v(Cmp::eq)},
    {"ne", C::comparison, v(Cmp::ne)},
    {"lt", C::comparison, v(Cmp::lt)},
    {"le", C::comparison, v(Cmp::le)},
    {"gt", C::comparison, v(Cmp::gt)},
    {"ge", C::comparison, v(Cmp::ge)},
    {"lo", C::comparison, v(Cmp::lo)},
    {"ls", C::comparison, v(Cmp::ls)},
    {"hi", C::comparison, v(Cmp::hi)},
    {"hs", C::comparison, v(Cmp::hs)},
    {"equ", C::comparison, v(Cmp::equ)},
    {"neu", C::comparison, v(Cmp::neu)},
    {"ltu", C::comparison, v(Cmp::ltu)},
    {"leu", C::comparison, v(Cmp::leu)},
    {"gtu", C::comparison, v(Cmp::gtu)},
    {"geu", C::comparison, v(Cmp::geu)},
    {"num", C::comparison, v(Cmp::num)},
    {"nan", C::comparison, v(Cmp::nan)},
    {"and", C::bool_op, v(BoolOp::and_)},
    {"or", C::bool_op, v(BoolOp::or_)},
    {"xor", C::bool_op, v(BoolOp::xor_)},
    {"add", C::atomic_op, v(AtomOp::add)},
    {"min", C::atomic_op, v(AtomOp::min)},
    {"max", C::atomic_op, v(AtomOp::max)},
    {"inc", C::atomic_op, v(AtomOp::inc)},
    {"dec", C::atomic_op, v(AtomOp::dec)},
    {"exch", C::atomic_op, v(AtomOp::exch)},
    {"cas", C::atomic_op, v(AtomOp::cas)},
    {"and", C::atomic_op, v(AtomOp::and_)},
    {"or", C::atomic_op, v(AtomOp::or_)},
    {"xor", C::atomic_op, v(AtomOp::xor_)},
    {"global", C::space, v(Space::global)},
    {"shared", C::space, v(Space::shared)},
    {"shared::cta", C::space, v(Space::shared)},
    {"shared::cluster", C::space, v(Space::shared)},
    {"local", C::space, v(Space::local)},
    {"param", C::space, v(Space::param)},
    {"param::entry", C::space, v(Space::param)},
    {"param::func", C::space, v(Space::param)},
    {"const", C::space, v(Space::const_)},
    {"v2", C::vector, 2},
    {"v4", C::vector, 4},
    {"v8", C::vector, 8},
    {"x1", C::matrix_count, 1},
    {"x2", C::matrix_count, 2},
    {"x4", C::matrix_count, 4},
    {"trans", C::transpose},
    {"lo", C::mul_mode, v(MulMode::lo)},
    {"hi", C::mul_mode, v(MulMode::hi)},
    {"wide", C::mul_mode, v(MulMode::wide)},
    {"up", C::shfl_mode, v(ShflMode::up)},
    {"down", C::shfl_mode, v(ShflMode::down)},
    {"bfly", C::shfl_mode, v(ShflMode::bfly)},
    {"idx", C::shfl_mode, v(ShflMode::idx)},
    {"all", C::vote_mode, v(VoteMode::all)},
    {"any", C::vote_mode, v(VoteMode::any)},
    {"uni", C::vote_mode, v(VoteMode::uni)},
    {"ballot", C::vote_mode, v(VoteMode::ballot)},
    {"m16n8k8", C::shape, v(MmaShape::m16n8k8)},
    {"m16n8k16", C::shape, v(MmaShape::m16n8k16)},
    {"m16n8k32", C::shape, v(MmaShape::m16n8k32)},
    {"m8n8k4", C::shape, v(MmaShape::m8n8k4)},
    {"m16n16k16", C::shape, v(MmaShape::m16n16k16)},
    {"m32n8k16", C::shape, v(MmaShape::m32n8k16)},
    {"m8n32k16", C::shape, v(MmaShape::m8n32k16)},
    {"m16n16k8", C::shape, v(MmaShape::m16n16k8)},
    {"m8n8", C::shape, v(MmaShape::m8n8)},
    {"row", C::layout, 0},
    {"col", C::layout, 1},
    {"to", C::convert_to},
    {"sync", C::sync},
    {"aligned", C::sync},
    {"uni", C::sync},
    {"ca", C::cache},
    {"cg", C::cache},
    {"cs", C::cache},
    {"lu", C::cache},
    {"cv", C::cache},
    {"wb", C::cache},
    {"wt", C::cache},
    {"nc", C::cache},
    {"volatile", C::cache},
    {"L1::no_allocate", C::cache},
    {"L1::evict_normal", C::cache},
    {"L1::evict_first", C::cache},
    {"L1::evict_last", C::cache},
    {"L1::evict_unchanged", C::cache},
    {"L2::evict_normal", C::cache},
    {"L2::evict_first", C::cache},
    {"L2::evict_last", C::cache},
    {"L2::cache_hint", C::cache},
    {"L2::64B", C::cache},
    {"L2::128B", C::cache},
    {"L2::256B", C::cache},
    {"L1", C::cache},
    {"L2", C::cache},
    {"relaxed", C::memory_order},
    {"acquire", C::memory_order},
    {"release", C::memory_order},
    {"acq_rel", C::memory_order},
    {"weak", C::memory_order},
    {"sc", C::memory_order},
    {"mmio", C::memory_order},
    {"cta", C::scope},
    {"cluster", C::scope},
    {"gpu", C::scope},
    {"sys", C::scope},
    {"gl", C::scope},
    {"proxy", C::proxy},
    {"async", C::proxy},
    {"mbarrier_init", C::proxy},
    {"tensormap", C::proxy},
    {"tensormap::generic", C::proxy},
    // Sub-operations that pick an instruction's form; the instruction's
    // decoder reads them (bar.arrive, mbarrier.try_wait.parity, cp.async.bulk.tensor.2d ...).
    {"arrive", C::form},
    {"wait", C::form},
    {"launch_dependents", C::form},
    {"red", C::form},
    {"warp", C::form},
    {"init", C::form},
    {"expect_tx", C::form},
    {"complete_tx", C::form},
    {"test_wait", C::form},
    {"try_wait", C::form},
    {"parity", C::form},
    {"noinc", C::form},
    {"inc", C::form},
    {"dec", C::form},
    {"fence", C::form},
    {"commit_group", C::form},
    {"wait_group", C::form},
    {"wait_all", C::form},
    {"mma_async", C::form},
    {"sp", C::form},
    {"bulk", C::form},
    {"tensor", C::form},
    {"async", C::form},
    {"mbarrier", C::form},
    {"mbarrier::complete_tx::bytes", C::form},
    {"multicast::cluster", C::form},
    {"bulk_group", C::form},
    {"read", C::form},
    {"tile", C::form},
    // mbarrier.inval; tensormap.replace's fields and tensormap.cp_fenceproxy
    {"inval", C::form},
    {"replace", C::form},
    {"cp_fenceproxy", C::form},
    {"b1024", C::form},
    {"global_address", C::form},
    {"rank", C::form},
    {"box_dim", C::form},
    {"global_dim", C::form},
    {"global_stride", C::form},
    {"element_stride", C::form},
    {"elemtype", C::form},
    {"interleave_layout", C::form},
    {"swizzle_mode", C::form},
    {"swizzle_atomicity", C::form},
    {"fill_mode", C::form},
    {"1d", C::form},
    {"2d", C::form},
    {"3d", C::form},
    {"4d", C::form},
    {"5d", C::form},
    {"a1d", C::form},
    {"a2d", C::form},
    {"cube", C::form},
    {"acube", C::form},
    {"load", C::form},
    {"store", C::form},
    {"mma", C::form},
    {"a", C::form},
    {"b", C::form},
    {"c", C::form},
    {"d", C::form},
    {"f4e", C::form},
    {"b4e", C::form},
    {"rc8", C::form},
    {"ecl", C::form},
    {"ecr", C::form},
    {"rc16", C::form},
};

// Word -> its entries' indices in kModifiers.
const std::unordered_multimap<std::string_view, std::size_t>& by_word() {
  static const auto table = [] {
    std::unordered_multimap<std::string_view, std::size_t> t;
    for (std::size_t i = 0; i < std::size(kModifiers); ++i) t.emplace(kModifiers[i].word, i);
    return t;
  }();
  return table;
}

}  // namespace

std::string_view name(Cmp c) {
  static constexpr std::string_view kNames[] = {"eq",  "ne",  "lt",  "le",  "gt",  "ge",
                                                "lo",  "ls",  "hi",  "hs",  "equ", "neu",
                                                "ltu", "leu", "gtu", "geu", "num", "nan"};
  return kNames[static_cast<int>(c)];
}

std::string_view name(AtomOp op) {
  static constexpr std::string_view kNames[] = {"add",  "min", "max", "inc", "dec",
                                                "exch", "cas", "and", "or",  "xor"};
  return kNames[static_cast<int>(op)];
}

std::string_view name(ModifierClass c) {
  static constexpr std::string_view kNames[] = {"type",
                                                "rounding",
                                                "integral rounding",
                                                "ftz",
                                                "saturation",
                                                "relu",
                                                "approximation",
                                                "noftz",
                                                "comparison",
                                                "boolean operation",
                                                "atomic operation",
                                                "state space",
                                                "vector",
                                                "matrix count",
                                                "transpose",
                                                "multiply mode",
                                                "shuffle mode",
                                                "vote mode",
                                                "shape",
                                                "layout",
                                                "cvta direction",
                                                "convergence",
                                                "cache hint",
                                                "memory order",
                                                "scope",
                                                "proxy",
                                                "form"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(ModifierClass::count));
  return kNames[static_cast<int>(c)];
}

std::vector<ModifierClass> ModifierClasses::list() const {
  std::vector<ModifierClass> out;
  for (int c = 0; c < static_cast<int>(ModifierClass::count); ++c)
    if (has(static_cast<ModifierClass>(c))) out.push_back(static_cast<ModifierClass>(c));
  return out;
}

std::optional<Modifier> find_modifier(std::string_view word, ModifierClasses allowed) {
  if (allowed.has(C::type))
    if (auto t = parse_type(word)) return Modifier{word, C::type, v(*t)};
  // Where a word has several meanings among the allowed classes, the first in
  // kModifiers wins (vote's .uni is the vote mode, not the convergence promise).
  std::size_t best = std::size(kModifiers);
  auto [first, last] = by_word().equal_range(word);
  for (auto it = first; it != last; ++it)
    if (allowed.has(kModifiers[it->second].cls)) best = std::min(best, it->second);
  if (best == std::size(kModifiers)) return std::nullopt;
  return kModifiers[best];
}

std::vector<Modifier> modifiers_of(ModifierClass c) {
  std::vector<Modifier> out;
  if (c == C::type) {
    for (int t = 0; t <= static_cast<int>(Type::e2m1x2); ++t)
      out.push_back({name(static_cast<Type>(t)), C::type, static_cast<std::uint8_t>(t)});
    return out;
  }
  for (const Modifier& m : kModifiers)
    if (m.cls == c) out.push_back(m);
  return out;
}

}  // namespace warpforge::ptx
