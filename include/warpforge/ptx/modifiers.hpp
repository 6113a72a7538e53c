// The dot-modifiers of PTX instructions (PTX ISA 9.7, each instruction's
// syntax): every word as a ptx::Mod, which the IR stores, and the meanings of
// each word, its class and, where the class is an enumeration, its value
// there. The one place a modifier is spelled (modifier_words.hpp): the parser
// reads words into Mods, the emitter prints them, and the DSL, the
// simulator's decoder, the transpiler and the differential harness use the
// enumerators and meanings.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "warpforge/ptx/modifier_words.hpp"
#include "warpforge/ptx/types.hpp"
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
// matrices (9.7.14.5.15-16); the first three are the ones the simulator runs
// with mma, wmma's are the next four.
enum class MmaShape : std::uint8_t {
  m16n8k8,
  m16n8k16,
  m16n8k32,
  m8n8k4,
  m16n16k16,
  m32n8k16,
  m8n32k16,
  m16n16k8,
  m8n8,
  m16n8k4,
  m16n8k64,
  m16n8k128,
  m16n8k256,
  m8n8k16,
  m8n8k32,
  m8n8k128,
  m16n16,
  m8n16,
  m16n8
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
  element_type,  // .b1 .s4 .e2m3x2 .ue8m0 ...: element types no ptx::Type stands for
  wgmma_shape,   // .m64nNkK (WgmmaShape)
  count,         // number of classes
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

// Every modifier word: first the types, with ptx::Type's values (mod(t)),
// then the words of modifier_words.hpp, then wgmma's shapes (wgmma_shape()).
#define WARPFORGE_PTX_MOD_ENUMERATOR(id, word, cls, value) id,
enum class Mod : std::uint16_t {
  last_type = kTypeCount - 1,
  WARPFORGE_PTX_MODIFIER_WORDS(WARPFORGE_PTX_MOD_ENUMERATOR)
  first_wgmma_shape,
};
#undef WARPFORGE_PTX_MOD_ENUMERATOR

constexpr Mod mod(Type t) {
  return static_cast<Mod>(t);
}
constexpr std::optional<Type> type_of(Mod m) {
  if (m > Mod::last_type) return std::nullopt;
  return static_cast<Type>(m);
}

// wgmma.mma_async's m64nNkK (PTX ISA 9.7.15.5.1): N = 8, 16, ..., 256 and
// K = 8 (tf32), 16 (f16, bf16), 32 (8-bit), 64 (sparse 8-bit), 256 (b1).
struct WgmmaShape {
  int n = 0;
  int k = 0;
};
std::optional<Mod> wgmma_shape(int n, int k);  // nullopt for another N or K
std::optional<WgmmaShape> wgmma_shape_of(Mod m);

constexpr Mod mod(Cmp c) {
  return static_cast<Mod>(static_cast<int>(Mod::eq) + static_cast<int>(c));
}
Mod mod(AtomOp op);

// The spelling without the dot: "shared::cta", "u32", "m64n128k16".
std::string_view name(Mod m);
// The word's Mod; nullopt for a word that is no PTX modifier.
std::optional<Mod> find_mod(std::string_view word);
// The enumerator's name ("shared_cta"), for code that writes C++; empty for
// the types and wgmma's shapes, which are mod(Type) and wgmma_shape(n, k).
std::string_view enumerator(Mod m);

// One meaning of a modifier word.
struct Modifier {
  Mod mod;
  ModifierClass cls;
  std::uint8_t value = 0;  // the enumerator in the class's enum (Cmp, AtomOp, Space ...) or count
};

// The meaning of `m` among `allowed`'s classes, the first that fits (vote's
// .uni is the vote mode, bra's the convergence promise); nullopt when the
// word has none of those classes. A type means itself: mod(Type::u32) is
// Modifier{.cls = type, .value = Type::u32}.
std::optional<Modifier> meaning(Mod m, ModifierClasses allowed);
// The same for a spelled word; nullopt also for a word that is no modifier.
std::optional<Modifier> find_modifier(std::string_view word, ModifierClasses allowed);

// The words of one class (types: every ptx::Type), for a harness to enumerate.
std::vector<Modifier> modifiers_of(ModifierClass c);

}  // namespace warpforge::ptx
