// The dot-modifiers of PTX instructions (PTX ISA 9.7, each instruction's
// syntax), each word with the class it belongs to and, where the class is an
// enumeration, its value there. The one place a modifier is spelled: the DSL
// emits these spellings, the simulator's decoder and the differential harness
// look them up here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "warpforge/ptx/variable.hpp"

namespace warpforge::ptx {

// Comparison operators of setp/set (PTX ISA 9.7.7.1): the unsigned-integer
// ones (lo ls hi hs), then the float ones that are true on NaN (equ .. geu)
// and the ordered/unordered tests; order matters to float_only().
enum class Cmp : std::uint8_t {
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  lo,
  ls,
  hi,
  hs,
  equ,
  neu,
  ltu,
  leu,
  gtu,
  geu,
  num,
  nan
};
std::string_view name(Cmp c);
inline bool float_only(Cmp c) {
  return c >= Cmp::equ;
}

// Operations of atom/red (PTX ISA 9.7.13.5-6); redux.sync uses add, min, max
// and the three logic ones.
enum class AtomOp : std::uint8_t { add, min, max, inc, dec, exch, cas, and_, or_, xor_ };
std::string_view name(AtomOp op);

// Rounding modifiers (PTX ISA 9.7.3, 9.7.9.21 "cvt"); the integral forms
// (.rni .rzi .rmi .rpi) are the same modes in class integral_rounding.
enum class Rounding : std::uint8_t { none, rn, rz, rm, rp, rna };

enum class BoolOp : std::uint8_t { none, and_, or_, xor_ };    // setp's combining operation
enum class MulMode : std::uint8_t { none, lo, hi, wide };      // mul/mad (PTX ISA 9.7.1.5)
enum class ShflMode : std::uint8_t { up, down, bfly, idx };    // shfl.sync (9.7.8.6)
enum class VoteMode : std::uint8_t { all, any, uni, ballot };  // vote.sync (9.7.8.5)
// mma.sync shapes (9.7.14.5), wmma's (9.7.14.4), and ldmatrix/stmatrix's
// 8x8 matrices (9.7.14.5.15-16)
enum class MmaShape : std::uint8_t {
  m16n8k8,
  m16n8k16,
  m16n8k32,
  m8n8k4,
  m16n16k16,
  m32n8k16,
  m8n32k16,
  m16n16k8,
  m8n8
};

// What a modifier word is. Words that change nothing a program can observe
// on one device (cache and eviction hints, memory orders and scopes, the
// .sync/.aligned promises) are in classes of their own so that a tool can
// treat them as hints.
enum class ModifierClass : std::uint8_t {
  type,               // .u32 .bf16x2 ... (ptx::Type)
  rounding,           // .rn .rz .rm .rp .rna (Rounding)
  integral_rounding,  // .rni .rzi .rmi .rpi (Rounding)
  ftz,                // .ftz
  saturation,         // .sat, .satfinite (value 0, 1)
  relu,               // .relu
  approximation,      // .approx .full
  noftz,              // .noftz (atom's packed halves)
  comparison,         // .eq .. .nan (Cmp)
  bool_op,            // .and .or .xor (BoolOp), setp's combination
  atomic_op,          // .add .. .xor (AtomOp)
  space,              // .global .shared[::cta|::cluster] .local .param .const (Space)
  vector,             // .v2 .v4 .v8 (the count)
  matrix_count,       // .x1 .x2 .x4 (the count)
  transpose,          // .trans
  mul_mode,           // .lo .hi .wide (MulMode)
  shfl_mode,          // .up .down .bfly .idx (ShflMode)
  vote_mode,          // .all .any .uni .ballot (VoteMode)
  shape,              // .m16n8k16 ... (MmaShape), .m8n8 for ldmatrix
  layout,             // .row .col
  convert_to,         // cvta's .to
  sync,               // .sync .aligned .uni: promises about convergence
  cache,              // .ca .cg .cs .lu .cv .wb .wt .nc .volatile .L1:: .L2:: hints
  memory_order,       // .relaxed .acquire .release .acq_rel .weak .sc .mmio
  scope,              // .cta .cluster .gpu .sys .gl
  proxy,              // .proxy .async .mbarrier_init (fence.proxy forms)
  form,   // a sub-operation that picks the instruction's form (bar.arrive, cp.async.wait_group...)
  count,  // number of classes
};
std::string_view name(ModifierClass c);

// A set of modifier classes, one bit each.
class ModifierClasses {
 public:
  constexpr ModifierClasses() = default;
  constexpr ModifierClasses(std::initializer_list<ModifierClass> classes) {
    for (auto c : classes) bits_ |= bit(c);
  }
  constexpr bool has(ModifierClass c) const { return (bits_ & bit(c)) != 0; }
  constexpr ModifierClasses operator|(ModifierClasses o) const {
    return from_bits(bits_ | o.bits_);
  }
  std::vector<ModifierClass> list() const;

 private:
  static constexpr std::uint32_t bit(ModifierClass c) {
    return std::uint32_t{1} << static_cast<int>(c);
  }
  static constexpr ModifierClasses from_bits(std::uint32_t b) {
    ModifierClasses s;
    s.bits_ = b;
    return s;
  }
  std::uint32_t bits_ = 0;
};

struct Modifier {
  std::string_view word;  // without the dot: "shared::cta"
  ModifierClass cls;
  std::uint8_t value = 0;  // the enumerator in the class's enum (Cmp, AtomOp, Space ...) or count
};

// Every meaning of `word` among `allowed`'s classes, the first that fits;
// nullopt when the word is no modifier of those classes. Types come from
// parse_type(), so "u32" is a Modifier{.cls = type, .value = Type::u32}.
std::optional<Modifier> find_modifier(std::string_view word, ModifierClasses allowed);

// The words of one class (types: every ptx::Type), for a harness to enumerate.
std::vector<Modifier> modifiers_of(ModifierClass c);

}  // namespace warpforge::ptx
