// Warp-collective data exchange and reduction (PTX ISA 9.7.8.6 shfl.sync,
// 9.7.13.5 vote.sync, 9.7.13.10 redux.sync, 9.7.13.6 activemask, 9.7.13.11
// elect.sync). Every thread named in the member mask must execute the same
// instruction.
#pragma once

#include <optional>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

enum class Shfl { up, down, bfly, idx };
enum class Vote { all, any, uni };
enum class Redux { add, min, max, and_, or_, xor_ };

class WarpOps : public virtual KernelCore {
 public:
  // shfl.sync.mode.b32 d[|in_range], a, b, c, mask
  void shfl_sync(Shfl mode, const Reg& d, const Src& a, const Src& b, const Src& c,
                 const Src& member_mask = 0xffffffffu, std::optional<Pred> in_range = std::nullopt);
  // vote.sync.{all,any,uni}.pred d, a, mask
  void vote_sync(Vote mode, const Pred& d, const PredUse& a, const Src& member_mask = 0xffffffffu);
  // vote.sync.ballot.b32 d, a, mask
  void ballot_sync(const Reg& d, const PredUse& a, const Src& member_mask = 0xffffffffu);
  // redux.sync.op.type d, a, mask: u32/s32 for add/min/max, b32 for the logic ops (sm_80+)
  void redux_sync(Redux op, const Reg& d, const Src& a, const Src& member_mask = 0xffffffffu);
  void activemask(const Reg& d);
  // elect.sync d|p, mask: one leader lane (sm_90+)
  void elect_sync(const Reg& d, const Pred& p, const Src& member_mask = 0xffffffffu);
};

}  // namespace warpforge::dsl
