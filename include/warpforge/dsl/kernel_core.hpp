// The heart of the kernel builder: identity and target, registers, labels,
// parameters, shared memory, directives, the instruction stream with its
// checks, and the finished module. The instruction families (isa/*.hpp) are
// mixins on top of it; `Kernel` (kernel.hpp) puts them together.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/dsl/handles.hpp"
#include "warpforge/ptx/availability.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/special_register.hpp"

namespace warpforge::dsl {

using ptx::Availability;

// What a refusal names: an instruction's text ("mov %tid.x"), or the form a
// wrapper is about to emit (an opcode and its modifiers), spelled by the
// vocabulary only when a refusal needs it.
class InstructionName {
 public:
  InstructionName() = default;
  InstructionName(std::string_view text) : text_(text) {}         // NOLINT: implicit by design
  InstructionName(const char* text) : text_(text) {}              // NOLINT
  InstructionName(const std::string& text) : text_(text) {}       // NOLINT
  InstructionName(const ptx::Instruction& form) : form_(&form) {}  // NOLINT
  std::string str() const { return form_ ? form_->full_opcode() : std::string(text_); }
  bool empty() const { return !form_ && text_.empty(); }

 private:
  std::string_view text_;
  const ptx::Instruction* form_ = nullptr;
};
using ptx::SReg;
using ptx::SRegInfo;

class KernelCore {
 public:
  KernelCore(const KernelCore&) = delete;
  KernelCore& operator=(const KernelCore&) = delete;
  virtual ~KernelCore() = default;

  const std::string& name() const { return name_; }
  Target target() const { return target_; }

  // --- registers ---------------------------------------------------------
  // Unnamed registers get nvcc-style names by their storage type (%r7, %rd2,
  // %f3, %fd1, %rs4, %p2); named ones are %name (arrays %name0 ...).
  Reg reg(Type type, std::string name = {});
  Regs regs(Type type, int count, std::string name = {});
  Pred pred(std::string name = {});

  // --- labels ----------------------------------------------------------------
  Label label(std::string_view hint = "L");  // a fresh, unplaced label
  void place(const Label& label);            // `name:` here

  // --- parameters (each emits the documented load sequence) -------------------
  // `.param .T name` + `ld.param.T %r, [name]`.
  Reg param(Type type, std::string name);
  // `.param .u64 .ptr .global [.align N] name`, then ld.param.u64 and
  // cvta.to.global.u64: a global-space address, ready for ld/st.global.
  Reg param_ptr(std::string name, int align = 0);
  // `.param .align A .b8 name[bytes]`: the bytes stay in the param space
  // (e.g. a 128-byte TMA descriptor, passed as a grid constant).
  ParamRef param_bytes(std::string name, int bytes, int align);

  // --- shared memory -----------------------------------------------------------
  Shared shared(std::string name, std::int64_t bytes, int align = 16);
  // The `.extern .shared .align A .b8 name[]` array sized at launch.
  Shared dynamic_shared(std::string name = "dynamic_smem", int align = 16);
  // The 32-bit shared-space address of a variable (mov.u32 %r, name).
  Reg address_of(const Shared& var);

  // --- special registers ----------------------------------------------------
  Reg sreg(SReg r);                // mov.u32/u64 %r, %tid.x ...
  Reg sreg(std::string_view name);  // by PTX name; unknown names are refused

  // --- performance directives (PTX ISA 11.4) -----------------------------------
  void maxntid(std::uint32_t x, std::uint32_t y = 1, std::uint32_t z = 1);
  void reqntid(std::uint32_t x, std::uint32_t y = 1, std::uint32_t z = 1);
  void minnctapersm(std::uint32_t n);
  void maxnreg(std::uint32_t n);
  void explicitcluster();
  void reqnctapercluster(std::uint32_t x, std::uint32_t y = 1, std::uint32_t z = 1);

  // --- scopes ---------------------------------------------------------------------
  // A nested `{ ... }` block holding what `body` emits. As in PTX, the
  // registers and predicates named inside it (reg/regs/pred with a name, and
  // the declare_* calls) are declared in the block and end with it, and may
  // reuse a name of an enclosing scope, which they hide there; sibling scopes
  // may each declare the same names and place labels of the same name.
  // Automatic registers (no name) stay function-wide. A handle used where its
  // register is not visible (after its scope, or inside a scope that hides
  // its name) is refused.
  void scope(const std::function<void()>& body);

  // --- exact declarations --------------------------------------------------------
  // For code that reproduces given PTX statement for statement (the PTX -> C++
  // transpiler): registers are declared where these are called, under exactly
  // the names given (any PTX identifier, '%' included), instead of by the
  // automatic declarations at the top of the body. Names are still checked
  // against every other declaration of the kernel.
  Reg declare_reg(Type type, std::string name);                     // .reg .T name;
  Regs declare_regs(Type type, std::string prefix, int count);      // .reg .T prefix<count>;
  Pred declare_pred(std::string name);                              // .reg .pred name;
  std::vector<Pred> declare_preds(std::string prefix, int count);   // .reg .pred prefix<count>;
  Label label_named(std::string name);                              // a label called exactly `name`
  // Appends one IR statement as given: a declaration the DSL has no call for,
  // a .loc or .pragma directive.
  void statement(ptx::Statement s);

