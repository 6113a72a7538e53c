#include "warpforge/dsl/isa/memory.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;
using detail::type_name;

namespace {
M cache_mod(Cache c) {
  static constexpr M kMods[] = {M::ca, M::ca, M::cg, M::cs, M::lu, M::cv, M::wb, M::wt};
  return kMods[static_cast<int>(c)];
}
std::string_view memory_cache_name(Cache c) {
  return c == Cache::none ? "" : ptx::name(cache_mod(c));
}
M space_mod(Space s) {
  switch (s) {
    case Space::global: return M::global;
    case Space::shared: return M::shared;
    case Space::local: return M::local;
    case Space::param: return M::param;
    default: return M::const_;
  }
}
// PTX ISA 9.7.9.16 cvta: the windows of the generic space are const, global,
// local and shared.
void check_cvta_space(const KernelCore& k, bool to, Space space) {
  if (space != Space::global && space != Space::shared && space != Space::local && space != Space::const_)
    k.fail(to ? "cvta.to" : "cvta", "state space ." + std::string(ptx::name(space)) +
                       " has no generic-address window; use global, shared, local or const");
}
}  // namespace

ptx::Instruction MemoryOps::access(ptx::Opcode op, Space space, Type type, std::size_t width,
                                   Cache cache, bool nc, bool volatile_, const Addr& a, bool cluster) {
  const bool load = op == O::ld;
  ptx::Instruction opcode{op};
  if (volatile_) opcode.modifiers.push_back(M::volatile_);
  // Space::generic: no state-space word; the address is a generic one
  // (PTX ISA 6.4.1.1 generic addressing), a cvta result or a pointer.
  const bool generic = space == Space::generic;
  if (!generic && space != Space::global && space != Space::shared && space != Space::local &&
      space != Space::param && space != Space::const_)
    fail(opcode, "state space ." + std::string(ptx::name(space)) +
                     " is not addressable; use global, shared, local, param, const or generic");
  if (!load && space == Space::const_)
    fail(opcode.full_opcode() + ".const", "the const space is read-only");
  // A kernel's parameters are read-only (ptxas: "Illegal to write to function input parameter").
  if (!load && space == Space::param) fail(opcode.full_opcode() + ".param", "kernel parameters are read-only");
  if (!generic) opcode.modifiers.push_back(space_mod(space));
  if (cluster) {
    if (space != Space::shared)
      fail(opcode, "a shared::cluster access names the shared space, not ." + std::string(ptx::name(space)));
    if (volatile_) fail(opcode, "a shared::cluster store takes no .volatile");
    opcode.modifiers.back() = M::shared_cluster;
    require(opcode, Availability::since(90));
  }
  // PTX ISA 9.7.9.8 (ld) / 9.7.9.10 (st): .volatile applies to the global and
  // shared spaces and to generic addresses only, and takes no cache operator;
  // ptxas refuses the others.
  if (volatile_ && space != Space::global && space != Space::shared && !generic)
    fail(opcode, ".volatile applies to the global and shared spaces and generic addresses, not ." +
                     std::string(ptx::name(space)));
  if (volatile_ && (cache != Cache::none || nc))
    fail(opcode, ".volatile takes no cache operator and no .nc");
  if (nc) {
    if (space != Space::global) fail(opcode, ".nc loads read the global space only");
    // PTX ISA 9.7.9.9 ld.global.nc: only .ca, .cg and .cs combine with .nc.
    if (cache == Cache::lu || cache == Cache::cv)
      fail(opcode.full_opcode() + ".nc", "cache operator ." + std::string(memory_cache_name(cache)) +
                                             " does not combine with .nc; use ca, cg or cs");
    opcode.modifiers.push_back(M::nc);
  }
  if (cache != Cache::none) {
    bool ok = load ? (cache == Cache::ca || cache == Cache::cg || cache == Cache::cs || cache == Cache::lu ||
                      cache == Cache::cv)
                   : (cache == Cache::wb || cache == Cache::cg || cache == Cache::cs || cache == Cache::wt);
    if (!ok)
      fail(opcode, "cache operator ." + std::string(memory_cache_name(cache)) + " is not a " + (load ? "load" : "store") +
                       " operator; " + (load ? "loads take ca, cg, cs, lu, cv" : "stores take wb, cg, cs, wt"));
    opcode.modifiers.push_back(cache_mod(cache));
  }
  if (width != 1) {
    if (width != 2 && width != 4) fail(opcode, "vector of " + std::to_string(width) + " registers; .v2 or .v4 only");
    if (ptx::bits(type) * width > 128)
      fail(opcode, "a .v" + std::to_string(width) + "." + type_name(type) + " access moves " +
                       std::to_string(ptx::bits(type) * width / 8) + " bytes; at most 16");
    opcode.modifiers.push_back(width == 2 ? M::v2 : M::v4);
  }
  if (type == Type::pred || ptx::bits(type) > 64) fail(opcode, "type ." + type_name(type) + " cannot be loaded or stored");
  // PTX ISA 9.7.9.8 ld / 9.7.9.10 st: no half, packed or fp8 float types
  // (ptxas refuses ld.global.f16); those values move as the bit type of their width.
  bool bits_only = ptx::is_float(type) && type != Type::f32 && type != Type::f64;
  opcode.modifiers.push_back(mod(bits_only ? detail::bits_type(type) : type));
  if (a.base && (space == Space::global || generic) && ptx::bits(a.base->type()) != 64)
    fail(opcode, "address register " + a.base->name() + " is " + type_name(a.base->type()) + "; " +
                     (generic ? "generic" : "global") + " addresses are 64-bit");
  if (a.base && !ptx::is_integer(a.base->type()))
    fail(opcode, "address register " + a.base->name() + " is " + type_name(a.base->type()) + "; expected an integer");
  return opcode;
}

