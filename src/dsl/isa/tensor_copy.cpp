#include "warpforge/dsl/isa/tensor_copy.hpp"

namespace warpforge::dsl {

namespace {
const Availability kHopper = Availability::since(90);

ptx::Operand map_with_coords(const KernelCore& k, std::string_view opcode, const Reg& map,
                             const std::vector<Src>& coords) {
  if (coords.empty() || coords.size() > 5)
    k.fail(opcode, std::to_string(coords.size()) + " coordinates; a tensor copy takes 1 to 5");
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

std::string rank(const std::vector<Src>& coords) { return std::to_string(coords.size()) + "d"; }
}  // namespace

Reg TensorCopyOps::param_generic_address(const ParamRef& param) {
  require("cvta.param.u64", kHopper);
  Reg r = reg(Type::u64);
  emit("mov.b64", {operand_of(r), ptx::Operand::symbol(param.name)});
  emit("cvta.param.u64", {operand_of(r), operand_of(r)});
  return r;
}

void TensorCopyOps::tma_load(const Addr& shared_dst, const Reg& tensor_map, const std::vector<Src>& coords,
                             const Addr& bar, std::optional<Src> multicast_mask) {
  std::string opcode = "cp.async.bulk.tensor." + rank(coords) +
                       ".shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  if (multicast_mask) opcode += ".multicast::cluster";
  require(opcode, kHopper);
  std::vector<ptx::Operand> ops{operand_of(shared_dst), map_with_coords(*this, opcode, tensor_map, coords),
                                operand_of(bar)};
  if (multicast_mask) {
    expect_type(opcode, *multicast_mask, Type::u16, "CTA mask");
    ops.push_back(operand_of(*multicast_mask));
  }
  emit(opcode, std::move(ops));
}

void TensorCopyOps::bulk_copy_to_cluster(const Addr& dst, const Addr& src, const Src& size, const Addr& bar) {
  const char* opcode = "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes";
  require(opcode, kHopper);
  if (size.is_reg()) {
    expect_type(opcode, size, Type::u32, "size");
  } else if (const auto bytes = size.imm().int_value(); bytes <= 0 || bytes % 16 != 0) {
    fail(opcode, "size " + std::to_string(bytes) + "; a bulk copy moves a positive multiple of 16 bytes");
  }
  emit(opcode, {operand_of(dst), operand_of(src), operand_of(size), operand_of(bar)});
}

void TensorCopyOps::tma_store(const Reg& tensor_map, const std::vector<Src>& coords, const Addr& shared_src) {
  std::string opcode = "cp.async.bulk.tensor." + rank(coords) + ".global.shared::cta.tile.bulk_group";
  require(opcode, kHopper);
  emit(opcode, {map_with_coords(*this, opcode, tensor_map, coords), operand_of(shared_src)});
}

void TensorCopyOps::bulk_commit_group() {
  require("cp.async.bulk.commit_group", kHopper);
  emit("cp.async.bulk.commit_group", {});
}

void TensorCopyOps::bulk_wait_group(int pending) {
  require("cp.async.bulk.wait_group", kHopper);
  if (pending < 0) fail("cp.async.bulk.wait_group", "pending group count " + std::to_string(pending) + " < 0");
  emit("cp.async.bulk.wait_group", {ptx::Operand::imm(pending)});
}

void TensorCopyOps::bulk_wait_group_read(int pending) {
  require("cp.async.bulk.wait_group.read", kHopper);
  if (pending < 0)
    fail("cp.async.bulk.wait_group.read", "pending group count " + std::to_string(pending) + " < 0");
  emit("cp.async.bulk.wait_group.read", {ptx::Operand::imm(pending)});
}

void TensorCopyOps::prefetch_tensormap(const Reg& tensor_map) {
  require("prefetch.tensormap", kHopper);
  expect_type("prefetch.tensormap", tensor_map, Type::u64, "tensor map address");
  emit("prefetch.tensormap", {operand_of(at(tensor_map))});
}

void TensorCopyOps::fence_proxy_async_shared() {
  require("fence.proxy.async.shared::cta", kHopper);
  emit("fence.proxy.async.shared::cta", {});
}

void TensorCopyOps::fence_proxy_async_shared_cluster() {
  require("fence.proxy.async.shared::cluster", kHopper);
  emit("fence.proxy.async.shared::cluster", {});
}

}  // namespace warpforge::dsl
