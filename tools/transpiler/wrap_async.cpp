// Tensor-core and asynchronous-copy synchronisation: the wgmma fence, commit
// and wait, cp.async and bulk-copy groups, fences (fence.sem.scope, proxy and
// mbarrier-init fences), mbarrier init / expect_tx / try_wait.parity, and
// ldmatrix / stmatrix, cp.async, mma.sync and wgmma.mma_async.
#include <map>
#include <variant>
#include <vector>

#include "transpiler/cpp_names.hpp"
#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

namespace {

using M = ptx::Mod;
using O = ptx::Opcode;

// Operand-less instructions with a typed call, by opcode and modifiers.
struct Bare {
  O opcode;
  std::vector<M> modifiers;
  const char* code;
  void (*run)(dsl::Kernel&);
};
const Bare kBare[] = {
    {O::wgmma, {M::fence, M::sync, M::aligned}, "k.wgmma_fence();",
     [](dsl::Kernel& k) { k.wgmma_fence(); }},
    {O::wgmma, {M::commit_group, M::sync, M::aligned}, "k.wgmma_commit_group();",
     [](dsl::Kernel& k) { k.wgmma_commit_group(); }},
    {O::cp, {M::async, M::commit_group}, "k.cp_async_commit();",
     [](dsl::Kernel& k) { k.cp_async_commit(); }},
    {O::cp, {M::async, M::wait_all}, "k.cp_async_wait_all();",
     [](dsl::Kernel& k) { k.cp_async_wait_all(); }},
    {O::cp, {M::async, M::bulk, M::commit_group}, "k.bulk_commit_group();",
     [](dsl::Kernel& k) { k.bulk_commit_group(); }},
    {O::fence, {M::proxy, M::async, M::shared_cta}, "k.fence_proxy_async_shared();",
     [](dsl::Kernel& k) { k.fence_proxy_async_shared(); }},
    {O::fence, {M::proxy, M::async, M::shared_cluster}, "k.fence_proxy_async_shared_cluster();",
     [](dsl::Kernel& k) { k.fence_proxy_async_shared_cluster(); }},
    {O::fence, {M::mbarrier_init, M::release, M::cluster}, "k.fence_mbarrier_init();",
     [](dsl::Kernel& k) { k.fence_mbarrier_init(); }},
};

// Instructions whose one operand is a group count, by opcode and modifiers.
struct Counted {
  O opcode;
  std::vector<M> modifiers;
  const char* call;
  void (*run)(dsl::Kernel&, int);
};
const Counted kCounted[] = {
    {O::wgmma, {M::wait_group, M::sync, M::aligned}, "k.wgmma_wait_group(",
     [](dsl::Kernel& k, int n) { k.wgmma_wait_group(n); }},
    {O::cp, {M::async, M::wait_group}, "k.cp_async_wait(",
     [](dsl::Kernel& k, int n) { k.cp_async_wait(n); }},
    {O::cp, {M::async, M::bulk, M::wait_group}, "k.bulk_wait_group(",
     [](dsl::Kernel& k, int n) { k.bulk_wait_group(n); }},
    {O::cp, {M::async, M::bulk, M::wait_group, M::read}, "k.bulk_wait_group_read(",
     [](dsl::Kernel& k, int n) { k.bulk_wait_group_read(n); }},
};

template <class Entry, std::size_t N>
const Entry* find(const Entry (&table)[N], const ptx::Instruction& inst) {
  for (const Entry& e : table)
    if (e.opcode == inst.opcode && e.modifiers == inst.modifiers) return &e;
  return nullptr;
}

// fence.{sc,acq_rel}.{cta,cluster,gpu,sys}: k.fence(FenceSem::sc, Scope::gpu).
std::optional<Code> fence(const ptx::Instruction& inst, OperandWriter& ops) {
  static const std::map<M, dsl::FenceSem> kSems = {{M::sc, dsl::FenceSem::sc},
                                                   {M::acq_rel, dsl::FenceSem::acq_rel}};
  static const std::map<M, dsl::Scope> kScopes = {{M::cta, dsl::Scope::cta},
                                                  {M::cluster, dsl::Scope::cluster},
                                                  {M::gpu, dsl::Scope::gpu},
                                                  {M::sys, dsl::Scope::sys}};
  if (inst.modifiers.size() != 2 || !inst.operands.empty()) return std::nullopt;
  auto sem = kSems.find(inst.modifiers[0]);
  auto scope = kScopes.find(inst.modifiers[1]);
  if (sem == kSems.end() || scope == kScopes.end()) return std::nullopt;
  return checked(inst, ops,
                 Code("k.fence(FenceSem::" + std::string(ptx::name(sem->first)) + ", Scope::" +
                      std::string(ptx::name(scope->first)) + ");"),
                 [&](Sandbox& b) { b.k().fence(sem->second, scope->second); });
}

// mbarrier.init [bar], count; mbarrier.arrive.expect_tx _, [bar], bytes;
// mbarrier.try_wait.parity p, [bar], parity. Which spelling each call writes
// (.shared or .shared::cta) the sandbox decides.
std::optional<Code> mbarrier(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  if (m.empty()) return std::nullopt;
  if (m[0] == M::init && inst.operands.size() == 2) {
    const auto &bar = inst.operands[0], &count = inst.operands[1];
    auto a = ops.address(bar);
    auto c = src_code(count, ops, std::nullopt);
    if (!a || !c) return std::nullopt;
    return checked(inst, ops, Code("k.mbarrier_init(") + *a + Code(", ") + *c + Code(");"),
                   [&](Sandbox& b) { b.k().mbarrier_init(b.addr(bar), b.src(count)); });
  }
  if (m.size() > 1 && m[0] == M::arrive && m[1] == M::expect_tx && inst.operands.size() == 3 &&
      inst.operands[0].kind == ptx::Operand::Kind::sink) {
    const auto &bar = inst.operands[1], &bytes = inst.operands[2];
    auto a = ops.address(bar);
    auto c = src_code(bytes, ops, std::nullopt);
    if (!a || !c) return std::nullopt;
    return checked(inst, ops,
                   Code("k.mbarrier_arrive_expect_tx(") + *a + Code(", ") + *c + Code(");"),
                   [&](Sandbox& b) { b.k().mbarrier_arrive_expect_tx(b.addr(bar), b.src(bytes)); });
  }
  if (m.size() > 1 && m[0] == M::try_wait && m[1] == M::parity && inst.operands.size() == 3) {
    const auto &ready = inst.operands[0], &bar = inst.operands[1], &parity = inst.operands[2];
    auto p = ops.pred_use(ready);
    auto a = ops.address(bar);
    auto c = src_code(parity, ops, std::nullopt);
    if (!p || ready.negated || !a || !c) return std::nullopt;
    return checked(
        inst, ops,
        Code("k.mbarrier_try_wait_parity(") + *p + Code(", ") + *a + Code(", ") + *c + Code(");"),
        [&](Sandbox& b) {
          b.k().mbarrier_try_wait_parity(b.pred(ready).pred, b.addr(bar), b.src(parity));
        });
  }
  return std::nullopt;
}

// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 {d}, [a] and stmatrix ... [a], {s}.
std::optional<Code> matrix(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.operands.size() != 2) return std::nullopt;
  const bool load = inst.opcode == O::ldmatrix;
  const bool trans = inst.has(M::trans);
  const ptx::Operand &regs = inst.operands[load ? 0 : 1], &where = inst.operands[load ? 1 : 0];
  auto r = ops.regs_vector(regs);
  auto a = ops.address(where);
  if (!r || !a) return std::nullopt;
  Code args = load ? *r + Code(", ") + *a : *a + Code(", ") + *r;
  return checked(inst, ops,
                 Code("k." + opcode_name(inst) + "(") + args + Code(trans ? ", true);" : ");"),
                 [&](Sandbox& b) {
                   if (load)
                     b.k().ldmatrix(b.regs(regs), b.addr(where), trans);
                   else
                     b.k().stmatrix(b.addr(where), b.regs(regs), trans);
                 });
}