void MemoryOps::ld(Space space, Type type, const Reg& d, const Addr& a, LdOpts o) {
  const ptx::Instruction opcode = access(O::ld, space, type, 1, o.cache, o.nc, o.volatile_, a);
  expect_type(opcode, d, ptx::bits(type) < 16 ? ptx::storage_type(type) : type, "destination");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void MemoryOps::ld(Space space, Type type, const Regs& d, const Addr& a, LdOpts o) {
  const ptx::Instruction opcode = access(O::ld, space, type, d.size(), o.cache, o.nc, o.volatile_, a);
  for (const auto& r : d) expect_type(opcode, r, ptx::bits(type) < 16 ? ptx::storage_type(type) : type, "destination");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void MemoryOps::st(Space space, Type type, const Addr& a, const Src& v, StOpts o) {
  const ptx::Instruction opcode = access(O::st, space, type, 1, o.cache, false, o.volatile_, a, o.cluster);
  expect_type(opcode, v, ptx::bits(type) < 16 ? ptx::storage_type(type) : type, "value");
  emit(opcode, {operand_of(a), operand_of(v)});
}

void MemoryOps::st(Space space, Type type, const Addr& a, const Regs& v, StOpts o) {
  const ptx::Instruction opcode =
      access(O::st, space, type, v.size(), o.cache, false, o.volatile_, a, o.cluster);
  for (const auto& r : v) expect_type(opcode, r, ptx::bits(type) < 16 ? ptx::storage_type(type) : type, "value");
  emit(opcode, {operand_of(a), operand_of(v)});
}

void MemoryOps::prefetch_global_l2(const Addr& a) {
  const ptx::Instruction opcode{O::prefetch, {M::global, M::L2}};
  if (!a.base) fail(opcode, "the address is a symbol; a register holding a global address is needed");
  expect_type(opcode, *a.base, Type::u64, "global address");
  emit(opcode, {operand_of(a)});
}

void MemoryOps::cvta_to(Space space, const Reg& d, const Reg& a) {
  check_cvta_space(*this, true, space);
  const ptx::Instruction opcode{O::cvta, {M::to, space_mod(space), mod(Type::u64)}};
  expect_type(opcode, d, Type::u64, "destination");
  expect_type(opcode, a, Type::u64, "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void MemoryOps::cvta_from(Space space, const Reg& d, const Reg& a) {
  check_cvta_space(*this, false, space);
  const ptx::Instruction opcode{O::cvta, {space_mod(space), mod(Type::u64)}};
  expect_type(opcode, d, Type::u64, "destination");
  expect_type(opcode, a, Type::u64, "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

}  // namespace warpforge::dsl
