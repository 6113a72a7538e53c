#include "warpforge/dsl/isa/tcgen05.hpp"

#include <bit>
#include <utility>
#include <vector>

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;

namespace {
// The tcgen05 family exists on the architecture-specific Blackwell targets
// (PTX ISA 9.7.16, each instruction's "Target ISA notes": sm_100a, sm_101a,
// sm_103a); of warpforge's targets, sm_100a.
const Availability kBlackwell = Availability::arch_specific(100, 103);

M kind_mod(Tcgen05Kind k) {
  static constexpr M kKinds[] = {M::kind_f16,      M::kind_tf32, M::kind_f8f6f4,
                                 M::kind_mxf8f6f4, M::kind_mxf4, M::kind_mxf4nvf4};
  return kKinds[static_cast<int>(k)];
}

// "f16": the kind after "kind::".
std::string kind_name(Tcgen05Kind k) {
  return std::string(ptx::name(kind_mod(k)).substr(6));
}

bool block_scaled(Tcgen05Kind k) {
  return k == Tcgen05Kind::mxf8f6f4 || k == Tcgen05Kind::mxf4 || k == Tcgen05Kind::mxf4nvf4;
}

M scale_vec_mod(ScaleVec v) {
  static constexpr M kScales[] = {M::scale_vec_1X, M::scale_vec_2X, M::scale_vec_4X};
  return kScales[static_cast<int>(v)];
}

// "1X": the vector size after "scale_vec::".
std::string scale_vec_name(ScaleVec v) {
  return std::string(ptx::name(scale_vec_mod(v)).substr(11));
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
  M shape;
  int regs_per_repeat;  // 32-bit registers per thread for .x1
  int max_num;          // the largest .num (PTX ISA 9.7.16, tcgen05.ld's .num table)
};

DataPathShape data_path(TmemShape s) {
  static constexpr DataPathShape kShapes[] = {
      {M::_32x32b, 1, 128}, {M::_16x64b, 1, 128}, {M::_16x128b, 2, 64}, {M::_16x256b, 4, 32}};
  return kShapes[static_cast<int>(s)];
}

// The copy shape's words: 64x128b and 32x128b name their warp arrangement too.
std::vector<M> copy_shape_mods(TmemCopyShape s) {
  switch (s) {
    case TmemCopyShape::rows128_bits256:
      return {M::_128x256b};
    case TmemCopyShape::rows4_bits256:
      return {M::_4x256b};
    case TmemCopyShape::rows128_bits128:
      return {M::_128x128b};
    case TmemCopyShape::rows64_bits128_warpx2_02_13:
      return {M::_64x128b, M::warpx2_02_13};
    case TmemCopyShape::rows64_bits128_warpx2_01_23:
      return {M::_64x128b, M::warpx2_01_23};
    case TmemCopyShape::rows32_bits128_warpx4:
      return {M::_32x128b, M::warpx4};
  }
  return {};
}

M num_mod(int num) {
  static constexpr M kNums[] = {M::x1, M::x2, M::x4, M::x8, M::x16, M::x32, M::x64, M::x128};
  return kNums[std::countr_zero(static_cast<unsigned>(num))];
}

ptx::Operand enable_operand(const KernelCore& k, const std::variant<bool, PredUse>& enable_input_d) {
  return std::holds_alternative<bool>(enable_input_d)
             ? ptx::Operand::imm(std::get<bool>(enable_input_d) ? 1 : 0)
             : k.operand_of(std::get<PredUse>(enable_input_d));
}

bool is_power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}
}  // namespace

ptx::Mod Tcgen05Ops::group_mod(InstructionName instruction, CtaGroup group) {
  require(instruction, kBlackwell);
  auto spell = [](CtaGroup g) {
    return std::string(g == CtaGroup::one ? "cta_group::1" : "cta_group::2");
  };
  if (cta_group_ && *cta_group_ != group)
    fail(instruction, "uses " + spell(group) + " after this kernel's tcgen05 instructions used " +
                          spell(*cta_group_) +
                          "; every tcgen05 instruction of a kernel names the same .cta_group (PTX "
                          "ISA 9.7.16, tcgen05.alloc)");
  cta_group_ = group;
  return group == CtaGroup::one ? M::cta_group_1 : M::cta_group_2;
}

ptx::Instruction Tcgen05Ops::grouped(ptx::Mod op, CtaGroup group,
                                     std::initializer_list<ptx::Mod> rest) {
  ptx::Instruction form{O::tcgen05, {op}};
  form.modifiers.push_back(group_mod(form, group));
  form.modifiers.insert(form.modifiers.end(), rest);
  return form;
}

