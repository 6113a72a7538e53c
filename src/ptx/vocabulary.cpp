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
// add.cc / addc.cc: the carry (PTX ISA 9.7.2)
constexpr ModifierClasses kExtended{C::form};
// the video instructions' saturation and secondary operation (PTX ISA 9.7.18)
constexpr ModifierClasses kVideo{C::type, C::saturation, C::atomic_op, C::form};

constexpr Availability kAll = Availability::since(0);

// Operand counts and classes from each instruction's syntax in PTX ISA 9.7;
// availability from its "Target ISA notes" (the oldest form's: cp.async needs
// sm_80, its .bulk forms sm_90).
constexpr OpcodeInfo kVocabulary[] = {
    {Op::mov, "mov", {2, 2}, kType, kAll},
    {Op::add, "add", {3, 3}, kFloat | kExtended, kAll},
    {Op::sub, "sub", {3, 3}, kFloat | kExtended, kAll},
    {Op::mul, "mul", {3, 3}, kFloat | ModifierClasses{C::mul_mode}, kAll},
    {Op::mad, "mad", {4, 4}, kFloat | kExtended | ModifierClasses{C::mul_mode}, kAll},
    {Op::div, "div", {3, 3}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::rem, "rem", {3, 3}, kType, kAll},
    {Op::abs, "abs", {2, 2}, {C::type, C::ftz}, kAll},
    {Op::neg, "neg", {2, 2}, {C::type, C::ftz}, kAll},
    {Op::min, "min", {3, 4}, {C::type, C::ftz, C::relu, C::form}, kAll},
    {Op::max, "max", {3, 4}, {C::type, C::ftz, C::relu, C::form}, kAll},
    {Op::and_, "and", {3, 3}, kType, kAll},
    {Op::or_, "or", {3, 3}, kType, kAll},
    {Op::xor_, "xor", {3, 3}, kType, kAll},
    {Op::not_, "not", {2, 2}, kType, kAll},
    {Op::cnot, "cnot", {2, 2}, kType, kAll},
    {Op::shl, "shl", {3, 3}, kType, kAll},
    {Op::shr, "shr", {3, 3}, kType, kAll},
    // lop3.b32 d, a, b, c, lut and, since ISA 8.2, lop3.op.b32 d|p, a, b, c, lut, q
    {Op::lop3, "lop3", {5, 6}, {C::type, C::bool_op}, Availability::since(50)},
    {Op::prmt, "prmt", {4, 4}, {C::type, C::form}, kAll},
    {Op::bfe, "bfe", {4, 4}, kType, kAll},
    {Op::bfi, "bfi", {5, 5}, kType, kAll},
    {Op::popc, "popc", {2, 2}, kType, kAll},
    {Op::clz, "clz", {2, 2}, kType, kAll},
    {Op::brev, "brev", {2, 2}, kType, kAll},
    {Op::addc, "addc", {3, 3}, kType | kExtended, kAll},
    {Op::subc, "subc", {3, 3}, kType | kExtended, kAll},
    {Op::madc, "madc", {4, 4}, kType | kExtended | ModifierClasses{C::mul_mode}, kAll},
    {Op::mul24, "mul24", {3, 3}, kType | ModifierClasses{C::mul_mode}, kAll},
    {Op::mad24, "mad24", {4, 4}, {C::type, C::mul_mode, C::saturation}, kAll},
    {Op::sad, "sad", {4, 4}, kType, kAll},
    {Op::bfind, "bfind", {2, 2}, {C::type, C::form}, kAll},
    {Op::fns, "fns", {4, 4}, kType, kAll},
    {Op::bmsk, "bmsk", {3, 3}, {C::type, C::form}, Availability::since(70)},
    {Op::szext, "szext", {3, 3}, {C::type, C::form}, Availability::since(70)},
    {Op::dp4a, "dp4a", {4, 4}, kType, Availability::since(61)},
    {Op::dp2a, "dp2a", {4, 4}, {C::type, C::mul_mode}, Availability::since(61)},
    {Op::shf, "shf", {4, 4}, {C::type, C::form}, kAll},
    {Op::setp, "setp", {3, 4}, {C::type, C::comparison, C::bool_op, C::ftz}, kAll},
    {Op::selp, "selp", {4, 4}, kType, kAll},
    {Op::set, "set", {3, 4}, {C::type, C::comparison, C::bool_op, C::ftz}, kAll},
    {Op::slct, "slct", {4, 4}, {C::type, C::ftz}, kAll},
    {Op::fma, "fma", {4, 4}, kFloat | ModifierClasses{C::relu, C::form}, kAll},
    {Op::rcp, "rcp", {2, 2}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::sqrt, "sqrt", {2, 2}, kFloat | ModifierClasses{C::approximation}, kAll},
    {Op::rsqrt, "rsqrt", {2, 2}, kApprox, kAll},
    {Op::ex2, "ex2", {2, 2}, kApprox, kAll},
    {Op::lg2, "lg2", {2, 2}, kApprox, kAll},
    {Op::sin, "sin", {2, 2}, kApprox, kAll},
    {Op::cos, "cos", {2, 2}, kApprox, kAll},
    {Op::tanh, "tanh", {2, 2}, kApprox, Availability::since(75)},
    {Op::testp, "testp", {2, 2}, {C::type, C::form}, kAll},
    {Op::copysign, "copysign", {3, 3}, kType, kAll},
    {Op::cvt,
     "cvt",
     {2, 4},
     kFloat | ModifierClasses{C::integral_rounding, C::relu, C::element_type, C::form},
     kAll},
    {Op::cvta, "cvta", {2, 2}, {C::type, C::space, C::convert_to}, kAll},
    {Op::ld, "ld", {2, 3}, kMemory, kAll},
    {Op::ldu, "ldu", {2, 2}, kMemory, kAll},
    {Op::st, "st", {2, 4}, kMemory | ModifierClasses{C::form}, kAll},
    {Op::atom, "atom", {3, 5}, kMemory | ModifierClasses{C::atomic_op, C::noftz}, kAll},
    {Op::red, "red", {2, 4}, kMemory | ModifierClasses{C::atomic_op, C::noftz, C::form}, kAll},
    // cp.async[.bulk[.tensor]], cp.reduce.async.bulk (its .add) and their group
    // operations; the form words say which
    {Op::cp, "cp", {0, 7}, kMemory | ModifierClasses{C::form, C::atomic_op}, Availability::since(80)},
    {Op::mbarrier, "mbarrier", {1, 4}, kMemory | ModifierClasses{C::form}, Availability::since(80)},
    {Op::prefetch, "prefetch", {1, 1}, {C::space, C::cache, C::proxy}, kAll},
    {Op::prefetchu, "prefetchu", {1, 1}, {C::cache}, kAll},
    {Op::mapa, "mapa", {3, 3}, {C::type, C::space}, Availability::since(90)},
    {Op::getctarank, "getctarank", {2, 2}, {C::type, C::space}, Availability::since(90)},
    {Op::isspacep, "isspacep", {2, 2}, {C::space}, kAll},
    {Op::applypriority, "applypriority", {2, 2}, {C::space, C::cache}, Availability::since(80)},
    {Op::discard, "discard", {2, 2}, {C::space, C::cache}, Availability::since(80)},
    {Op::createpolicy,
     "createpolicy",
     {2, 4},
     {C::type, C::cache, C::form},
     Availability::since(80)},
    {Op::multimem, "multimem", {2, 3}, kMemory | ModifierClasses{C::atomic_op, C::bool_op, C::form},
     Availability::since(90)},
    // tensormap.replace and tensormap.cp_fenceproxy
    {Op::tensormap,
     "tensormap",
     {2, 3},
     kWarp | ModifierClasses{C::space, C::form, C::element_type, C::proxy, C::memory_order,
                             C::scope},
     Availability::arch_specific(90)},
    {Op::bar, "bar", {1, 3}, {C::type, C::sync, C::form, C::scope, C::bool_op}, kAll},
    {Op::barrier,
     "barrier",
     {0, 3},
     {C::type, C::sync, C::form, C::scope, C::memory_order, C::bool_op},
     kAll},
    {Op::membar, "membar", {0, 0}, {C::scope, C::proxy}, kAll},
    // fence.proxy.async.shared::cta names the space the proxies share
    {Op::fence,
     "fence",
     {0, 2},
     {C::scope, C::memory_order, C::proxy, C::space, C::form, C::sync},
     Availability::since(70)},
    {Op::nanosleep, "nanosleep", {1, 1}, kType, Availability::since(70)},
    // griddepcontrol.{wait, launch_dependents}: programmatic dependent launch
    {Op::griddepcontrol, "griddepcontrol", {0, 0}, {C::form}, Availability::since(90)},
    {Op::clusterlaunchcontrol,
     "clusterlaunchcontrol",
     {2, 2},
     kMemory | ModifierClasses{C::form},
     Availability::since(100)},
    {Op::shfl, "shfl", {4, 5}, kWarp | ModifierClasses{C::shfl_mode}, kAll},
    {Op::vote, "vote", {2, 3}, kWarp | ModifierClasses{C::vote_mode}, kAll},
    {Op::redux,
     "redux",
     {3, 3},
     kWarp | ModifierClasses{C::atomic_op, C::form},
     Availability::since(80)},
    {Op::activemask, "activemask", {1, 1}, kType, Availability::since(30)},
    {Op::elect, "elect", {2, 2}, {C::sync}, Availability::since(90)},
    {Op::match, "match", {3, 3}, kWarp | ModifierClasses{C::vote_mode}, Availability::since(70)},
    {Op::mma,
     "mma",
     {4, 8},
     kWarp | ModifierClasses{C::shape, C::layout, C::saturation, C::rounding, C::bool_op,
                             C::element_type, C::form},
     Availability::since(70)},
    {Op::wmma,
     "wmma",
     {2, 4},
     kWarp | ModifierClasses{C::shape, C::layout, C::saturation, C::space, C::form, C::rounding,
                             C::bool_op, C::element_type},
     Availability::since(70)},
    {Op::ldmatrix,
     "ldmatrix",
     {2, 2},
     kWarp | ModifierClasses{C::shape, C::matrix_count, C::transpose, C::space, C::element_type},
     Availability::since(75)},
    {Op::stmatrix,
     "stmatrix",
     {2, 2},
     kWarp | ModifierClasses{C::shape, C::matrix_count, C::transpose, C::space},
     Availability::since(90)},
    {Op::movmatrix,
     "movmatrix",
     {2, 2},
     kWarp | ModifierClasses{C::shape, C::transpose},
     Availability::since(75)},
    // wgmma.mma_async's shapes m64nNkK are a class of their own (WgmmaShape)
    {Op::wgmma,
     "wgmma",
     {0, 9},
     kWarp | ModifierClasses{C::form, C::saturation, C::wgmma_shape, C::bool_op, C::element_type},
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
     kWarp | ModifierClasses{C::form, C::space, C::matrix_count, C::element_type},
     Availability::arch_specific(100)},
    {Op::tex, "tex", {2, 5}, {C::type, C::form, C::vector}, kAll},
    {Op::tld4, "tld4", {2, 5}, {C::type, C::form, C::vector}, kAll},
    {Op::txq, "txq", {2, 3}, {C::type, C::form}, kAll},
    {Op::istypep, "istypep", {2, 2}, {C::form}, kAll},
    {Op::suld, "suld", {2, 2}, {C::type, C::form, C::vector, C::cache}, kAll},
    {Op::sust, "sust", {2, 2}, {C::type, C::form, C::vector, C::cache}, kAll},
    {Op::sured, "sured", {2, 2}, {C::type, C::form, C::atomic_op, C::bool_op}, kAll},
    {Op::suq, "suq", {2, 2}, {C::type, C::form}, kAll},
    {Op::stacksave, "stacksave", {1, 1}, kType, Availability::since(52)},
    {Op::stackrestore, "stackrestore", {1, 1}, kType, Availability::since(52)},
    {Op::alloca, "alloca", {2, 3}, kType, Availability::since(52)},
    {Op::vadd, "vadd", {3, 4}, kVideo, kAll},
    {Op::vsub, "vsub", {3, 4}, kVideo, kAll},
    {Op::vabsdiff, "vabsdiff", {3, 4}, kVideo, kAll},
    {Op::vmin, "vmin", {3, 4}, kVideo, kAll},
    {Op::vmax, "vmax", {3, 4}, kVideo, kAll},
    {Op::vshl, "vshl", {3, 4}, kVideo, kAll},
    {Op::vshr, "vshr", {3, 4}, kVideo, kAll},
    {Op::vmad, "vmad", {4, 4}, kVideo, kAll},
    {Op::vset, "vset", {3, 4}, kVideo | ModifierClasses{C::comparison}, kAll},
    {Op::vadd2, "vadd2", {4, 4}, kVideo, kAll},
    {Op::vsub2, "vsub2", {4, 4}, kVideo, kAll},
    {Op::vavrg2, "vavrg2", {4, 4}, kVideo, kAll},
    {Op::vabsdiff2, "vabsdiff2", {4, 4}, kVideo, kAll},
    {Op::vmin2, "vmin2", {4, 4}, kVideo, kAll},
    {Op::vmax2, "vmax2", {4, 4}, kVideo, kAll},
    {Op::vset2, "vset2", {4, 4}, kVideo | ModifierClasses{C::comparison}, kAll},
    {Op::vadd4, "vadd4", {4, 4}, kVideo, kAll},
    {Op::vsub4, "vsub4", {4, 4}, kVideo, kAll},
    {Op::vavrg4, "vavrg4", {4, 4}, kVideo, kAll},
    {Op::vabsdiff4, "vabsdiff4", {4, 4}, kVideo, kAll},
    {Op::vmin4, "vmin4", {4, 4}, kVideo, kAll},
    {Op::vmax4, "vmax4", {4, 4}, kVideo, kAll},
    {Op::vset4, "vset4", {4, 4}, kVideo | ModifierClasses{C::comparison}, kAll},
    {Op::bra, "bra", {1, 1}, {C::sync}, kAll},
    // brx.idx[.uni] index, table: an indirect branch through a .branchtargets list
    {Op::brx, "brx", {2, 2}, {C::sync, C::shfl_mode}, kAll},
    // call (ret), func, (args): the parser keeps the lists as operands
    {Op::call, "call", {1, 4}, {C::sync}, kAll},
    {Op::ret, "ret", {0, 0}, {C::sync}, kAll},
    {Op::exit, "exit", {0, 0}, {}, kAll},
    {Op::trap, "trap", {0, 0}, {}, kAll},
    {Op::brkpt, "brkpt", {0, 0}, {}, kAll},
    {Op::pmevent, "pmevent", {1, 1}, {C::form}, kAll},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kVocabulary); ++i)
    if (static_cast<std::size_t>(kVocabulary[i].opcode) != i) return false;
  return std::size(kVocabulary) == static_cast<std::size_t>(kOpcodeCount);
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

std::string_view enumerator(Opcode op) {
#define WARPFORGE_PTX_OPCODE_NAME(name) #name,
  static constexpr std::string_view kNames[] = {WARPFORGE_PTX_OPCODES(WARPFORGE_PTX_OPCODE_NAME)};
#undef WARPFORGE_PTX_OPCODE_NAME
  return kNames[static_cast<std::size_t>(op)];
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
