#include "warpforge/ptx/vocabulary.hpp"

#include <string>
#include <unordered_map>

namespace warpforge::ptx {
namespace {

using C = ModifierClass;
using Op = Opcode;

// The classes most instructions share.
constexpr ModifierClasses kType{C::type};
constexpr ModifierClasses kFloat{C::type, C::rounding, C::ftz, C::saturation};
constexpr ModifierClasses kApprox{C::type, C::ftz, C::approximation};
constexpr ModifierClasses kHints{C::cache, C::memory_order, C::scope};
constexpr ModifierClasses kMemory = ModifierClasses{C::type, C::space, C::vector} | kHints;
constexpr ModifierClasses kWarp{C::type, C::sync};

constexpr Availability kAll = Availability::since(0);

// Operand counts and classes from each instruction's syntax in PTX ISA 9.7;
// availability from its "Target ISA notes" (the oldest form's: cp.async needs
// sm_80, its .bulk forms sm_90).
constexpr OpcodeInfo kVocabulary[] = {
    {Op::mov, "mov", {2, 2}, kType, kAll},
    {Op::add, "add", {3, 3}, kFloat, kAll},
    {Op::sub, "sub", {3, 3}, kFloat, kAll},
    {Op::mul, "mul", {3, 3}, kFloat | ModifierClasses{C::mul_mode}, kAll},
    {Op::mad, "mad", {4, 4}, kFloat | ModifierClasses{C::mul_mode}, kAll},
    {Op::div, "div", {3, 3}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::rem, "rem", {3, 3}, kType, kAll},
    {Op::abs, "abs", {2, 2}, {C::type, C::ftz}, kAll},
    {Op::neg, "neg", {2, 2}, {C::type, C::ftz}, kAll},
    {Op::min, "min", {3, 3}, {C::type, C::ftz, C::relu}, kAll},
    {Op::max, "max", {3, 3}, {C::type, C::ftz, C::relu}, kAll},
    {Op::and_, "and", {3, 3}, kType, kAll},
    {Op::or_, "or", {3, 3}, kType, kAll},
    {Op::xor_, "xor", {3, 3}, kType, kAll},
    {Op::not_, "not", {2, 2}, kType, kAll},
    {Op::cnot, "cnot", {2, 2}, kType, kAll},
    {Op::shl, "shl", {3, 3}, kType, kAll},
    {Op::shr, "shr", {3, 3}, kType, kAll},
    {Op::lop3, "lop3", {5, 5}, kType, Availability::since(50)},
    {Op::prmt, "prmt", {4, 4}, {C::type, C::form}, kAll},
    {Op::bfe, "bfe", {4, 4}, kType, kAll},
    {Op::bfi, "bfi", {5, 5}, kType, kAll},
    {Op::popc, "popc", {2, 2}, kType, kAll},
    {Op::clz, "clz", {2, 2}, kType, kAll},
    {Op::brev, "brev", {2, 2}, kType, kAll},
    {Op::setp, "setp", {3, 4}, {C::type, C::comparison, C::bool_op, C::ftz}, kAll},
    {Op::selp, "selp", {4, 4}, kType, kAll},
    {Op::fma, "fma", {4, 4}, kFloat | ModifierClasses{C::relu}, kAll},
    {Op::rcp, "rcp", {2, 2}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::sqrt, "sqrt", {2, 2}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::rsqrt, "rsqrt", {2, 2}, kApprox, kAll},
    {Op::ex2, "ex2", {2, 2}, kApprox, kAll},
    {Op::lg2, "lg2", {2, 2}, kApprox, kAll},
    {Op::sin, "sin", {2, 2}, kApprox, kAll},
    {Op::cos, "cos", {2, 2}, kApprox, kAll},
    {Op::tanh, "tanh", {2, 2}, kApprox, Availability::since(75)},
    {Op::cvt, "cvt", {2, 3}, kFloat | ModifierClasses{C::integral_rounding, C::relu}, kAll},
    {Op::cvta, "cvta", {2, 2}, {C::type, C::space, C::convert_to}, kAll},
    {Op::ld, "ld", {2, 3}, kMemory, kAll},
    {Op::ldu, "ldu", {2, 2}, kMemory, kAll},
    {Op::st, "st", {2, 2}, kMemory, kAll},
    {Op::atom, "atom", {3, 4}, kMemory | ModifierClasses{C::atomic_op, C::noftz}, kAll},
    {Op::red, "red", {2, 2}, kMemory | ModifierClasses{C::atomic_op, C::noftz}, kAll},
    // cp.async[.bulk[.tensor]] and their group operations; the form words say which
    {Op::cp, "cp", {0, 6}, kMemory | ModifierClasses{C::form}, Availability::since(80)},
    {Op::mbarrier, "mbarrier", {1, 4}, kMemory | ModifierClasses{C::form}, Availability::since(80)},
    {Op::prefetch, "prefetch", {1, 1}, {C::space, C::cache, C::proxy}, kAll},
    {Op::prefetchu, "prefetchu", {1, 1}, {C::cache}, kAll},
    {Op::mapa, "mapa", {3, 3}, {C::type, C::space}, Availability::since(90)},
    // tensormap.replace.tile.<field> and tensormap.cp_fenceproxy (PTX ISA 9.7.9.27-28)
    {Op::tensormap,
     "tensormap",
     {2, 3},
     {C::type, C::form, C::space, C::memory_order, C::scope, C::sync, C::proxy},
     Availability::arch_specific(90)},
    {Op::bar, "bar", {1, 2}, {C::sync, C::form, C::scope}, kAll},
    {Op::barrier, "barrier", {0, 2}, {C::sync, C::form, C::scope, C::memory_order}, kAll},
    {Op::membar, "membar", {0, 0}, {C::scope, C::proxy}, kAll},
    // fence.proxy.async.shared::cta names the space the proxies share
    {Op::fence,
     "fence",
     {0, 2},
     {C::scope, C::memory_order, C::proxy, C::space},
     Availability::since(70)},
    {Op::nanosleep, "nanosleep", {1, 1}, kType, Availability::since(70)},
    // griddepcontrol.{wait, launch_dependents}: programmatic dependent launch
    {Op::griddepcontrol, "griddepcontrol", {0, 0}, {C::form}, Availability::since(90)},
    {Op::shfl, "shfl", {4, 5}, kWarp | ModifierClasses{C::shfl_mode}, kAll},
    {Op::vote, "vote", {3, 3}, kWarp | ModifierClasses{C::vote_mode}, kAll},
    {Op::redux, "redux", {3, 3}, kWarp | ModifierClasses{C::atomic_op}, Availability::since(80)},
    {Op::activemask, "activemask", {1, 1}, kType, Availability::since(30)},
    {Op::elect, "elect", {2, 2}, {C::sync}, Availability::since(90)},
    {Op::mma,
     "mma",
     {4, 4},
     kWarp | ModifierClasses{C::shape, C::layout, C::saturation},
     Availability::since(70)},
    {Op::wmma,
     "wmma",
     {2, 4},
     kWarp | ModifierClasses{C::shape, C::layout, C::saturation, C::space, C::form},
     Availability::since(70)},
    {Op::ldmatrix,
     "ldmatrix",
     {2, 2},
     kWarp | ModifierClasses{C::shape, C::matrix_count, C::transpose, C::space},
     Availability::since(75)},
    {Op::stmatrix,
     "stmatrix",
     {2, 2},
     kWarp | ModifierClasses{C::shape, C::matrix_count, C::transpose, C::space},
     Availability::since(90)},
    // wgmma.mma_async's shapes m64nNkK are many; its decoder reads them
    {Op::wgmma,
     "wgmma",
     {0, 9},
     kWarp | ModifierClasses{C::form, C::saturation},
     Availability::arch_specific(90, 90)},
    {Op::setmaxnreg,
     "setmaxnreg",
     {1, 1},
     kWarp | ModifierClasses{C::form},
     Availability::arch_specific(90)},
    // tcgen05.{alloc, dealloc, relinquish_alloc_permit, mma, cp, shift, ld,
    // st, commit, wait, fence}: the operation is a form word; mma takes up
    // to eight operands (d, a, b, idesc, scale_a, scale_b, disable mask,
    // enable-input-d); its decoder (the simulator's tcgen05_decode) reads the rest
    {Op::tcgen05,
     "tcgen05",
     {0, 8},
     kWarp | ModifierClasses{C::form, C::shape, C::space, C::vector},
     Availability::arch_specific(100)},
    {Op::tex, "tex", {2, 4}, {C::type, C::form, C::vector}, kAll},
    {Op::tld4, "tld4", {2, 4}, {C::type, C::form, C::vector}, kAll},
    {Op::txq, "txq", {2, 2}, {C::type, C::form}, kAll},
    {Op::suld, "suld", {2, 2}, {C::type, C::form, C::vector, C::cache}, kAll},
    {Op::sust, "sust", {2, 2}, {C::type, C::form, C::vector, C::cache}, kAll},
    {Op::suq, "suq", {2, 2}, {C::type, C::form}, kAll},
    {Op::bra, "bra", {1, 1}, {C::sync}, kAll},
    // call (ret), func, (args): the parser keeps the lists as operands
    {Op::call, "call", {1, 4}, {C::sync}, kAll},
    {Op::ret, "ret", {0, 0}, {C::sync}, kAll},
    {Op::exit, "exit", {0, 0}, {}, kAll},
    {Op::trap, "trap", {0, 0}, {}, kAll},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kVocabulary); ++i)
    if (static_cast<std::size_t>(kVocabulary[i].opcode) != i) return false;
  return std::size(kVocabulary) == static_cast<std::size_t>(Op::trap) + 1;
}
static_assert(in_enum_order(), "kVocabulary lists every Opcode once, in the enum's order");

}  // namespace

std::span<const OpcodeInfo> vocabulary() {
  return kVocabulary;
}

const OpcodeInfo& info(Opcode op) {
  return kVocabulary[static_cast<std::size_t>(op)];
}

std::string_view name(Opcode op) {
  return info(op).name;
}

const OpcodeInfo* find_opcode(std::string_view name) {
  static const auto table = [] {
    std::unordered_map<std::string_view, const OpcodeInfo*> t;
    for (const OpcodeInfo& i : kVocabulary) t.emplace(i.name, &i);
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace warpforge::ptx
