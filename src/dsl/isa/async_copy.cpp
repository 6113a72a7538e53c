#include "warpforge/dsl/isa/async_copy.hpp"

namespace warpforge::dsl {

namespace {
const Availability kAmpere = Availability::since(80);
}

void AsyncCopyOps::cp_async(CpAsyncCache cache, int bytes, const Addr& shared_dst, const Addr& global_src,
                            std::optional<Src> src_bytes) {
  std::string opcode = std::string("cp.async.") + (cache == CpAsyncCache::ca ? "ca" : "cg") + ".shared.global";
  require(opcode, kAmpere);
  if (bytes != 4 && bytes != 8 && bytes != 16) fail(opcode, "copy size " + std::to_string(bytes) + "; 4, 8 or 16 bytes");
  if (cache == CpAsyncCache::cg && bytes != 16)
    fail(opcode, "copy size " + std::to_string(bytes) + "; .cg copies 16 bytes only (use .ca for 4 or 8)");
  if (global_src.base && ptx::bits(global_src.base->type()) != 64)
    fail(opcode, "source address " + global_src.base->name() + " is not 64-bit; global addresses are");
  std::vector<ptx::Operand> ops{operand_of(shared_dst), operand_of(global_src), ptx::Operand::imm(bytes)};
  if (src_bytes) {
    expect_type(opcode, *src_bytes, Type::u32, "source size");
    ops.push_back(operand_of(*src_bytes));
  }
  emit(opcode, std::move(ops));
}

void AsyncCopyOps::cp_async_commit() {
  require("cp.async.commit_group", kAmpere);
  emit("cp.async.commit_group", {});
}

void AsyncCopyOps::cp_async_wait(int groups_pending) {
  require("cp.async.wait_group", kAmpere);
  if (groups_pending < 0) fail("cp.async.wait_group", "pending group count " + std::to_string(groups_pending) + " < 0");
  emit("cp.async.wait_group", {ptx::Operand::imm(groups_pending)});
}

void AsyncCopyOps::cp_async_wait_all() {
  require("cp.async.wait_all", kAmpere);
  emit("cp.async.wait_all", {});
}

}  // namespace warpforge::dsl
