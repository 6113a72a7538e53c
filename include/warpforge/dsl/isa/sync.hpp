// Barriers and memory ordering (PTX ISA 9.7.13.1 bar/barrier, 9.7.13.3
// bar.warp.sync, 9.7.13.4 membar/fence).
#pragma once

#include <optional>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

enum class MembarLevel { cta, gl, sys };
enum class FenceSem { sc, acq_rel };
enum class Scope { cta, cluster, gpu, sys };

class SyncOps : public virtual KernelCore {
 public:
  // bar.sync id[, count]: waits for `count` threads (all of the CTA if absent)
  // at named barrier `id` (0..15). count is a multiple of 32.
  void bar_sync(const Src& id = 0, std::optional<Src> count = std::nullopt);
  // barrier.sync id[, count]: the same wait without .aligned, for code where
  // a warp's threads may reach the barrier apart (divergent branches or
  // spin loops before it; PTX ISA 9.7.13.1: bar.sync is barrier.sync.aligned).
  void barrier_sync(const Src& id, std::optional<Src> count = std::nullopt);
  void bar_arrive(const Src& id, const Src& count);
  void bar_warp_sync(const Src& member_mask = 0xffffffffu);
  void membar(MembarLevel level);
  void fence(FenceSem sem, Scope scope);
  // Programmatic dependent launch (PTX ISA 9.7.13, griddepcontrol; sm_90).
  // griddepcontrol.wait: waits until the grids this one was launched to
  // overlap (runtime::LaunchConfig::overlap_previous) have completed and
  // their memory is visible; without such a launch it returns at once.
  void griddepcontrol_wait();
  // griddepcontrol.launch_dependents: the next grid of the stream, launched
  // to overlap this one, may start once every CTA of this grid has issued it
  // or exited (a scheduling hint: it orders no memory).
  void griddepcontrol_launch_dependents();
};

}  // namespace warpforge::dsl
