// The values a kernel is written with. Handles are cheap to copy and belong
// to one kernel: using a handle of one kernel in another is refused.
//  - Reg: a typed register.         - Pred: a predicate register.
//  - Src: a register or immediate.  - Addr: [base + offset] in some space.
//  - Label: a branch target.        - Shared: a shared-memory variable.
//  - Symbol: any variable of the module, by name.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/dsl/types.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/operand.hpp"

namespace warpforge::dsl {

class KernelCore;
class Src;

class Reg {
 public:
  Reg() = default;
  Type type() const { return type_; }
  const std::string& name() const;
  KernelCore* owner() const { return owner_; }
  bool valid() const { return owner_ != nullptr; }
  // The same register read as another type of the same width; emits nothing
  // (PTX lets an instruction of type T use any register of T's width whose
  // declared type is a bit type, PTX ISA 6.4.2).
  Reg as(Type t) const;

  // In-place integer updates, each one instruction: add/sub/mul.lo/and/or/xor/shl/shr.
  Reg& operator+=(const Src& rhs);
  Reg& operator-=(const Src& rhs);
  Reg& operator*=(const Src& rhs);
  Reg& operator&=(const Src& rhs);
  Reg& operator|=(const Src& rhs);
  Reg& operator^=(const Src& rhs);
  Reg& operator<<=(const Src& rhs);
  Reg& operator>>=(const Src& rhs);

 private:
  friend class KernelCore;
  Reg(KernelCore* owner, std::uint32_t id, Type type) : owner_(owner), id_(id), type_(type) {}
  KernelCore* owner_ = nullptr;
  std::uint32_t id_ = 0;
  Type type_ = Type::b32;
};

using Regs = std::vector<Reg>;

class Pred {
 public:
  Pred() = default;
  const std::string& name() const;
  KernelCore* owner() const { return owner_; }
  bool valid() const { return owner_ != nullptr; }

 private:
  friend class KernelCore;
  Pred(KernelCore* owner, std::uint32_t id) : owner_(owner), id_(id) {}
  KernelCore* owner_ = nullptr;
  std::uint32_t id_ = 0;
};

// A predicate as a guard or source: p or !p.
struct PredUse {
  Pred pred;
  bool negated = false;
  PredUse(const Pred& p, bool neg = false) : pred(p), negated(neg) {}  // NOLINT: implicit
};
inline PredUse operator!(const Pred& p) { return PredUse(p, true); }
inline PredUse operator!(const PredUse& p) { return PredUse(p.pred, !p.negated); }

// A source operand: a register or an immediate. Integer literals convert
// implicitly and take the instruction's type; float immediates are explicit
// (imm_f32, imm_f64) and exact.
class Src {
 public:
  Src(const Reg& r) : reg_(r) {}  // NOLINT: implicit by design
  template <std::integral I>
  Src(I value)  // NOLINT: implicit by design
      : imm_(std::is_signed_v<I> ? ptx::Operand::imm(static_cast<std::int64_t>(value))
                                 : ptx::Operand::imm_u(static_cast<std::uint64_t>(value))) {}
  static Src immediate(ptx::Operand op, std::optional<Type> type) {
    Src s(0);
    s.imm_ = std::move(op);
    s.imm_type_ = type;
    return s;
  }

  bool is_reg() const { return reg_.has_value(); }
  const Reg& reg() const { return *reg_; }
  const ptx::Operand& imm() const { return imm_; }
  // The type an immediate carries (floats), nullopt for integer literals.
  std::optional<Type> imm_type() const { return imm_type_; }

 private:
  std::optional<Reg> reg_;
  ptx::Operand imm_;
  std::optional<Type> imm_type_;
};

inline Src imm_f32(float v) { return Src::immediate(ptx::Operand::f32(v), Type::f32); }
inline Src imm_f64(double v) { return Src::immediate(ptx::Operand::f64(v), Type::f64); }

// A 32-bit immediate from a value a kernel's configuration computes in 64
// bits (byte offsets, counts, barrier ids): the unsigned 32-bit word PTX
// reads, negative values as their two's complement. A value no 32-bit word
// holds (outside -2^31 .. 2^32 - 1) is refused rather than cut.
inline std::uint32_t imm(std::int64_t v) {
  if (v < -(std::int64_t{1} << 31) || v > std::int64_t{0xFFFFFFFF})
    throw DslError("immediate " + std::to_string(v) +
                   " does not fit a 32-bit word (-2^31 .. 2^32 - 1); give it a 64-bit operand");
  return static_cast<std::uint32_t>(v);
}

class Label {
 public:
  Label() = default;
  const std::string& name() const { return name_; }
  KernelCore* owner() const { return owner_; }

 private:
  friend class KernelCore;
  Label(KernelCore* owner, std::string name) : owner_(owner), name_(std::move(name)) {}
  KernelCore* owner_ = nullptr;
  std::string name_;
};

// A shared-memory variable (static, or the dynamic `.extern .shared` array).
struct Shared {
  std::string name;
  std::int64_t bytes = 0;  // 0 for the dynamic array, sized at launch
  int align = 16;
};

// A kernel parameter referred to by name: byte-array params such as TMA
// descriptors, whose address, not value, instructions take.
struct ParamRef {
  std::string name;
  int bytes = 0;
  int align = 0;
};

// A variable the module declares by name (a .global, .const, .local or
// .shared one, such as nvcc's __local_depot0 or CUB's temp storage):
// instructions take its address, [name+offset], or move it (mov d, name).
struct Symbol {
  std::string name;
};

// [base + offset]: base is a register holding an address, or a symbol.
struct Addr {
  std::optional<Reg> base;
  std::string symbol;
  std::int64_t offset = 0;

  Addr(const Reg& r, std::int64_t off = 0) : base(r), offset(off) {}  // NOLINT: implicit
  Addr(const Shared& s, std::int64_t off = 0) : symbol(s.name), offset(off) {}  // NOLINT
  Addr(const ParamRef& p, std::int64_t off = 0) : symbol(p.name), offset(off) {}  // NOLINT
  Addr(const Symbol& s, std::int64_t off = 0) : symbol(s.name), offset(off) {}    // NOLINT
};

inline Addr at(const Reg& base, std::int64_t offset = 0) { return Addr(base, offset); }
inline Addr at(const Shared& base, std::int64_t offset = 0) { return Addr(base, offset); }
inline Addr at(const ParamRef& base, std::int64_t offset = 0) { return Addr(base, offset); }
inline Addr at(const Symbol& base, std::int64_t offset = 0) {
  return Addr(base, offset);
}

}  // namespace warpforge::dsl