void Tcgen05Ops::check_tmem_address(const ptx::Instruction& instruction, const Reg& r,
                                    const char* role) const {
  // A tensor-memory address is 32 bits: lane << 16 | column.
  expect_type(instruction, r, Type::b32, role);
}

void Tcgen05Ops::check_column_count(const ptx::Instruction& instruction, const Src& ncols) const {
  expect_type(instruction, ncols, Type::u32, "column count");
  if (ncols.is_reg()) return;  // a register's value is checked by the simulator at run time
  const long long n = std::stoll(ncols.imm().text, nullptr, 0);
  if (n < 32 || n > 512 || (n & (n - 1)) != 0)
    fail(instruction, "column count " + ncols.imm().text +
                          "; a power of two in 32..512 (PTX ISA 9.7.16.1.2)");
}

void Tcgen05Ops::tcgen05_alloc(CtaGroup group, const Addr& dst, const Src& ncols) {
  const ptx::Instruction opcode =
      grouped(M::alloc, group, {M::sync, M::aligned, M::shared_cta, mod(Type::b32)});
  check_column_count(opcode, ncols);
  emit(opcode, {operand_of(dst), operand_of(ncols)});
}

void Tcgen05Ops::tcgen05_dealloc(CtaGroup group, const Reg& taddr, const Src& ncols) {
  const ptx::Instruction opcode = grouped(M::dealloc, group, {M::sync, M::aligned, mod(Type::b32)});
  check_tmem_address(opcode, taddr, "tensor-memory address");
  check_column_count(opcode, ncols);
  emit(opcode, {operand_of(taddr), operand_of(ncols)});
}

void Tcgen05Ops::tcgen05_relinquish_alloc_permit(CtaGroup group) {
  emit(grouped(M::relinquish_alloc_permit, group, {M::sync, M::aligned}), {});
}

ptx::Instruction Tcgen05Ops::mma_opcode(CtaGroup group, Tcgen05Kind kind,
                                        std::optional<ScaleVec> scale_vec,
                                        std::optional<ptx::Mod> form) {
  ptx::Instruction opcode{O::tcgen05, {M::mma}};
  if (form) opcode.modifiers.push_back(*form);
  opcode.modifiers.push_back(group_mod(opcode, group));
  opcode.modifiers.push_back(kind_mod(kind));
  if (!scale_vec) {
    if (block_scaled(kind))
      fail(opcode, "kind::" + kind_name(kind) +
                       " is block-scaled; use tcgen05_mma_block_scale (kinds f16, tf32 and f8f6f4 "
                       "take no scales)");
    return opcode;
  }
  opcode.modifiers.insert(opcode.modifiers.end(), {M::block_scale, scale_vec_mod(*scale_vec)});
  if (!block_scaled(kind))
    fail(opcode, "kind::" + kind_name(kind) +
                     " takes no scale factors; the block-scaled kinds are mxf8f6f4, mxf4 and mxf4nvf4");
  if (!scale_vec_allowed(kind, *scale_vec))
    fail(opcode, "scale_vec::" + scale_vec_name(*scale_vec) + " with kind::" + kind_name(kind) +
                     "; accepted: mxf8f6f4 with 1X, mxf4 with 2X, mxf4nvf4 with 2X or 4X");
  return opcode;
}

void Tcgen05Ops::emit_mma(const ptx::Instruction& opcode, const Reg& d_tmem, ptx::Operand a,
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
  ops.push_back(enable_operand(*this, enable_input_d));
  emit(opcode, std::move(ops));
}

