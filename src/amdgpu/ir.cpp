#include "warpforge/amdgpu/ir.hpp"

#include <bit>
#include <iterator>
#include <sstream>

namespace warpforge::amdgpu {

const char* op_name(Op op) {
  static const char* const kNames[] = {
      "mov",     "add",       "sub",         "mul",          "and",          "or",
      "xor",     "shl",       "lshr",        "ashr",         "icmp",         "select",
      "fadd",    "fsub",      "fmul",        "fma",          "zext",         "trunc",
      "sitofp",  "fptosi",    "f32_to_bf16", "bf16_to_f32",  "f32_to_f16",   "f16_to_f32",
      "bitcast", "extract",   "insert",      "workitem_id",  "workgroup_id", "readfirstlane",
      "param",   "lds_base",  "ptr_add",     "load",         "store",        "barrier",
      "mfma",    "make_rsrc", "buffer_load", "buffer_store",
  };
  static_assert(std::size(kNames) == static_cast<std::size_t>(Op::buffer_store) + 1,
                "one name per Op");
  return kNames[static_cast<int>(op)];
}

const char* cmp_name(Cmp c) {
  static const char* const kNames[] = {"eq",  "ne",  "ult", "ule", "ugt",
                                       "uge", "slt", "sle", "sgt", "sge"};
  return kNames[static_cast<int>(c)];
}

std::string to_string(const Inst& inst) {
  std::ostringstream s;
  if (inst.dst >= 0) s << "%" << inst.dst << ":" << type_name(inst.type) << " = ";
  s << op_name(inst.op);
  if (inst.op == Op::icmp) s << "." << cmp_name(inst.cmp);
  if (inst.op == Op::mfma) s << "." << info(static_cast<Mfma>(inst.imm)).name;
  if (inst.op == Op::store || inst.op == Op::buffer_store) s << "." << type_name(inst.type);
  const char* sep = " ";
  for (const auto& a : inst.args) {
    s << sep;
    sep = ", ";
    if (a.is_reg) {
      s << "%" << a.reg << ":" << type_name(a.type);
    } else if (a.type == Type::f32) {
      s << std::bit_cast<float>(static_cast<std::uint32_t>(a.bits));
    } else {
      s << static_cast<std::int64_t>(a.bits);
    }
  }
  switch (inst.op) {
    case Op::extract:
    case Op::insert:
    case Op::workitem_id:
    case Op::workgroup_id:
    case Op::param:
    case Op::lds_base:
      s << sep << "#" << inst.imm;
      break;
    default:
      break;
  }
  return s.str();
}

}  // namespace warpforge::amdgpu
