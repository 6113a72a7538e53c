// Loads, stores, an L2 prefetch and address conversion (PTX ISA 9.7.9.8
// ld, 9.7.9.10 st, 9.7.9.15 prefetch, 9.7.9.16 cvta). Vector forms take 2
// or 4 registers ({a, b, c, d}).
#pragma once

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

// Cache operators (PTX ISA 9.7.9.1): loads take ca/cg/cs/lu/cv, stores wb/cg/cs/wt.
enum class Cache { none, ca, cg, cs, lu, cv, wb, wt };

struct LdOpts {
  Cache cache = Cache::none;
  bool nc = false;         // ld.global.nc: the read-only (texture) path
  bool volatile_ = false;  // ld.volatile
};

struct StOpts {
  Cache cache = Cache::none;
  bool volatile_ = false;
  // st.shared::cluster (sm_90+, PTX ISA 9.7.9.10): the address is a
  // shared::cluster one (mapa_shared), possibly another CTA's shared memory.
  bool cluster = false;
};

class MemoryOps : public virtual KernelCore {
 public:
  // `space` global, shared, local, param or const names the state space;
  // Space::generic writes none (ld.u32 d, [a]): `a` holds a generic address.
  void ld(Space space, Type type, const Reg& d, const Addr& a, LdOpts o = {});
  void ld(Space space, Type type, const Regs& d, const Addr& a, LdOpts o = {});
  void st(Space space, Type type, const Addr& a, const Src& v, StOpts o = {});
  void st(Space space, Type type, const Addr& a, const Regs& v, StOpts o = {});
  // prefetch.global.L2 [a] (PTX ISA 9.7.9.15): brings the line holding
  // global address `a` into L2; no register is written, nothing waits for it.
  void prefetch_global_l2(const Addr& a);
  // cvta.to.<space>.u64 d, a: generic address -> address in `space`.
  void cvta_to(Space space, const Reg& d, const Reg& a);
  // cvta.<space>.u64 d, a: address in `space` -> generic address.
  void cvta_from(Space space, const Reg& d, const Reg& a);

 private:
  ptx::Instruction access(ptx::Opcode op, Space space, Type type, std::size_t width, Cache cache, bool nc,
                     bool volatile_, const Addr& a, bool cluster = false);
};

}  // namespace warpforge::dsl
