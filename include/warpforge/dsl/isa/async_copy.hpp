// Asynchronous global -> shared copies (PTX ISA 9.7.9.25 cp.async,
// 9.7.9.26/27 commit_group and wait_group), sm_80+. The copied bytes are
// visible to the issuing thread only after a wait covering their group.
#pragma once

#include <optional>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

enum class CpAsyncCache { ca, cg };  // cg (L2 only) takes 16-byte copies only
// .level::prefetch_size: L2 may fetch this much around the copied bytes
// (a hint; PTX ISA 9.7.9.25.3.1).
enum class L2Prefetch { none, b64, b128, b256 };

class AsyncCopyOps : public virtual KernelCore {
 public:
  // cp.async.{ca,cg}.shared.global [dst], [src], bytes[, src_bytes]:
  // bytes is 4, 8 or 16; with src_bytes < bytes the rest is zero-filled.
  void cp_async(CpAsyncCache cache, int bytes, const Addr& shared_dst, const Addr& global_src,
                std::optional<Src> src_bytes = std::nullopt, L2Prefetch prefetch = L2Prefetch::none);
  void cp_async_commit();
  void cp_async_wait(int groups_pending);  // cp.async.wait_group N
  void cp_async_wait_all();
};

}  // namespace warpforge::dsl
