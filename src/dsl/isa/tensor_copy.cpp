#include "warpforge/dsl/isa/tensor_copy.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;
using ptx::kHopper;

namespace {

// cp.async.bulk.tensor.Nd for N coordinates, 1 to 5.
ptx::Instruction tensor_copy(const KernelCore& k, const std::vector<Src>& coords) {
  static constexpr M kRanks[] = {M::_1d, M::_2d, M::_3d, M::_4d, M::_5d};
  const ptx::Instruction unranked{O::cp, {M::async, M::bulk, M::tensor}};
  if (coords.empty() || coords.size() > 5)
    k.fail(unranked, std::to_string(coords.size()) + " coordinates; a tensor copy takes 1 to 5");
  ptx::Instruction form = unranked;
  form.modifiers.push_back(kRanks[coords.size() - 1]);
  return form;
}

ptx::Operand map_with_coords(const KernelCore& k, const ptx::Instruction& opcode, const Reg& map,
                             const std::vector<Src>& coords) {
  k.expect_type(opcode, map, Type::u64, "tensor map address");
  std::vector<ptx::Operand> xs;
  for (const Src& c : coords) {
    k.expect_type(opcode, c, Type::s32, "coordinate");
    xs.push_back(k.operand_of(c));
  }
  ptx::Operand a = ptx::Operand::address(k.operand_of(map));
  a.elems.push_back(ptx::Operand::vector(std::move(xs)));
  return a;
}

// A form without operands, on Hopper.
void bare(KernelCore& k, const ptx::Instruction& form) {
  k.require(form, kHopper);
  k.emit(form, {});
}

// A bulk wait_group[.read] for `pending` groups.
void bulk_wait(KernelCore& k, const ptx::Instruction& form, int pending) {
  k.require(form, kHopper);
  if (pending < 0) k.fail(form, "pending group count " + std::to_string(pending) + " < 0");
  k.emit(form, {ptx::Operand::imm(pending)});
}
}  // namespace

Reg TensorCopyOps::param_generic_address(const ParamRef& param) {
  const ptx::Instruction cvta{O::cvta, {M::param, mod(Type::u64)}};
  require(cvta, kHopper);
  Reg r = reg(Type::u64);
  emit({O::mov, {mod(Type::b64)}}, {operand_of(r), ptx::Operand::symbol(param.name)});
  emit(cvta, {operand_of(r), operand_of(r)});
  return r;
}

void TensorCopyOps::tma_load(const Addr& shared_dst, const Reg& tensor_map, const std::vector<Src>& coords,
                             const Addr& bar, std::optional<Src> multicast_mask) {
  ptx::Instruction opcode = tensor_copy(*this, coords);
  opcode.modifiers.insert(opcode.modifiers.end(), {M::shared_cluster, M::global, M::tile,
                                                   M::mbarrier_complete_tx_bytes});
  if (multicast_mask) opcode.modifiers.push_back(M::multicast_cluster);
  require(opcode, kHopper);
  std::vector<ptx::Operand> ops{operand_of(shared_dst), map_with_coords(*this, opcode, tensor_map, coords),
                                operand_of(bar)};
  if (multicast_mask) {
    expect_type(opcode, *multicast_mask, Type::u16, "CTA mask");
    ops.push_back(operand_of(*multicast_mask));
  }
  emit(opcode, std::move(ops));
}

// A bulk copy's size: a u32 register, or an immediate positive multiple of 16 bytes.
void expect_bulk_size(const KernelCore& k, const ptx::Instruction& opcode, const Src& size) {
  if (size.is_reg()) {
    k.expect_type(opcode, size, Type::u32, "size");
  } else if (const auto bytes = size.imm().int_value(); bytes <= 0 || bytes % 16 != 0) {
    k.fail(opcode, "size " + std::to_string(bytes) + "; a bulk copy moves a positive multiple of 16 bytes");
  }
}

void TensorCopyOps::bulk_copy_to_cluster(const Addr& dst, const Addr& src, const Src& size, const Addr& bar) {
  const ptx::Instruction opcode{O::cp, {M::async, M::bulk, M::shared_cluster, M::shared_cta,
                                        M::mbarrier_complete_tx_bytes}};
  require(opcode, kHopper);
  expect_bulk_size(*this, opcode, size);
  emit(opcode, {operand_of(dst), operand_of(src), operand_of(size), operand_of(bar)});
}

void TensorCopyOps::bulk_reduce_add_f32(const Addr& global_dst, const Addr& shared_src, const Src& size) {
  const ptx::Instruction opcode{O::cp, {M::reduce, M::async, M::bulk, M::global, M::shared_cta, M::bulk_group,
                                        M::add, mod(Type::f32)}};
  require(opcode, kHopper);
  expect_bulk_size(*this, opcode, size);
  emit(opcode, {operand_of(global_dst), operand_of(shared_src), operand_of(size)});
}

void TensorCopyOps::tma_store(const Reg& tensor_map, const std::vector<Src>& coords, const Addr& shared_src) {
  ptx::Instruction opcode = tensor_copy(*this, coords);
  opcode.modifiers.insert(opcode.modifiers.end(), {M::global, M::shared_cta, M::tile, M::bulk_group});
  require(opcode, kHopper);
  emit(opcode, {map_with_coords(*this, opcode, tensor_map, coords), operand_of(shared_src)});
}

void TensorCopyOps::tma_reduce_add(const Reg& tensor_map, const std::vector<Src>& coords, const Addr& shared_src) {
  // cp.reduce.async.bulk.tensor.<N>d: the tensor copy's rank word after the reduce's.
  ptx::Instruction opcode = tensor_copy(*this, coords);
  opcode.modifiers.insert(opcode.modifiers.begin(), M::reduce);
  opcode.modifiers.insert(opcode.modifiers.end(), {M::global, M::shared_cta, M::add, M::tile, M::bulk_group});
  require(opcode, kHopper);
  emit(opcode, {map_with_coords(*this, opcode, tensor_map, coords), operand_of(shared_src)});
}

void TensorCopyOps::bulk_commit_group() {
  bare(*this, {O::cp, {M::async, M::bulk, M::commit_group}});
}

void TensorCopyOps::bulk_wait_group(int pending) {
  bulk_wait(*this, {O::cp, {M::async, M::bulk, M::wait_group}}, pending);
}

void TensorCopyOps::bulk_wait_group_read(int pending) {
  bulk_wait(*this, {O::cp, {M::async, M::bulk, M::wait_group, M::read}}, pending);
}

void TensorCopyOps::prefetch_tensormap(const Reg& tensor_map) {
  const ptx::Instruction form{O::prefetch, {M::tensormap}};
  require(form, kHopper);
  expect_type(form, tensor_map, Type::u64, "tensor map address");
  emit(form, {operand_of(at(tensor_map))});
}

void TensorCopyOps::fence_proxy_async_shared() {
  bare(*this, {O::fence, {M::proxy, M::async, M::shared_cta}});
}

void TensorCopyOps::fence_proxy_async_shared_cluster() {
  bare(*this, {O::fence, {M::proxy, M::async, M::shared_cluster}});
}

}  // namespace warpforge::dsl
