// Line numbers in the emitted PTX text, so that the simulator's messages point
// at the line a user sees in ptx::emit(module) (and in `warpforge emit`).
#include <algorithm>

#include "decode.hpp"
#include "warpforge/ptx/emitter.hpp"

namespace warpforge::sim {

int first_body_line(const ptx::Module& module, std::size_t item_index) {
  // Emit the module up to this function, then the function with an empty
  // body: the body's first statement follows the opening brace.
  ptx::Module prefix = module;
  prefix.items.resize(item_index + 1);
  auto& f = std::get<ptx::Function>(prefix.items.back());
  f.body = ptx::Block{};
  const std::string text = ptx::emit(prefix);
  // The text ends "{\n}\n": the body starts on the line of the closing brace.
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace warpforge::sim