// cp.async.{ca,cg}.shared.global [d], [a], bytes[, src_bytes].
std::optional<Code> cp_async(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  if (m.size() != 4 || m[0] != M::async || (m[1] != M::ca && m[1] != M::cg) || m[2] != M::shared ||
      m[3] != M::global || inst.operands.size() < 3 || inst.operands.size() > 4)
    return std::nullopt;
  const dsl::CpAsyncCache cache = m[1] == M::ca ? dsl::CpAsyncCache::ca : dsl::CpAsyncCache::cg;
  const auto &dst = inst.operands[0], &src = inst.operands[1], &bytes = inst.operands[2];
  auto d = ops.address(dst), a = ops.address(src);
  auto n = ops.int_imm(bytes);
  std::vector<ptx::Operand> rest(inst.operands.begin() + 3, inst.operands.end());
  auto tail = sources(rest, ops);
  if (!d || !a || !n || !tail) return std::nullopt;
  return checked(inst, ops,
                 Code("k.cp_async(CpAsyncCache::" + std::string(ptx::name(m[1])) + ", ") + *n +
                     Code(", ") + *d +
                     Code(", ") + *a + *tail + Code(");"),
                 [&](Sandbox& b) {
                   std::optional<dsl::Src> src_bytes;
                   if (!rest.empty()) src_bytes = b.src(rest[0]);
                   b.k().cp_async(cache, static_cast<int>(bytes.int_value()), b.addr(dst),
                                  b.addr(src), src_bytes);
                 });
}

// mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c> {d}, {a}, {b}, {c}: the
// wrapper takes one accumulator type for d and c.
std::optional<Code> mma(const ptx::Instruction& inst, OperandWriter& ops) {
  static const std::map<M, dsl::MmaShape> kShapes = {{M::m16n8k8, dsl::MmaShape::m16n8k8},
                                                      {M::m16n8k16, dsl::MmaShape::m16n8k16},
                                                      {M::m16n8k32, dsl::MmaShape::m16n8k32}};
  const auto& m = inst.modifiers;
  if (m.size() != 9 || m[0] != M::sync || m[1] != M::aligned || inst.operands.size() != 4)
    return std::nullopt;
  auto shape = kShapes.find(m[2]);
  auto acc = ptx::type_of(m[5]), at = ptx::type_of(m[6]), bt = ptx::type_of(m[7]);
  if (shape == kShapes.end() || !acc || !at || !bt) return std::nullopt;
  std::vector<Code> vectors;
  for (const auto& op : inst.operands) {
    auto v = ops.regs_vector(op);
    if (!v) return std::nullopt;
    vectors.push_back(*v);
  }
  return checked(inst, ops,
                 Code("k.mma_sync(MmaShape::" + std::string(ptx::name(m[2])) + ", " + dsl_type(*at) + ", " + dsl_type(*bt) +
                      ", " + dsl_type(*acc) + ", ") +
                     join(vectors) + Code(");"),
                 [&](Sandbox& b) {
                   const auto& o = inst.operands;
                   b.k().mma_sync(shape->second, *at, *bt, *acc, b.regs(o[0]), b.regs(o[1]),
                                  b.regs(o[2]), b.regs(o[3]));
                 });
}

// wgmma.mma_async.sync.aligned.<shape>.f32.<a>.<b> {d}, desc_a, desc_b,
// scale_d, 1, 1[, tnsp_a, tnsp_b]: A and B from shared memory (descriptors).
std::optional<Code> wgmma(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  const auto& o = inst.operands;
  if (m.size() != 7 || m[0] != M::mma_async || m[1] != M::sync || m[2] != M::aligned ||
      (o.size() != 6 && o.size() != 8))
    return std::nullopt;
  auto at = ptx::type_of(m[5]), bt = ptx::type_of(m[6]);
  auto d = ops.regs_vector(o[0]);
  auto desc_a = ops.reg(o[1]), desc_b = ops.reg(o[2]);
  if (!at || !bt || !d || !desc_a || !desc_b) return std::nullopt;
  // scale_d: an immediate 0/1 or a predicate.
  const bool scale_imm = o[3].kind == ptx::Operand::Kind::imm_int;
  auto scale = scale_imm ? std::optional<Code>(Code(o[3].int_value() ? "true" : "false"))
                         : ops.pred_use(o[3]);
  if (!scale) return std::nullopt;
  // The transpose immediates: 0 is K-major, 1 is MN-major (PTX ISA 9.7.15.5.1).
  auto major = [&](std::size_t i) {
    return o.size() == 8 && o[i].int_value() == 1 ? dsl::WgmmaMajor::mn : dsl::WgmmaMajor::k;
  };
  auto major_code = [](dsl::WgmmaMajor w) {
    return std::string(w == dsl::WgmmaMajor::mn ? "WgmmaMajor::mn" : "WgmmaMajor::k");
  };
  if (o.size() == 8 &&
      (o[6].kind != ptx::Operand::Kind::imm_int || o[7].kind != ptx::Operand::Kind::imm_int))
    return std::nullopt;
  const dsl::WgmmaMajor a_major = major(6), b_major = major(7);
  return checked(inst, ops,
                 Code("k.wgmma_mma_async(" + dsl_type(*at) + ", " + dsl_type(*bt) + ", ") + *d +
                     Code(", ") + *desc_a + Code(", ") + *desc_b + Code(", ") + *scale +
                     Code(", " + major_code(a_major) + ", " + major_code(b_major) + ");"),
                 [&](Sandbox& b) {
                   std::variant<bool, dsl::PredUse> scale_d = scale_imm && o[3].int_value() != 0;
                   if (!scale_imm) scale_d = b.pred(o[3]);
                   b.k().wgmma_mma_async(*at, *bt, b.regs(o[0]), b.reg(o[1]), b.reg(o[2]), scale_d,
                                         a_major, b_major);
                 });
}

}  // namespace

std::optional<Code> tensor_async(const ptx::Instruction& inst, OperandWriter& ops) {
  if (const Bare* bare = find(kBare, inst); bare && inst.operands.empty())
    return checked(inst, ops, Code(bare->code), [&](Sandbox& b) { bare->run(b.k()); });
  if (const Counted* counted = find(kCounted, inst); counted && inst.operands.size() == 1) {
    const ptx::Operand& n = inst.operands[0];
    auto c = ops.int_imm(n);
    if (!c) return std::nullopt;
    return checked(inst, ops, Code(counted->call) + *c + Code(");"), [&](Sandbox& b) {
      counted->run(b.k(), static_cast<int>(n.int_value()));
    });
  }
  switch (inst.opcode) {
    case O::fence:
      return fence(inst, ops);
    case O::cp:
      return cp_async(inst, ops);
    case O::mma:
      return mma(inst, ops);
    case O::wgmma:
      return wgmma(inst, ops);
    case O::mbarrier:
      return mbarrier(inst, ops);
    case O::ldmatrix:
    case O::stmatrix:
      return matrix(inst, ops);
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
