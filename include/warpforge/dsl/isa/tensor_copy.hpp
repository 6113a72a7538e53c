// The tensor memory accelerator (TMA), sm_90+: bulk tensor copies between
// global memory, described by a 128-byte tensor map, and shared memory
// (PTX ISA 9.7.9.25.5.1 cp.async.bulk.tensor, 9.7.9.25.5.2/3 bulk commit and
// wait groups), bulk copies from shared memory into another CTA's (9.7.9.25.4.1
// cp.async.bulk), the bulk reduce-add from shared into global memory
// (9.7.9.25.4.2 cp.reduce.async.bulk) and its tensor form (9.7.9.25.5.2
// cp.reduce.async.bulk.tensor), prefetch.tensormap, and the proxy fence that orders
// ordinary shared-memory accesses against the async proxy that TMA and wgmma
// use (PTX ISA 9.7.13.4 membar/fence, "fence.proxy.async").
//
// The tensor map operand is the generic address of the map; for a map passed
// as a kernel parameter (`.param .align 64 .b8 map[128]`, a grid constant)
// param_generic_address() gives it.
#pragma once

#include <optional>
#include <vector>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

class TensorCopyOps : public virtual KernelCore {
 public:
  // Two instructions: mov.b64 %rd, name; cvta.param.u64 %rd, %rd — the
  // generic address of a byte-array kernel parameter.
  Reg param_generic_address(const ParamRef& param);

  // cp.async.bulk.tensor.<N>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
  //   [dst], [map, {coords}], [bar]     (N = coords.size(), 1..5)
  // With `multicast_mask` (u16 bit per CTA rank of the cluster), .multicast::cluster:
  // the box lands at the same shared offset in every CTA of the mask, each
  // completing the transaction on its own barrier at the same offset.
  void tma_load(const Addr& shared_dst, const Reg& tensor_map, const std::vector<Src>& coords, const Addr& bar,
                std::optional<Src> multicast_mask = std::nullopt);
  // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
  //   [dst], [src], size, [bar]     (PTX ISA 9.7.9.25.4.1 cp.async.bulk)
  // `size` bytes (a multiple of 16) of this CTA's shared memory at `src` to
  // `dst` in a CTA of the cluster (a shared::cluster address: mapa_shared),
  // completing the transaction on `bar`, an mbarrier in that CTA. Addresses
  // 16-byte aligned.
  void bulk_copy_to_cluster(const Addr& dst, const Addr& src, const Src& size, const Addr& bar);
  // cp.async.bulk.tensor.<N>d.global.shared::cta.tile.bulk_group [map, {coords}], [src]
  void tma_store(const Reg& tensor_map, const std::vector<Src>& coords, const Addr& shared_src);
  // cp.reduce.async.bulk.tensor.<N>d.global.shared::cta.add.tile.bulk_group [map, {coords}], [src]
  //   (PTX ISA 9.7.9.25.5.2 cp.reduce.async.bulk.tensor)
  // As tma_store, but each element of the box's in-bounds part is added to
  // the one in global memory (the map's element type; each add an atomic
  // operation of its own), in the thread's bulk async-group.
  void tma_reduce_add(const Reg& tensor_map, const std::vector<Src>& coords, const Addr& shared_src);
  // cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [dst], [src], size
  //   (PTX ISA 9.7.9.25.4.2 cp.reduce.async.bulk)
  // `size` bytes (a positive multiple of 16) of f32 values at `shared_src`
  // in this CTA's shared memory added, element by element, into global
  // memory at `global_dst` (each add an atomic relaxed.gpu operation of its
  // own, so CTAs may add into the same elements), in the thread's bulk
  // async-group: bulk_commit_group, then bulk_wait_group_read before the
  // source is rewritten, bulk_wait_group before the sums are read by this
  // thread. Addresses 16-byte aligned.
  void bulk_reduce_add_f32(const Addr& global_dst, const Addr& shared_src, const Src& size);
  void bulk_commit_group();                 // cp.async.bulk.commit_group
  void bulk_wait_group(int pending);        // cp.async.bulk.wait_group N: writes done
  void bulk_wait_group_read(int pending);   // cp.async.bulk.wait_group.read N: sources free
  void prefetch_tensormap(const Reg& tensor_map);  // prefetch.tensormap [map]
  // fence.proxy.async.shared::cta: shared memory written by ordinary stores
  // becomes visible to the async proxy (TMA stores, wgmma operand reads).
  void fence_proxy_async_shared();
  // fence.proxy.async.shared::cluster: the same for shared memory of any CTA
  // of the cluster (stores through shared::cluster addresses that another
  // CTA's wgmma reads).
  void fence_proxy_async_shared_cluster();
};

}  // namespace warpforge::dsl
