// Tensor-core and asynchronous-copy synchronisation: the wgmma fence, commit
// and wait, cp.async and bulk-copy groups, fences (fence.sem.scope, proxy and
// mbarrier-init fences), mbarrier init / expect_tx / try_wait.parity, and
// ldmatrix / stmatrix.
#include <map>

#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

namespace {

// Operand-less instructions with a typed call, by full opcode.
struct Bare {
  const char* code;
  void (*run)(dsl::Kernel&);
};
const std::map<std::string, Bare> kBare = {
    {"wgmma.fence.sync.aligned", {"k.wgmma_fence();", [](dsl::Kernel& k) { k.wgmma_fence(); }}},
    {"wgmma.commit_group.sync.aligned",
     {"k.wgmma_commit_group();", [](dsl::Kernel& k) { k.wgmma_commit_group(); }}},
    {"cp.async.commit_group",
     {"k.cp_async_commit();", [](dsl::Kernel& k) { k.cp_async_commit(); }}},
    {"cp.async.wait_all",
     {"k.cp_async_wait_all();", [](dsl::Kernel& k) { k.cp_async_wait_all(); }}},
    {"cp.async.bulk.commit_group",
     {"k.bulk_commit_group();", [](dsl::Kernel& k) { k.bulk_commit_group(); }}},
    {"fence.proxy.async.shared::cta",
     {"k.fence_proxy_async_shared();", [](dsl::Kernel& k) { k.fence_proxy_async_shared(); }}},
    {"fence.proxy.async.shared::cluster",
     {"k.fence_proxy_async_shared_cluster();",
      [](dsl::Kernel& k) { k.fence_proxy_async_shared_cluster(); }}},
    {"fence.mbarrier_init.release.cluster",
     {"k.fence_mbarrier_init();", [](dsl::Kernel& k) { k.fence_mbarrier_init(); }}},
};

// Instructions whose one operand is a group count, by full opcode.
struct Counted {
  const char* call;
  void (*run)(dsl::Kernel&, int);
};
const std::map<std::string, Counted> kCounted = {
    {"wgmma.wait_group.sync.aligned",
     {"k.wgmma_wait_group(", [](dsl::Kernel& k, int n) { k.wgmma_wait_group(n); }}},
    {"cp.async.wait_group",
     {"k.cp_async_wait(", [](dsl::Kernel& k, int n) { k.cp_async_wait(n); }}},
    {"cp.async.bulk.wait_group",
     {"k.bulk_wait_group(", [](dsl::Kernel& k, int n) { k.bulk_wait_group(n); }}},
    {"cp.async.bulk.wait_group.read",
     {"k.bulk_wait_group_read(", [](dsl::Kernel& k, int n) { k.bulk_wait_group_read(n); }}},
};

// fence.{sc,acq_rel}.{cta,cluster,gpu,sys}: k.fence(FenceSem::sc, Scope::gpu).
std::optional<Code> fence(const ptx::Instruction& inst, OperandWriter& ops) {
  static const std::map<std::string, dsl::FenceSem> kSems = {{"sc", dsl::FenceSem::sc},
                                                             {"acq_rel", dsl::FenceSem::acq_rel}};
  static const std::map<std::string, dsl::Scope> kScopes = {{"cta", dsl::Scope::cta},
                                                            {"cluster", dsl::Scope::cluster},
                                                            {"gpu", dsl::Scope::gpu},
                                                            {"sys", dsl::Scope::sys}};
  if (inst.modifiers.size() != 2 || !inst.operands.empty()) return std::nullopt;
  auto sem = kSems.find(inst.modifiers[0]);
  auto scope = kScopes.find(inst.modifiers[1]);
  if (sem == kSems.end() || scope == kScopes.end()) return std::nullopt;
  return checked(inst, ops,
                 Code("k.fence(FenceSem::" + sem->first + ", Scope::" + scope->first + ");"),
                 [&](Sandbox& b) { b.k().fence(sem->second, scope->second); });
}

// mbarrier.init [bar], count; mbarrier.arrive.expect_tx _, [bar], bytes;
// mbarrier.try_wait.parity p, [bar], parity. Which spelling each call writes
// (.shared or .shared::cta) the sandbox decides.
std::optional<Code> mbarrier(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  if (m.empty()) return std::nullopt;
  if (m[0] == "init" && inst.operands.size() == 2) {
    const auto &bar = inst.operands[0], &count = inst.operands[1];
    auto a = ops.address(bar);
    auto c = src_code(count, ops, std::nullopt);
    if (!a || !c) return std::nullopt;
    return checked(inst, ops, Code("k.mbarrier_init(") + *a + Code(", ") + *c + Code(");"),
                   [&](Sandbox& b) { b.k().mbarrier_init(b.addr(bar), b.src(count)); });
  }
  if (m.size() > 1 && m[0] == "arrive" && m[1] == "expect_tx" && inst.operands.size() == 3 &&
      inst.operands[0].kind == ptx::Operand::Kind::sink) {
    const auto &bar = inst.operands[1], &bytes = inst.operands[2];
    auto a = ops.address(bar);
    auto c = src_code(bytes, ops, std::nullopt);
    if (!a || !c) return std::nullopt;
    return checked(inst, ops,
                   Code("k.mbarrier_arrive_expect_tx(") + *a + Code(", ") + *c + Code(");"),
                   [&](Sandbox& b) { b.k().mbarrier_arrive_expect_tx(b.addr(bar), b.src(bytes)); });
  }
  if (m.size() > 1 && m[0] == "try_wait" && m[1] == "parity" && inst.operands.size() == 3) {
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
  const bool load = inst.opcode == "ldmatrix";
  bool trans = false;
  for (const auto& m : inst.modifiers) trans = trans || m == "trans";
  const ptx::Operand &regs = inst.operands[load ? 0 : 1], &where = inst.operands[load ? 1 : 0];
  auto r = ops.regs_vector(regs);
  auto a = ops.address(where);
  if (!r || !a) return std::nullopt;
  Code args = load ? *r + Code(", ") + *a : *a + Code(", ") + *r;
  return checked(inst, ops, Code("k." + inst.opcode + "(") + args + Code(trans ? ", true);" : ");"),
                 [&](Sandbox& b) {
                   if (load)
                     b.k().ldmatrix(b.regs(regs), b.addr(where), trans);
                   else
                     b.k().stmatrix(b.addr(where), b.regs(regs), trans);
                 });
}

}  // namespace

std::optional<Code> tensor_async(const ptx::Instruction& inst, OperandWriter& ops) {
  const std::string op = inst.full_opcode();
  if (auto bare = kBare.find(op); bare != kBare.end() && inst.operands.empty())
    return checked(inst, ops, Code(bare->second.code),
                   [&](Sandbox& b) { bare->second.run(b.k()); });
  if (auto counted = kCounted.find(op); counted != kCounted.end() && inst.operands.size() == 1) {
    const ptx::Operand& n = inst.operands[0];
    auto c = ops.int_imm(n);
    if (!c) return std::nullopt;
    return checked(inst, ops, Code(counted->second.call) + *c + Code(");"), [&](Sandbox& b) {
      counted->second.run(b.k(), static_cast<int>(n.int_value()));
    });
  }
  if (inst.opcode == "fence") return fence(inst, ops);
  if (inst.opcode == "mbarrier") return mbarrier(inst, ops);
  if (inst.opcode == "ldmatrix" || inst.opcode == "stmatrix") return matrix(inst, ops);
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
