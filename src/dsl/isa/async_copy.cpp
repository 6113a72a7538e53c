#include "warpforge/dsl/isa/async_copy.hpp"

#include "../type_names.hpp"
#include "warpforge/ptx/target.hpp"

#include <string>

namespace warpforge::dsl {

using detail::M;
using detail::O;
using ptx::kAmpere;

void AsyncCopyOps::cp_async(CpAsyncCache cache, int bytes, const Addr& shared_dst, const Addr& global_src,
                            std::optional<Src> src_bytes, L2Prefetch prefetch) {
  std::vector<M> mods{M::async, cache == CpAsyncCache::ca ? M::ca : M::cg, M::shared, M::global};
  if (prefetch != L2Prefetch::none)
    mods.push_back(prefetch == L2Prefetch::b64 ? M::L2_64B : prefetch == L2Prefetch::b128 ? M::L2_128B : M::L2_256B);
  const ptx::Instruction opcode{O::cp, mods};
  require(opcode, kAmpere);
  const ptx::PtxVersion version = ptx::ptx_version(target());
  if (prefetch != L2Prefetch::none && version.major * 10 + version.minor < 74)
    fail(opcode, "an L2 prefetch size needs PTX ISA 7.4; target " + std::string(ptx::name(target())) + " emits " +
                     std::to_string(version.major) + "." + std::to_string(version.minor) +
                     " (build the kernel for sm_90a or later)");
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
  const ptx::Instruction form{O::cp, {M::async, M::commit_group}};
  require(form, kAmpere);
  emit(form, {});
}

void AsyncCopyOps::cp_async_wait(int groups_pending) {
  const ptx::Instruction form{O::cp, {M::async, M::wait_group}};
  require(form, kAmpere);
  if (groups_pending < 0) fail(form, "pending group count " + std::to_string(groups_pending) + " < 0");
  emit(form, {ptx::Operand::imm(groups_pending)});
}

void AsyncCopyOps::cp_async_wait_all() {
  const ptx::Instruction form{O::cp, {M::async, M::wait_all}};
  require(form, kAmpere);
  emit(form, {});
}

}  // namespace warpforge::dsl