void Tcgen05Ops::tcgen05_mma(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem, const Reg& a_desc,
                             const Reg& b_desc, const Reg& idesc,
                             std::variant<bool, PredUse> enable_input_d) {
  const ptx::Instruction opcode = mma_opcode(group, kind, std::nullopt);
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
    fail(ptx::Instruction{O::tcgen05, {M::mma, M::ws}},
         "kind::" + kind_name(kind) + "; the weight-stationary MMA takes kinds f16, tf32 and f8f6f4");
  ptx::Instruction opcode = mma_opcode(CtaGroup::one, kind, std::nullopt, M::ws);
  if (collector) {
    // collector::b<buffer>::<usage>, four usages a buffer
    static constexpr M kCollectors[] = {
        M::collector_b0_fill, M::collector_b0_use, M::collector_b0_lastuse, M::collector_b0_discard,
        M::collector_b1_fill, M::collector_b1_use, M::collector_b1_lastuse, M::collector_b1_discard,
        M::collector_b2_fill, M::collector_b2_use, M::collector_b2_lastuse, M::collector_b2_discard,
        M::collector_b3_fill, M::collector_b3_use, M::collector_b3_lastuse, M::collector_b3_discard};
    if (collector->buffer < 0 || collector->buffer > 3)
      fail(opcode, "collector buffer b" + std::to_string(collector->buffer) +
                       "; the weight-stationary MMA has buffers b0..b3");
    opcode.modifiers.push_back(
        kCollectors[4 * collector->buffer + static_cast<int>(collector->usage)]);
  }
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  emit_mma(opcode, d_tmem, operand_of(a_desc), b_desc, idesc, nullptr, nullptr, enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_sp(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem,
                                const Reg& a_desc, const Reg& b_desc, const Reg& sp_meta_tmem,
                                const Reg& idesc, std::variant<bool, PredUse> enable_input_d) {
  const ptx::Instruction opcode = mma_opcode(group, kind, std::nullopt, M::sp);
  expect_type(opcode, a_desc, Type::b64, "A descriptor");
  check_tmem_address(opcode, d_tmem, "D address");
  check_tmem_address(opcode, sp_meta_tmem, "sparsity metadata address");
  expect_type(opcode, b_desc, Type::b64, "B descriptor");
  expect_type(opcode, idesc, Type::b32, "instruction descriptor");
  // [d], a, b, [sp_meta], idesc, enable_input_d: the metadata comes before the descriptor.
  emit(opcode, {operand_of(at(d_tmem)), operand_of(a_desc), operand_of(b_desc),
                operand_of(at(sp_meta_tmem)), operand_of(idesc),
                enable_operand(*this, enable_input_d)});
}

void Tcgen05Ops::tcgen05_mma_a_tmem(CtaGroup group, Tcgen05Kind kind, const Reg& d_tmem,
                                    const Reg& a_tmem, const Reg& b_desc, const Reg& idesc,
                                    std::variant<bool, PredUse> enable_input_d) {
  const ptx::Instruction opcode = mma_opcode(group, kind, std::nullopt);
  check_tmem_address(opcode, a_tmem, "A address");
  emit_mma(opcode, d_tmem, operand_of(at(a_tmem)), b_desc, idesc, nullptr, nullptr, enable_input_d);
}

void Tcgen05Ops::tcgen05_mma_block_scale(CtaGroup group, Tcgen05Kind kind, ScaleVec scale_vec,
                                         const Reg& d_tmem, const Reg& a_desc, const Reg& b_desc,
                                         const Reg& idesc, const Reg& scale_a_tmem,
                                         const Reg& scale_b_tmem,
                                         std::variant<bool, PredUse> enable_input_d) {
  const ptx::Instruction opcode = mma_opcode(group, kind, scale_vec);
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
  const ptx::Instruction opcode = mma_opcode(group, kind, scale_vec);
  check_tmem_address(opcode, a_tmem, "A address");
  emit_mma(opcode, d_tmem, operand_of(at(a_tmem)), b_desc, idesc, &scale_a_tmem, &scale_b_tmem,
           enable_input_d);
}

void Tcgen05Ops::tcgen05_cp(CtaGroup group, TmemCopyShape shape, const Reg& taddr,
                            const Reg& s_desc) {
  ptx::Instruction opcode = grouped(M::cp, group, {});
  for (M m : copy_shape_mods(shape)) opcode.modifiers.push_back(m);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  expect_type(opcode, s_desc, Type::b64, "shared-memory descriptor");
  emit(opcode, {operand_of(at(taddr)), operand_of(s_desc)});
}

void Tcgen05Ops::tcgen05_shift_down(CtaGroup group, const Reg& taddr) {
  const ptx::Instruction opcode = grouped(M::shift, group, {M::down});
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr))});
}

