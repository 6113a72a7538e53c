#include "warpforge/dsl/isa/sync.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::O;

namespace {
void check_barrier_operands(const KernelCore& k, const ptx::Instruction& opcode, const Src& id,
                            const std::optional<Src>& count) {
  // PTX ISA 9.7.13.1: barrier ids are 0..15; counts are multiples of the warp size.
  if (!id.is_reg()) {
    auto v = id.imm().int_value();
    if (v < 0 || v > 15) k.fail(opcode, "barrier id " + std::to_string(v) + "; ids are 0 to 15");
  } else {
    k.expect_type(opcode, id, Type::u32, "barrier id");
  }
  if (count && !count->is_reg()) {
    auto v = count->imm().int_value();
    if (v <= 0 || v % 32 != 0 || v > 1024)
      k.fail(opcode, "thread count " + std::to_string(v) + "; counts are multiples of 32 from 32 to 1024");
  } else if (count) {
    k.expect_type(opcode, *count, Type::u32, "thread count");
  }
}

constexpr M kScopes[] = {M::cta, M::cluster, M::gpu, M::sys};

// bar.sync / barrier.sync / bar.arrive id[, count]
void barrier(KernelCore& k, const ptx::Instruction& form, const Src& id,
             const std::optional<Src>& count) {
  check_barrier_operands(k, form, id, count);
  std::vector<ptx::Operand> ops{k.operand_of(id)};
  if (count) ops.push_back(k.operand_of(*count));
  k.emit(form, std::move(ops));
}

// A form without operands, on the targets that have it.
void bare(KernelCore& k, const ptx::Instruction& form, const Availability& availability) {
  k.require(form, availability);
  k.emit(form, {});
}
}  // namespace

void SyncOps::bar_sync(const Src& id, std::optional<Src> count) {
  barrier(*this, {O::bar, {M::sync}}, id, count);
}

void SyncOps::barrier_sync(const Src& id, std::optional<Src> count) {
  barrier(*this, {O::barrier, {M::sync}}, id, count);
}

void SyncOps::bar_arrive(const Src& id, const Src& count) {
  barrier(*this, {O::bar, {M::arrive}}, id, count);
}

void SyncOps::bar_warp_sync(const Src& member_mask) {
  const ptx::Instruction form{O::bar, {M::warp, M::sync}};
  expect_type(form, member_mask, Type::b32, "member mask");
  emit(form, {operand_of(member_mask)});
}

void SyncOps::griddepcontrol_wait() {
  bare(*this, {O::griddepcontrol, {M::wait}}, Availability::since(90));
}

void SyncOps::griddepcontrol_launch_dependents() {
  bare(*this, {O::griddepcontrol, {M::launch_dependents}}, Availability::since(90));
}

void SyncOps::membar(MembarLevel level) {
  static constexpr M kLevels[] = {M::cta, M::gl, M::sys};
  emit({O::membar, {kLevels[static_cast<int>(level)]}}, {});
}

void SyncOps::fence(FenceSem sem, Scope scope) {
  bare(*this,
       {O::fence, {sem == FenceSem::sc ? M::sc : M::acq_rel, kScopes[static_cast<int>(scope)]}},
       Availability::since(scope == Scope::cluster ? 90 : 0));
}

}  // namespace warpforge::dsl
