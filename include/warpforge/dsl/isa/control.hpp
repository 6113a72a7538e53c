// Branches and structured control flow built from them (PTX ISA 9.7.12.3
// bra, 9.7.12.10 ret, 9.7.12.11 exit). C++ loops unroll at build time; these
// make runtime control flow with labels and (guarded) branches:
//   if_then(p, body)          @!p bra END; body; END:
//   if_else(p, then, other)   @!p bra ELSE; then; bra END; ELSE: other; END:
//   for_range(b, e, s, body)  i = b; @(i >= e) bra END; TOP: body(i); i += s;
//                             @(i < e) bra TOP; END:
//   for_nonempty_range(b, e, s, body)   the same without the first test, for
//                             a range the caller knows holds at least one
//                             value: no path skips the body (ptxas then
//                             sees every wgmma the body issues waited for)
//   while_loop(cond, body)    TOP: @!cond() bra END; body; bra TOP; END:
#pragma once

#include <functional>

#include "warpforge/dsl/isa/alu.hpp"

namespace warpforge::dsl {

struct BraOpts {
  bool uniform = false;  // bra.uni: all active threads take the same path
};

class ControlOps : public virtual AluOps {
 public:
  void bra(const Label& target, BraOpts o = {});
  void bra_if(const PredUse& p, const Label& target, BraOpts o = {});
  void ret();
  void exit();

  void if_then(const PredUse& p, const std::function<void()>& then);
  void if_else(const PredUse& p, const std::function<void()>& then, const std::function<void()>& otherwise);
  // A runtime loop over [begin, end) by `step` (> 0); the counter has the type
  // of the first register among begin and end (u32 if both are immediates).
  void for_range(const Src& begin, const Src& end, const Src& step, const std::function<void(Reg)>& body);
  void for_nonempty_range(const Src& begin, const Src& end, const Src& step, const std::function<void(Reg)>& body);
  void while_loop(const std::function<Pred()>& condition, const std::function<void()>& body);

 private:
  void range_loop(const char* op, const Src& begin, const Src& end, const Src& step, bool test_first,
                  const std::function<void(Reg)>& body);
};

}  // namespace warpforge::dsl
