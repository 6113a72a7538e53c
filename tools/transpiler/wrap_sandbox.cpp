#include "transpiler/wrap_sandbox.hpp"

#include "warpforge/error.hpp"

namespace warpforge::transpiler::wrap {

bool reproduces(const ptx::Instruction& inst, const OperandWriter& ops,
                const std::function<void(Sandbox&)>& call) {
  try {
    Sandbox box(ops);
    call(box);
    return box.emitted() == inst;
  } catch (const Error&) {
    return false;  // the wrapper refused these operands: not a match
  }
}

std::optional<Code> checked(const ptx::Instruction& inst, const OperandWriter& ops, Code call,
                            const std::function<void(Sandbox&)>& run) {
  if (!reproduces(inst, ops, run)) return std::nullopt;
  return call;
}

}  // namespace warpforge::transpiler::wrap
