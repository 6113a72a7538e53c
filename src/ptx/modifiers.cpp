#include "warpforge/ptx/modifiers.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "warpforge/ptx/types.hpp"

namespace warpforge::ptx {
namespace {

using C = ModifierClass;

template <class E>
constexpr std::uint8_t v(E e) {
  return static_cast<std::uint8_t>(e);
}
constexpr std::uint8_t v(int i) {
  return static_cast<std::uint8_t>(i);
}

struct Word {
  std::string_view spelling;
  std::string_view enumerator;
  Modifier first;  // the meaning modifier_words.hpp gives
};

#define WARPFORGE_PTX_WORD(id, word, cls, value) {word, #id, {Mod::id, C::cls, v(value)}},
constexpr Word kWords[] = {WARPFORGE_PTX_MODIFIER_WORDS(WARPFORGE_PTX_WORD)};
#undef WARPFORGE_PTX_WORD

constexpr std::size_t kFirstWord = kTypeCount;
constexpr std::size_t kWordCount = std::size(kWords);

// The second meanings of words that have two; a word's first meaning wins
// where both classes are allowed (meaning()).
constexpr Modifier kSecondMeanings[] = {
    {Mod::and_, C::atomic_op, v(AtomOp::and_)},
    {Mod::or_, C::atomic_op, v(AtomOp::or_)},
    {Mod::xor_, C::atomic_op, v(AtomOp::xor_)},
    {Mod::lo, C::mul_mode, v(MulMode::lo)},
    {Mod::hi, C::mul_mode, v(MulMode::hi)},
    {Mod::uni, C::sync, 0},    // bra.uni, call.uni, ret.uni
    {Mod::down, C::form, 0},   // tcgen05.shift.down
    {Mod::inc, C::form, 0},    // setmaxnreg.inc
    {Mod::dec, C::form, 0},    // setmaxnreg.dec
    {Mod::async, C::form, 0},  // cp.async
};

constexpr int kWgmmaKs[] = {8, 16, 32, 64, 256};
constexpr int kWgmmaNs = 32;  // N = 8 .. 256 in steps of 8
constexpr std::size_t kWgmmaShapes = kWgmmaNs * std::size(kWgmmaKs);

static_assert(static_cast<std::size_t>(Mod::first_wgmma_shape) == kFirstWord + kWordCount,
              "kWords lists modifier_words.hpp after the types");
static_assert(kFirstWord + kWordCount + kWgmmaShapes <= 0xFFFF);

// "m64n128k16" for each wgmma shape, in Mod's order.
const std::array<std::string, kWgmmaShapes>& wgmma_shape_names() {
  static const auto names = [] {
    std::array<std::string, kWgmmaShapes> out;
    for (std::size_t i = 0; i < kWgmmaShapes; ++i)
      out[i] = "m64n" + std::to_string(8 * (1 + i / std::size(kWgmmaKs))) + "k" +
               std::to_string(kWgmmaKs[i % std::size(kWgmmaKs)]);
    return out;
  }();
  return names;
}

}  // namespace

// modifier_words.hpp lists the comparisons in Cmp's order.
static_assert(static_cast<int>(Mod::nan) - static_cast<int>(Mod::eq) == static_cast<int>(Cmp::nan));
std::string_view name(Cmp c) {
  return name(mod(c));
}

Mod mod(AtomOp op) {
  static constexpr Mod kMods[] = {Mod::add,  Mod::min, Mod::max,  Mod::inc, Mod::dec,
                                  Mod::exch, Mod::cas, Mod::and_, Mod::or_, Mod::xor_};
  return kMods[static_cast<int>(op)];
}

std::string_view name(AtomOp op) {
  return name(mod(op));
}

std::string_view name(ModifierClass c) {
  static constexpr std::string_view kNames[] = {"type",
                                                "rounding",
                                                "integral rounding",
                                                "ftz",
                                                "saturation",
                                                "relu",
                                                "approximation",
                                                "noftz",
                                                "comparison",
                                                "boolean operation",
                                                "atomic operation",
                                                "state space",
                                                "vector",
                                                "matrix count",
                                                "transpose",
                                                "multiply mode",
                                                "shuffle mode",
                                                "vote mode",
                                                "shape",
                                                "layout",
                                                "cvta direction",
                                                "convergence",
                                                "cache hint",
                                                "memory order",
                                                "scope",
                                                "proxy",
                                                "form",
                                                "element type",
                                                "wgmma shape"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(ModifierClass::count));
  return kNames[static_cast<int>(c)];
}

std::vector<ModifierClass> ModifierClasses::list() const {
  std::vector<ModifierClass> out;
  for (int c = 0; c < static_cast<int>(ModifierClass::count); ++c)
    if (has(static_cast<ModifierClass>(c))) out.push_back(static_cast<ModifierClass>(c));
  return out;
}

std::optional<Mod> wgmma_shape(int n, int k) {
  const auto* ki = std::find(std::begin(kWgmmaKs), std::end(kWgmmaKs), k);
  if (ki == std::end(kWgmmaKs) || n < 8 || n > 8 * kWgmmaNs || n % 8 != 0) return std::nullopt;
  const std::size_t index =
      static_cast<std::size_t>(n / 8 - 1) * std::size(kWgmmaKs) + (ki - std::begin(kWgmmaKs));
  return static_cast<Mod>(static_cast<std::size_t>(Mod::first_wgmma_shape) + index);
}

std::optional<WgmmaShape> wgmma_shape_of(Mod m) {
  if (m < Mod::first_wgmma_shape) return std::nullopt;
  const std::size_t i =
      static_cast<std::size_t>(m) - static_cast<std::size_t>(Mod::first_wgmma_shape);
  if (i >= kWgmmaShapes) return std::nullopt;
  return WgmmaShape{static_cast<int>(8 * (1 + i / std::size(kWgmmaKs))),
                    kWgmmaKs[i % std::size(kWgmmaKs)]};
}

std::string_view name(Mod m) {
  const auto i = static_cast<std::size_t>(m);
  if (const auto t = type_of(m)) return name(*t);
  if (i < kFirstWord + kWordCount) return kWords[i - kFirstWord].spelling;
  return wgmma_shape_names().at(i - kFirstWord - kWordCount);
}

std::string_view enumerator(Mod m) {
  const auto i = static_cast<std::size_t>(m);
  if (i < kFirstWord || i >= kFirstWord + kWordCount) return {};
  return kWords[i - kFirstWord].enumerator;
}

std::optional<Mod> find_mod(std::string_view word) {
  static const auto table = [] {
    std::unordered_map<std::string_view, Mod> t;
    for (std::size_t i = 0; i < kFirstWord + kWordCount + kWgmmaShapes; ++i)
      t.emplace(name(static_cast<Mod>(i)), static_cast<Mod>(i));
    return t;
  }();
  const auto it = table.find(word);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::optional<Modifier> meaning(Mod m, ModifierClasses allowed) {
  if (const auto t = type_of(m)) {
    if (!allowed.has(C::type)) return std::nullopt;
    return Modifier{m, C::type, v(*t)};
  }
  if (wgmma_shape_of(m)) {
    if (!allowed.has(C::wgmma_shape)) return std::nullopt;
    return Modifier{m, C::wgmma_shape, 0};
  }
  const Modifier& first = kWords[static_cast<std::size_t>(m) - kFirstWord].first;
  if (allowed.has(first.cls)) return first;
  for (const Modifier& second : kSecondMeanings)
    if (second.mod == m && allowed.has(second.cls)) return second;
  return std::nullopt;
}

std::optional<Modifier> find_modifier(std::string_view word, ModifierClasses allowed) {
  const std::optional<Mod> m = find_mod(word);
  if (!m) return std::nullopt;
  return meaning(*m, allowed);
}

std::vector<Modifier> modifiers_of(ModifierClass c) {
  std::vector<Modifier> out;
  if (c == C::type) {
    for (int t = 0; t < kTypeCount; ++t)
      out.push_back({mod(static_cast<Type>(t)), C::type, static_cast<std::uint8_t>(t)});
    return out;
  }
  if (c == C::wgmma_shape) {
    for (std::size_t i = 0; i < kWgmmaShapes; ++i)
      out.push_back({static_cast<Mod>(static_cast<std::size_t>(Mod::first_wgmma_shape) + i), c});
    return out;
  }
  for (const Word& w : kWords)
    if (w.first.cls == c) out.push_back(w.first);
  for (const Modifier& m : kSecondMeanings)
    if (m.cls == c) out.push_back(m);
  return out;
}

}  // namespace warpforge::ptx
