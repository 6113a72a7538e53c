#include "warpforge/dsl/isa/tcgen05.hpp"

#include <utility>
#include <vector>

#include "../type_names.hpp"

namespace warpforge::dsl {

namespace {
// The tcgen05 family exists on the architecture-specific Blackwell targets
// (PTX ISA 9.7.16, each instruction's "Target ISA notes": sm_100a, sm_101a,
// sm_103a); of warpforge's targets, sm_100a.
const Availability kBlackwell = Availability::arch_specific(100, 103);

const char* kind_name(Tcgen05Kind k) {
  switch (k) {
    case Tcgen05Kind::f16:
      return "f16";
    case Tcgen05Kind::tf32:
      return "tf32";
    case Tcgen05Kind::f8f6f4:
      return "f8f6f4";
    case Tcgen05Kind::mxf8f6f4:
      return "mxf8f6f4";
    case Tcgen05Kind::mxf4:
      return "mxf4";
    case Tcgen05Kind::mxf4nvf4:
      return "mxf4nvf4";
  }
  return "";
}

bool block_scaled(Tcgen05Kind k) {
  return k == Tcgen05Kind::mxf8f6f4 || k == Tcgen05Kind::mxf4 || k == Tcgen05Kind::mxf4nvf4;
}

const char* scale_vec_name(ScaleVec v) {
  switch (v) {
    case ScaleVec::x1:
      return "1X";
    case ScaleVec::x2:
      return "2X";
    case ScaleVec::x4:
      return "4X";
  }
  return "";
}

// The .scale_vec each block-scaled kind takes (PTX ISA 9.7.16, tcgen05.mma's
// kind/scale_vec table; ptxas refuses the other pairings).
bool scale_vec_allowed(Tcgen05Kind k, ScaleVec v) {
  switch (k) {
    case Tcgen05Kind::mxf8f6f4:
      return v == ScaleVec::x1;
    case Tcgen05Kind::mxf4:
      return v == ScaleVec::x2;
    case Tcgen05Kind::mxf4nvf4:
      return v == ScaleVec::x2 || v == ScaleVec::x4;
    default:
      return false;
  }
}

struct DataPathShape {
  const char* name;
  int regs_per_repeat;  // 32-bit registers per thread for .x1
  int max_num;          // the largest .num (PTX ISA 9.7.16, tcgen05.ld's .num table)
};

DataPathShape data_path(TmemShape s) {
  switch (s) {
    case TmemShape::lanes32_bits32:
      return {"32x32b", 1, 128};
    case TmemShape::lanes16_bits64:
      return {"16x64b", 1, 128};
    case TmemShape::lanes16_bits128:
      return {"16x128b", 2, 64};
    case TmemShape::lanes16_bits256:
      return {"16x256b", 4, 32};
  }
  return {"", 1, 1};
}

const char* copy_shape_name(TmemCopyShape s) {
  switch (s) {
    case TmemCopyShape::rows128_bits256:
      return "128x256b";
    case TmemCopyShape::rows4_bits256:
      return "4x256b";
    case TmemCopyShape::rows128_bits128:
      return "128x128b";
    case TmemCopyShape::rows64_bits128_warpx2_02_13:
      return "64x128b.warpx2::02_13";
    case TmemCopyShape::rows64_bits128_warpx2_01_23:
      return "64x128b.warpx2::01_23";
    case TmemCopyShape::rows32_bits128_warpx4:
      return "32x128b.warpx4";
  }
  return "";
}

bool is_power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}
}  // namespace

std::string Tcgen05Ops::group_suffix(std::string_view instruction, CtaGroup group) {
  require(instruction, kBlackwell);
  auto spell = [](CtaGroup g) {
    return std::string(g == CtaGroup::one ? ".cta_group::1" : ".cta_group::2");
  };
  if (cta_group_ && *cta_group_ != group)
    fail(instruction, "uses " + spell(group).substr(1) +
                          " after this kernel's tcgen05 instructions used " +
                          spell(*cta_group_).substr(1) +
                          "; every tcgen05 instruction of a kernel names the same .cta_group (PTX "
                          "ISA 9.7.16, tcgen05.alloc)");
  cta_group_ = group;
  return spell(group);
}

void Tcgen05Ops::check_tmem_address(std::string_view instruction, const Reg& r,
                                    const char* role) const {
  // A tensor-memory address is 32 bits: lane << 16 | column.
  expect_type(instruction, r, Type::b32, role);
}

