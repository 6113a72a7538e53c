#include "warpforge/dsl/isa/sync.hpp"

namespace warpforge::dsl {

namespace {
void check_barrier_operands(const KernelCore& k, const std::string& opcode, const Src& id, const std::optional<Src>& count) {
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

std::string_view scope_name(Scope s) {
  switch (s) {
    case Scope::cta: return "cta";
    case Scope::cluster: return "cluster";
    case Scope::gpu: return "gpu";
    case Scope::sys: return "sys";
  }
  return "";
}
}  // namespace

void SyncOps::bar_sync(const Src& id, std::optional<Src> count) {
  check_barrier_operands(*this, "bar.sync", id, count);
  std::vector<ptx::Operand> ops{operand_of(id)};
  if (count) ops.push_back(operand_of(*count));
  emit("bar.sync", std::move(ops));
}

void SyncOps::barrier_sync(const Src& id, std::optional<Src> count) {
  check_barrier_operands(*this, "barrier.sync", id, count);
  std::vector<ptx::Operand> ops{operand_of(id)};
  if (count) ops.push_back(operand_of(*count));
  emit("barrier.sync", std::move(ops));
}

void SyncOps::bar_arrive(const Src& id, const Src& count) {
  check_barrier_operands(*this, "bar.arrive", id, count);
  emit("bar.arrive", {operand_of(id), operand_of(count)});
}

void SyncOps::bar_warp_sync(const Src& member_mask) {
  expect_type("bar.warp.sync", member_mask, Type::b32, "member mask");
  emit("bar.warp.sync", {operand_of(member_mask)});
}

void SyncOps::griddepcontrol_wait() {
  require("griddepcontrol.wait", Availability::since(90));
  emit("griddepcontrol.wait", {});
}

void SyncOps::griddepcontrol_launch_dependents() {
  require("griddepcontrol.launch_dependents", Availability::since(90));
  emit("griddepcontrol.launch_dependents", {});
}

void SyncOps::membar(MembarLevel level) {
  static constexpr const char* kNames[] = {"membar.cta", "membar.gl", "membar.sys"};
  emit(kNames[static_cast<int>(level)], {});
}

void SyncOps::fence(FenceSem sem, Scope scope) {
  std::string opcode = std::string("fence.") + (sem == FenceSem::sc ? "sc" : "acq_rel") + "." +
                       std::string(scope_name(scope));
  if (scope == Scope::cluster) require(opcode, Availability::since(90));
  emit(opcode, {});
}

}  // namespace warpforge::dsl