  // --- the escape hatch ------------------------------------------------------------
  // Any instruction, unwrapped: `k.inst("prmt.b32", d, a, b, sel)`. The
  // dotted opcode is read through the PTX vocabulary (ptx/vocabulary.hpp):
  // a word PTX does not have is refused, and the operand count and target
  // are checked against the opcode's.
  template <class... Ops>
  void inst(std::string_view opcode, const Ops&... ops) {
    inst(opcode, std::vector<ptx::Operand>{operand_of(ops)...});
  }
  // The same with the operands already made (the bindings' and the transpiler's).
  void inst(std::string_view opcode, std::vector<ptx::Operand> operands);
  // The same for an instruction whose opcode and modifiers are the
  // vocabulary's enumerators already (the Python DSL's `k.op`).
  void inst(ptx::Instruction form);

  // Every instruction emitted inside `body` is guarded by `p` (@p / @!p).
  void guarded(PredUse p, const std::function<void()>& body);

  // --- the result ----------------------------------------------------------------
  ptx::Function function() const;
  ptx::Module module() const;
  std::string ptx() const { return module().to_ptx(); }

  // --- for instruction wrappers -------------------------------------------------
  // Operand conversions check that handles belong to this kernel.
  ptx::Operand operand_of(const Reg& r) const;
  ptx::Operand operand_of(const Pred& p) const;
  ptx::Operand operand_of(const PredUse& p) const;
  ptx::Operand operand_of(const Src& s) const;
  ptx::Operand operand_of(const Addr& a) const;
  ptx::Operand operand_of(const Label& l) const;
  ptx::Operand operand_of(const Regs& rs) const;  // {a, b, c}
  ptx::Operand operand_of(SReg r) const;          // %tid.x; refused where the target lacks it
  ptx::Operand operand_of(const ptx::Operand& op) const { return op; }
  template <std::integral I>
  ptx::Operand operand_of(I value) const {
    return operand_of(Src(value));
  }

  // Refusals, all in one voice: "kernel 'k': <instruction>: <what>".
  [[noreturn]] void fail(InstructionName instruction, const std::string& what) const;
  void require(InstructionName instruction, const Availability& availability) const;
  // A register operand must hold `type` (same type, or same width where either
  // side is a bit type, or integers of one width).
  void expect_type(InstructionName instruction, const Reg& r, Type type, std::string_view role) const;
  // As above for a source; immediates pass unless they carry another float type.
  void expect_type(InstructionName instruction, const Src& s, Type type, std::string_view role) const;

  void emit(ptx::Instruction inst);
  // Emits `form` (an opcode and its modifiers) with these operands.
  void emit(ptx::Instruction form, std::vector<ptx::Operand> operands);

  const std::string& reg_name(std::uint32_t id) const { return regs_[id].name; }
  const std::string& pred_name(std::uint32_t id) const { return preds_[id]; }

 protected:
  KernelCore(std::string name, Target target);
  KernelCore() = default;  // only for the virtual-base mixins; Kernel calls the one above

 private:
  struct RegInfo {
    std::string name;
    Type type;
  };
  struct Declaration {  // one `.reg` line
    std::string name;   // "%r" for a range, "%acc" for a named one
    Type storage;
    std::optional<int> range;
  };

  // What a name declared in a scope stands for: a register or predicate
  // handle, or none (the prefix of a `%name<N>` range).
  struct Holder {
    enum class Kind : std::uint8_t { none, reg, pred } kind = Kind::none;
    std::uint32_t id = 0;
  };
  struct NameScope {
    std::map<std::string, Holder> names;
    std::set<std::string> labels;
  };

  void declare_in_scope(const std::string& name, Holder holder);
  // Refuses a handle whose name does not name it here.
  void check_visible(const std::string& name, Holder holder, std::string_view what) const;
  std::string claim_name(std::string name, std::optional<int> range);
  void check_symbol_free(std::string_view what, const std::string& name) const;
  std::string auto_name(Type storage);
  Reg new_reg(std::string name, Type type);
  Pred new_pred(std::string name);
  void declare_named(const std::string& name, Type storage, std::optional<int> range);
  void claim_exact(const std::string& name, Holder holder);
  void check_owner(const KernelCore* owner, std::string_view what, const std::string& name,
                   InstructionName instruction = {}) const;

  std::string name_;
  Target target_ = Target::sm_80;
  std::deque<RegInfo> regs_;
  std::deque<std::string> preds_;
  std::vector<Declaration> named_decls_;
  std::vector<std::pair<std::string, int>> auto_counts_;  // prefix -> count, first-use order
  std::vector<NameScope> scopes_{1};                      // the function's, then each open scope()
  std::set<std::string> placed_labels_;  // in any scope, for the check that branch targets exist
  int label_counter_ = 0;
  std::vector<ptx::Variable> params_;
  std::vector<ptx::Directive> directives_;
  std::vector<ptx::Variable> shared_;
  std::optional<ptx::Variable> dynamic_shared_;
  std::vector<ptx::Statement> body_;
  std::optional<ptx::Guard> guard_;
};

}  // namespace warpforge::dsl