void Tcgen05Ops::check_column_count(std::string_view instruction, const Src& ncols) const {
  expect_type(instruction, ncols, Type::u32, "column count");
  if (ncols.is_reg()) return;  // a register's value is checked by the simulator at run time
  const long long n = std::stoll(ncols.imm().text, nullptr, 0);
  if (n < 32 || n > 512 || (n & (n - 1)) != 0)
    fail(instruction, "column count " + ncols.imm().text +
                          "; a power of two in 32..512 (PTX ISA 9.7.16.1.2)");
}

void Tcgen05Ops::tcgen05_alloc(CtaGroup group, const Addr& dst, const Src& ncols) {
  const std::string opcode =
      "tcgen05.alloc" + group_suffix("tcgen05.alloc", group) + ".sync.aligned.shared::cta.b32";
  check_column_count(opcode, ncols);
  emit(opcode, {operand_of(dst), operand_of(ncols)});
}

void Tcgen05Ops::tcgen05_dealloc(CtaGroup group, const Reg& taddr, const Src& ncols) {
  const std::string opcode =
      "tcgen05.dealloc" + group_suffix("tcgen05.dealloc", group) + ".sync.aligned.b32";
  check_tmem_address(opcode, taddr, "tensor-memory address");
  check_column_count(opcode, ncols);
  emit(opcode, {operand_of(taddr), operand_of(ncols)});
}

void Tcgen05Ops::tcgen05_relinquish_alloc_permit(CtaGroup group) {
  const std::string opcode = "tcgen05.relinquish_alloc_permit" +
                             group_suffix("tcgen05.relinquish_alloc_permit", group) +
                             ".sync.aligned";
  emit(opcode, {});
}

std::string Tcgen05Ops::mma_opcode(CtaGroup group, Tcgen05Kind kind,
                                   std::optional<ScaleVec> scale_vec, std::string_view form) {
  const std::string name = "tcgen05.mma" + std::string(form);
  std::string opcode = name + group_suffix(name, group) + ".kind::" + kind_name(kind);
  if (!scale_vec) {
    if (block_scaled(kind))
      fail(opcode, std::string("kind::") + kind_name(kind) +
                       " is block-scaled; use tcgen05_mma_block_scale (kinds f16, tf32 and f8f6f4 "
                       "take no scales)");
    return opcode;
  }
  opcode += std::string(".block_scale.scale_vec::") + scale_vec_name(*scale_vec);
  if (!block_scaled(kind))
    fail(opcode,
         std::string("kind::") + kind_name(kind) +
             " takes no scale factors; the block-scaled kinds are mxf8f6f4, mxf4 and mxf4nvf4");
  if (!scale_vec_allowed(kind, *scale_vec))
    fail(opcode, std::string("scale_vec::") + scale_vec_name(*scale_vec) +
                     " with kind::" + kind_name(kind) +
                     "; accepted: mxf8f6f4 with 1X, mxf4 with 2X, mxf4nvf4 with 2X or 4X");
  return opcode;
}

void Tcgen05Ops::emit_mma(const std::string& opcode, const Reg& d_tmem, ptx::Operand a,
                          const Reg& b_desc, const Reg& idesc, const Reg* scale_a,
                          const Reg* scale_b, const std::variant<bool, PredUse>& enable_input_d) {
  check_tmem_address(opcode, d_tmem, "D address");
  expect_type(opcode, b_desc, Type::b64, "B descriptor");
  expect_type(opcode, idesc, Type::b32, "instruction descriptor");
  std::vector<ptx::Operand> ops = {operand_of(at(d_tmem)), std::move(a), operand_of(b_desc),
                                   operand_of(idesc)};
  if (scale_a) {
    check_tmem_address(opcode, *scale_a, "A scale-factor address");
    check_tmem_address(opcode, *scale_b, "B scale-factor address");
    ops.push_back(operand_of(at(*scale_a)));
    ops.push_back(operand_of(at(*scale_b)));
  }
  ops.push_back(std::holds_alternative<bool>(enable_input_d)
                    ? ptx::Operand::imm(std::get<bool>(enable_input_d) ? 1 : 0)
                    : operand_of(std::get<PredUse>(enable_input_d)));
  emit(opcode, std::move(ops));
}

