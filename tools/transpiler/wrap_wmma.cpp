// Warp-level matrix fragments: wmma.load.{a,b,c}, wmma.store.d and wmma.mma
// (PTX ISA 9.7.14.4), onto k.wmma_load / k.wmma_store / k.wmma_mma.
#include <map>
#include <vector>

#include "transpiler/cpp_names.hpp"
#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

namespace {

using M = ptx::Mod;

const std::map<M, dsl::WmmaShape> kShapes = {{M::m16n16k16, dsl::WmmaShape::m16n16k16},
                                             {M::m32n8k16, dsl::WmmaShape::m32n8k16},
                                             {M::m8n32k16, dsl::WmmaShape::m8n32k16},
                                             {M::m16n16k8, dsl::WmmaShape::m16n16k8}};
const std::map<M, dsl::WmmaLayout> kLayouts = {{M::row, dsl::WmmaLayout::row},
                                               {M::col, dsl::WmmaLayout::col}};
const std::map<M, dsl::WmmaMatrix> kMatrices = {
    {M::a, dsl::WmmaMatrix::a}, {M::b, dsl::WmmaMatrix::b}, {M::c, dsl::WmmaMatrix::c}};

// The C++ spelling of a word, which the DSL's enumerators share (WmmaShape::m16n16k16).
std::string word(M m) {
  return std::string(ptx::name(m));
}

// wmma.load.{a,b,c}.sync.aligned.layout.shape[.space].type {frag}, [a], stride and
// wmma.store.d.sync.aligned.layout.shape[.space].type [a], {frag}, stride.
std::optional<Code> load_or_store(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  const bool load = m[0] == M::load;
  if ((m.size() != 7 && m.size() != 8) || m[2] != M::sync || m[3] != M::aligned ||
      inst.operands.size() != 3)
    return std::nullopt;
  auto matrix = kMatrices.find(m[1]);
  auto layout = kLayouts.find(m[4]);
  auto shape = kShapes.find(m[5]);
  auto type = type_modifier(inst);
  std::pair<ptx::Space, std::string> space{ptx::Space::generic, "Space::generic"};
  if (m.size() == 8) {
    auto s = kSpaces.find(m[6]);
    if (s == kSpaces.end()) return std::nullopt;
    space = s->second;
  }
  if ((load ? matrix == kMatrices.end() : m[1] != M::d) || layout == kLayouts.end() ||
      shape == kShapes.end() || !type)
    return std::nullopt;
  const ptx::Operand &frag = inst.operands[load ? 0 : 1], &where = inst.operands[load ? 1 : 0],
                     &stride = inst.operands[2];
  auto f = ops.regs_vector(frag);
  auto a = ops.address(where);
  auto s = src_code(stride, ops, std::nullopt);
  if (!f || !a || !s) return std::nullopt;
  const std::string head = "WmmaShape::" + word(m[5]) + ", WmmaLayout::" + word(m[4]) + ", " +
                           space.second + ", " + dsl_type(*type) + ", ";
  if (load)
    return checked(inst, ops,
                   Code("k.wmma_load(WmmaMatrix::" + word(m[1]) + ", " + head) + *f + Code(", ") + *a +
                       Code(", ") + *s + Code(");"),
                   [&](Sandbox& b) {
                     b.k().wmma_load(matrix->second, shape->second, layout->second, space.first,
                                     *type, b.regs(frag), b.addr(where), b.src(stride));
                   });
  return checked(inst, ops,
                 Code("k.wmma_store(" + head) + *a + Code(", ") + *f + Code(", ") + *s + Code(");"),
                 [&](Sandbox& b) {
                   b.k().wmma_store(shape->second, layout->second, space.first, *type,
                                    b.addr(where), b.regs(frag), b.src(stride));
                 });
}

// wmma.mma.sync.aligned.alayout.blayout.shape.dtype[.atype.btype].ctype d, a, b, c:
// without the input types the inputs are f16.
std::optional<Code> multiply(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  if ((m.size() != 8 && m.size() != 10) || m[1] != M::sync || m[2] != M::aligned ||
      inst.operands.size() != 4)
    return std::nullopt;
  auto a_layout = kLayouts.find(m[3]), b_layout = kLayouts.find(m[4]);
  auto shape = kShapes.find(m[5]);
  auto d_type = ptx::type_of(m[6]), c_type = type_modifier(inst);
  auto input = m.size() == 10 ? ptx::type_of(m[7]) : std::optional<ptx::Type>(ptx::Type::f16);
  if (a_layout == kLayouts.end() || b_layout == kLayouts.end() || shape == kShapes.end() ||
      !d_type || !c_type || !input || (m.size() == 10 && m[7] != m[8]))
    return std::nullopt;
  std::vector<Code> fragments;
  for (const auto& op : inst.operands) {
    auto v = ops.regs_vector(op);
    if (!v) return std::nullopt;
    fragments.push_back(*v);
  }
  return checked(
      inst, ops,
      Code("k.wmma_mma(WmmaShape::" + word(m[5]) + ", WmmaLayout::" + word(m[3]) +
           ", WmmaLayout::" + word(m[4]) +
           ", " + dsl_type(*input) + ", " + dsl_type(*d_type) + ", " + dsl_type(*c_type) + ", ") +
          join(fragments) + Code(");"),
      [&](Sandbox& b) {
        const auto& o = inst.operands;
        b.k().wmma_mma(shape->second, a_layout->second, b_layout->second, *input, *d_type, *c_type,
                       b.regs(o[0]), b.regs(o[1]), b.regs(o[2]), b.regs(o[3]));
      });
}

}  // namespace

std::optional<Code> wmma(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.modifiers.empty()) return std::nullopt;
  if (inst.modifiers[0] == M::load || inst.modifiers[0] == M::store)
    return load_or_store(inst, ops);
  if (inst.modifiers[0] == M::mma) return multiply(inst, ops);
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
