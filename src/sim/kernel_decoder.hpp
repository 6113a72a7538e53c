// Internal: the state of decoding one kernel (decode.hpp's decode_kernel):
// its register slots, labels, symbols and the layout of its parameters and
// shared and local memory while its statements are walked (decode.cpp), with
// the copies of the device functions it calls (decode_calls.cpp).
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "decode.hpp"
#include "source_lines.hpp"
#include "warpforge/ptx/instruction.hpp"
#include "warpforge/ptx/statement.hpp"

namespace warpforge::sim {

// What KernelDecoder::collect() found, decoded by run(): instructions, and
// the parts of a device function call (collect_call), whose `inst` holds the
// operands.
enum class Synthetic : std::uint8_t { none, frame_copy, call, ret, depth_trap };
struct Pending {
  ptx::Instruction inst;
  int line;
  Synthetic kind = Synthetic::none;
  std::uint32_t source = 0;  // SourceLines' index of the .loc in effect
};

class KernelDecoder {
 public:
  KernelDecoder(const ptx::Module& module, std::size_t item_index, const ModuleSymbols& symbols);
  Kernel run();

 private:
  [[noreturn]] void fail(int line, const std::string& text, const std::string& why) const;

  // Layout of parameters, shared, local and .param variables (decode.cpp).
  void layout_params();
  void place_shared(const ptx::Variable& v);
  void declare(const ptx::Variable& v);
  void add_register(const std::string& name, int bits = 0);

  // The statements of a body, in the emitter's lines (decode.cpp), and the
  // device function calls among them (decode_calls.cpp).
  void collect(const ptx::Block& block);
  ptx::Instruction in_scope(const ptx::Instruction& inst) const;
  void collect_call(const ptx::Instruction& call);
  std::string copy_of(std::size_t item, int depth);
  void collect_copies();
  int body_line(std::size_t item);

  // Instructions and their operands (decode.cpp); the calls' parts and
  // vprintf (decode_calls.cpp).
  Inst decode(const ptx::Instruction& in, int line);
  void parse_modifiers(Inst& d, const std::vector<ptx::Mod>& mods, ptx::ModifierClasses classes,
                       const std::string& text);
  void decode_guard(Inst& d, const std::optional<ptx::Guard>& guard);
  Inst decode_synthetic(const Pending& p);
  Inst decode_vprintf(const ptx::Instruction& in, Inst d);
  Arg scalar(const ptx::Operand& o, ptx::Type imm_type, int line, const std::string& text);
  std::vector<Arg> operand(const ptx::Operand& o, ptx::Type imm_type, int line,
                           const std::string& text);
  const SymbolInfo* find_symbol(const std::string& name) const;

  const ptx::Module& module_;
  const ptx::Function& function_;
  const ModuleSymbols& module_symbols_;
  SourceLines sources_;
  Kernel kernel_;
  int line_ = 0;
  std::vector<Pending> pending_;
  std::unordered_map<std::string, std::uint32_t> slots_;
  std::set<std::uint32_t> wide_slots_;  // the 64-bit registers' slots
  std::unordered_map<std::string, std::uint32_t> labels_;
  std::unordered_map<std::string, SymbolInfo> symbols_;
  std::vector<std::string> extern_names_;
  mutable SymbolInfo extern_symbol_;
  std::uint32_t shared_top_ = 0;
  std::uint32_t extern_align_ = 16;
  std::uint32_t local_top_ = 0;
  // Device function calls: the call depth of the code being collected (0:
  // the kernel's body), the copies of functions by (item, depth) with their
  // names' suffix, those not yet collected, each function's first body line.
  struct QueuedCopy {
    std::size_t item;
    int depth;
    std::string suffix;
  };
  int depth_ = 0;
  ptx::Operand copy_return_;  // the return register of the copy being collected
  std::map<std::pair<std::size_t, int>, std::string> copies_;
  std::vector<QueuedCopy> queued_copies_;
  std::map<std::size_t, int> body_lines_;
  // .param variables declared in the body (call arguments and return
  // values): per-thread storage, in the local space; an instruction naming
  // one in a .param access reads or writes there.
  std::set<std::string> frame_params_;
  std::vector<std::map<std::string, std::string>> variable_scopes_;  // collect()'s, innermost last
  int redeclared_ = 0;
  bool names_frame_param_ = false;
};

}  // namespace warpforge::sim