void Tcgen05Ops::tcgen05_mma(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc,
                             const Reg& b_desc, const Reg& idesc,
                             std::variant<bool, PredUse> enable_input_d) {
  const std::string opcode = mma_opcode(group, kind, std::nullopt);
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  emit_mma(opcode, d_tmem, operand_of(a_desc), b_desc, idesc, nullptr, nullptr, enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_ws(Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc,
                                const Reg& b_desc, const Reg& idesc,
                                std::variant<bool, PredUse> enable_input_d,
                                std::optional<Collector> collector) {
  // The weight-stationary MMA has no .cta_group::2 form (PTX ISA 9.7.16,
  // tcgen05.mma.ws), and no block-scaled kinds.
  if (block_scaled(kind))
    fail("tcgen05.mma.ws", std::string("kind::") + kind_name(kind) +
                               "; the weight-stationary MMA takes kinds f16, tf32 and f8f6f4");
  std::string opcode = mma_opcode(CtaGroup::one, kind, std::nullopt, ".ws");
  if (collector) {
    static constexpr const char* kUsage[] = {"fill", "use", "lastuse", "discard"};
    if (collector->buffer < 0 || collector->buffer > 3)
      fail(opcode, "collector buffer b" + std::to_string(collector->buffer) +
                       "; the weight-stationary MMA has buffers b0..b3");
    opcode += ".collector::b" + std::to_string(collector->buffer) +
              "::" + kUsage[static_cast<int>(collector->usage)];
  }
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  emit_mma(opcode, d_tmem, operand_of(a_desc), b_desc, idesc, nullptr, nullptr, enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_sp(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem,
                                const Reg& a_desc, const Reg& b_desc, const Reg& sp_meta_tmem,
                                const Reg& idesc, std::variant<bool, PredUse> enable_input_d) {
  const std::string opcode = mma_opcode(group, kind, std::nullopt, ".sp");
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  check_tmem_address(opcode, d_tmem, "D address");
  check_tmem_address(opcode, sp_meta_tmem, "sparsity metadata address");
  expect_type(opcode, b_desc, Type::b64, "B descriptor");
  expect_type(opcode, idesc, Type::b32, "instruction descriptor");
  // [d], a, b, [sp_meta], idesc, enable_input_d: the metadata comes before the descriptor.
  emit(opcode, {operand_of(at(d_tmem)), operand_of(a_desc), operand_of(b_desc),
                operand_of(at(sp_meta_tmem)), operand_of(idesc),
                std::holds_alternative<bool>(enable_input_d)
                    ? ptx::Operand::imm(std::get<bool>(enable_input_d) ? 1 : 0)
                    : operand_of(std::get<PredUse>(enable_input_d))});
}

void Tcgen05Ops::tcgen05_mma_a_tmem(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem,
                                    const Reg& a_tmem, const Reg& b_desc, const Reg& idesc,
                                    std::variant<bool, PredUse> enable_input_d) {
  const std::string opcode = mma_opcode(group, kind, std::nullopt);
  check_tmem_address(opcode, a_tmem, "A address");
  emit_mma(opcode, d_tmem, operand_of(at(a_tmem)), b_desc, idesc, nullptr, nullptr, enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_block_scale(CtaGroup group, Tcgen05Kind kind, ScaleVec scale_vec,
                                         const Reg& d_tmem, const Reg& a_desc, const Reg& b_desc,
                                         const Reg& idesc, const Reg& scale_a_tmem,
                                         const Reg& scale_b_tmem,
                                         std::variant<bool, PredUse> enable_input_d) {
  const std::string opcode = mma_opcode(group, kind, scale_vec);
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  emit_mma(opcode, d_tmem, operand_of(a_desc), b_desc, idesc, &scale_a_tmem, &scale_b_tmem,
           enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_block_scale_a_tmem(CtaGroup group, Tcgen05Kind kind,
                                                ScaleVec scale_vec, const Reg& d_tmem,
                                                const Reg& a_tmem, const Reg& b_desc,
                                                const Reg& idesc, const Reg& scale_a_tmem,
                                                const Reg& scale_b_tmem,
                                                std::variant<bool, PredUse> enable_input_d) {
  const std::string opcode = mma_opcode(group, kind, scale_vec);
  check_tmem_address(opcode, a_tmem, "A address");
  emit_mma(opcode, d_tmem, operand_of(at(a_tmem)), b_desc, idesc, &scale_a_tmem, &scale_b_tmem,
           enable_input_d);
}

void Tcgen05Ops::tcgen05_cp(CtaGroup group, TmemCopyShape shape, const Reg& taddr,
                            const Reg& s_desc) {
  const std::string opcode =
      "tcgen05.cp" + group_suffix("tcgen05.cp", group) + "." + copy_shape_name(shape);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  expect_type(opcode, s_desc, Type::b64, "shared-memory descriptor");
  emit(opcode, {operand_of(at(taddr)), operand_of(s_desc)});
}

void Tcgen05Ops::tcgen05_shift_down(CtaGroup group, const Reg& taddr) {
  const std::string opcode = "tcgen05.shift" + group_suffix("tcgen05.shift", group) + ".down";
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr))});
}

std::string Tcgen05Ops::data_path_opcode(const char* op, const char* shape, int regs_per_repeat,
                                         int max_num, const Regs& data, TmemPacking packing) {
  const std::string base = std::string("tcgen05.") + op + ".sync.aligned." + shape;
  require(base, kBlackwell);
  const int count = static_cast<int>(data.size());
  const int num = count / regs_per_repeat;
  if (count % regs_per_repeat != 0 || !is_power_of_two(num) || num > max_num)
    fail(base, std::to_string(count) + " registers; ." + shape + " moves " +
                   std::to_string(regs_per_repeat) +
                   " register(s) per thread times .num, a power of two up to " +
                   std::to_string(max_num) + " (PTX ISA 9.7.16, tcgen05.ld's .num table)");
  const char* pack = std::string_view(op) == "ld" ? ".pack::16b" : ".unpack::16b";
  const std::string opcode =
      base + ".x" + std::to_string(num) + (packing == TmemPacking::pack_16b ? pack : "") + ".b32";
  for (const Reg& r : data)
    if (ptx::bits(r.type()) != 32)
      fail(opcode, "register " + r.name() + " is " + detail::type_name(r.type()) +
                       "; tensor-memory cells are 32 bits (b32, u32, s32 or f32 registers)");
  return opcode;
}

void Tcgen05Ops::tcgen05_ld(TmemShape shape, const Regs& dst, const Reg& taddr,
                            TmemPacking packing) {
  const DataPathShape s = data_path(shape);
  const std::string opcode =
      data_path_opcode("ld", s.name, s.regs_per_repeat, s.max_num, dst, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(dst), operand_of(at(taddr))});
}

void Tcgen05Ops::tcgen05_st(TmemShape shape, const Reg& taddr, const Regs& src,
                            TmemPacking packing) {
  const DataPathShape s = data_path(shape);
  const std::string opcode =
      data_path_opcode("st", s.name, s.regs_per_repeat, s.max_num, src, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr)), operand_of(src)});
}