ptx::Instruction Tcgen05Ops::data_path_opcode(ptx::Mod op, ptx::Mod shape, int regs_per_repeat,
                                              int max_num, const Regs& data, TmemPacking packing) {
  ptx::Instruction opcode{O::tcgen05, {op, M::sync, M::aligned, shape}};
  require(opcode, kBlackwell);
  const int count = static_cast<int>(data.size());
  const int num = count / regs_per_repeat;
  if (count % regs_per_repeat != 0 || !is_power_of_two(num) || num > max_num)
    fail(opcode, std::to_string(count) + " registers; ." + std::string(ptx::name(shape)) +
                     " moves " + std::to_string(regs_per_repeat) +
                     " register(s) per thread times .num, a power of two up to " +
                     std::to_string(max_num) + " (PTX ISA 9.7.16, tcgen05.ld's .num table)");
  opcode.modifiers.push_back(num_mod(num));
  if (packing == TmemPacking::pack_16b)
    opcode.modifiers.push_back(op == M::ld ? M::pack_16b : M::unpack_16b);
  opcode.modifiers.push_back(mod(Type::b32));
  for (const Reg& r : data)
    if (ptx::bits(r.type()) != 32)
      fail(opcode, "register " + r.name() + " is " + detail::type_name(r.type()) +
                       "; tensor-memory cells are 32 bits (b32, u32, s32 or f32 registers)");
  return opcode;
}

void Tcgen05Ops::tcgen05_ld(TmemShape shape, const Regs& dst, const Reg& taddr,
                            TmemPacking packing) {
  const DataPathShape s = data_path(shape);
  const ptx::Instruction opcode =
      data_path_opcode(M::ld, s.shape, s.regs_per_repeat, s.max_num, dst, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(dst), operand_of(at(taddr))});
}

void Tcgen05Ops::tcgen05_st(TmemShape shape, const Reg& taddr, const Regs& src,
                            TmemPacking packing) {
  const DataPathShape s = data_path(shape);
  const ptx::Instruction opcode =
      data_path_opcode(M::st, s.shape, s.regs_per_repeat, s.max_num, src, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr)), operand_of(src)});
}

// 16x32bx2: one register per repetition, .num up to 128 (as 16x64b).
void Tcgen05Ops::tcgen05_ld_16x32bx2(const Regs& dst, const Reg& taddr, std::uint32_t half_split,
                                     TmemPacking packing) {
  const ptx::Instruction opcode = data_path_opcode(M::ld, M::_16x32bx2, 1, 128, dst, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(dst), operand_of(at(taddr)), ptx::Operand::imm(half_split)});
}

void Tcgen05Ops::tcgen05_st_16x32bx2(const Reg& taddr, std::uint32_t half_split, const Regs& src,
                                     TmemPacking packing) {
  const ptx::Instruction opcode = data_path_opcode(M::st, M::_16x32bx2, 1, 128, src, packing);
  check_tmem_address(opcode, taddr, "tensor-memory address");
  emit(opcode, {operand_of(at(taddr)), ptx::Operand::imm(half_split), operand_of(src)});
}

void Tcgen05Ops::bare(std::initializer_list<ptx::Mod> modifiers) {
  const ptx::Instruction form{O::tcgen05, modifiers};
  require(form, kBlackwell);
  emit(form, {});
}

void Tcgen05Ops::tcgen05_wait_ld() { bare({M::wait_ld, M::sync, M::aligned}); }
void Tcgen05Ops::tcgen05_wait_st() { bare({M::wait_st, M::sync, M::aligned}); }

void Tcgen05Ops::tcgen05_commit(CtaGroup group, const Reg& bar) {
  const ptx::Instruction opcode =
      grouped(M::commit, group, {M::mbarrier_arrive_one, M::shared_cluster, mod(Type::b64)});
  expect_type(opcode, bar, Type::u32, "mbarrier address");
  emit(opcode, {operand_of(at(bar))});
}

void Tcgen05Ops::tcgen05_commit_multicast(CtaGroup group, const Reg& bar, const Src& cta_mask) {
  const ptx::Instruction opcode =
      grouped(M::commit, group,
              {M::mbarrier_arrive_one, M::shared_cluster, M::multicast_cluster, mod(Type::b64)});
  expect_type(opcode, bar, Type::u32, "mbarrier address");
  // ptxas 12.8 refuses an immediate ctaMask ("Arguments mismatch").
  if (!cta_mask.is_reg())
    fail(opcode, "CTA mask " + cta_mask.imm().text +
                     " is an immediate; ptxas takes it in a 16-bit register (mov.u16 it first)");
  expect_type(opcode, cta_mask, Type::u16, "CTA mask");
  emit(opcode, {operand_of(at(bar)), operand_of(cta_mask)});
}

void Tcgen05Ops::tcgen05_fence_before_thread_sync() { bare({M::fence_before_thread_sync}); }
void Tcgen05Ops::tcgen05_fence_after_thread_sync() { bare({M::fence_after_thread_sync}); }

}  // namespace warpforge::dsl