// 16x32bx2: one register per repetition, .num up to 128 (as 16x64b).
void Tcgen05Ops::tcgen05_ld_16x32bx2(const Regs& dst, const Reg& taddr, std::uint32_t half_split,
                                     TmemPacking packing) {
  const std::string opcode = data_path_opcode("ld", "16x32bx2", 1, 128, dst, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(dst), operand_of(at(taddr)), ptx::Operand::imm(half_split)});
}

void Tcgen05Ops::tcgen05_st_16x32bx2(const Reg& taddr, std::uint32_t half_split, const Regs& src,
                                     TmemPacking packing) {
  const std::string opcode = data_path_opcode("st", "16x32bx2", 1, 128, src, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr)), ptx::Operand::imm(half_split), operand_of(src)});
}

void Tcgen05Ops::tcgen05_wait_ld() {
  require("tcgen05.wait::ld.sync.aligned", kBlackwell);
  emit("tcgen05.wait::ld.sync.aligned", {});
}

void Tcgen05Ops::tcgen05_wait_st() {
  require("tcgen05.wait::st.sync.aligned", kBlackwell);
  emit("tcgen05.wait::st.sync.aligned", {});
}

void Tcgen05Ops::tcgen05_commit(CtaGroup group, const Reg& bar) {
  const std::string opcode = "tcgen05.commit" + group_suffix("tcgen05.commit", group) +
                             ".mbarrier::arrive::one.shared::cluster.b64";
  expect_type(opcode, bar, Type::u32, "mbarrier address");
  emit(opcode, {operand_of(at(bar))});
}

void Tcgen05Ops::tcgen05_commit_multicast(CtaGroup group, const Reg& bar, const Src& cta_mask) {
  const std::string opcode = "tcgen05.commit" + group_suffix("tcgen05.commit", group) +
                             ".mbarrier::arrive::one.shared::cluster.multicast::cluster.b64";
  expect_type(opcode, bar, Type::u32, "mbarrier address");
  // ptxas 12.8 refuses an immediate ctaMask ("Arguments mismatch").
  if (!cta_mask.is_reg())
    fail(opcode, "CTA mask " + cta_mask.imm().text +
                     " is an immediate; ptxas takes it in a 16-bit register (mov.u16 it first)");
  expect_type(opcode, cta_mask, Type::u16, "CTA mask");
  emit(opcode, {operand_of(at(bar)), operand_of(cta_mask)});
}

void Tcgen05Ops::tcgen05_fence_before_thread_sync() {
  require("tcgen05.fence::before_thread_sync", kBlackwell);
  emit("tcgen05.fence::before_thread_sync", {});
}

void Tcgen05Ops::tcgen05_fence_after_thread_sync() {
  require("tcgen05.fence::after_thread_sync", kBlackwell);
  emit("tcgen05.fence::after_thread_sync", {});
}

}  // namespace warpforge::dsl
