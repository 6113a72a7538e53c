#include "warpforge/amdgpu/kernel.hpp"

#include <bit>
#include <cctype>

#include "warpforge/error.hpp"

namespace warpforge::amdgpu {
namespace {

// LDS per workgroup on gfx90a and gfx942 (AMDGPUUsage, "Memory Spaces": 64 KiB).
constexpr std::uint32_t kLdsBytes = 64 * 1024;

// Inst::dst for an operation whose result goes to a new register (emit makes it).
constexpr int kFresh = -2;

bool is_int(Type t) {
  return t == Type::i32 || t == Type::i64;
}

Operand reg_operand(Val v) {
  return Operand{true, v.reg, v.type, 0};
}

}  // namespace

AmdKernel::AmdKernel(std::string name, Target target, int workgroup_size)
    : target_(target), current_(&ir_.body) {
  ir_.name = std::move(name);
  bool identifier = !ir_.name.empty() && !std::isdigit(static_cast<unsigned char>(ir_.name[0]));
  for (char c : ir_.name)
    identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!identifier)
    refuse(
        "AmdKernel",
        "name '" + ir_.name +
            "' is not an identifier; accepted: letters, digits and '_', not starting with a digit");
  if (workgroup_size < 1 || workgroup_size > 1024)
    refuse("AmdKernel", "workgroup size " + std::to_string(workgroup_size) +
                         " is outside 1..1024 (the AMDGPU flat work-group size limit)");
  ir_.workgroup_size = workgroup_size;
}

void AmdKernel::refuse(const std::string& op, const std::string& what) const {
  throw DslError("amdgpu kernel '" + ir_.name + "', " + op + ": " + what);
}

void AmdKernel::check_own(const std::string& op, Val v) const {
  if (v.kernel != this || v.reg < 0 || v.reg >= static_cast<int>(ir_.regs.size()))
    refuse(op, "register %" + std::to_string(v.reg) + " does not belong to this kernel");
}

Operand AmdKernel::operand(const std::string& op, const Arg& a, Type want) const {
  if (!a.is_imm) {
    check_own(op, a.val);
    if (a.val.type != want)
      refuse(op, "operand %" + std::to_string(a.val.reg) + " is " + type_name(a.val.type) +
                     "; accepted: " + type_name(want));
    return reg_operand(a.val);
  }
  if (a.is_float) {
    if (want != Type::f32)
      refuse(op, "float immediate " + std::to_string(a.real) + " where " + type_name(want) +
                     " is expected");
    return Operand{false, -1, Type::f32, std::bit_cast<std::uint32_t>(a.real)};
  }
  if (want == Type::f32)
    refuse(op, "integer immediate " + std::to_string(a.integer) +
                   " where f32 is expected (write 1.0f)");
  if (want != Type::i32 && want != Type::i64 && want != Type::i1 && want != Type::i16)
    refuse(op, "immediate " + std::to_string(a.integer) + " where a " + type_name(want) +
                   " register is expected");
  return Operand{false, -1, want, static_cast<std::uint64_t>(a.integer)};
}

Operand AmdKernel::operand_like(const std::string& op, const Arg& a, const Arg& other) const {
  Type t = !a.is_imm       ? a.val.type
           : !other.is_imm ? other.val.type
                           : (a.is_float ? Type::f32 : Type::i32);
  return operand(op, a, t);
}

Val AmdKernel::emit(Inst inst) {
  Val d{};
  if (inst.dst == kFresh) {
    d = reg(inst.type);
    inst.dst = d.reg;
  } else if (inst.dst >= 0) {
    d = Val{this, inst.dst, ir_.regs[inst.dst]};
  }
  Stmt s;
  s.inst = std::move(inst);
  current_->push_back(std::move(s));
  return d;
}

Val AmdKernel::reg(Type t) {
  ir_.regs.push_back(t);
  return Val{this, static_cast<int>(ir_.regs.size()) - 1, t};
}

Val AmdKernel::param(const std::string& n, Type t) {
  ir_.params.push_back({n, t});
  return emit({Op::param, kFresh, {}, static_cast<std::int64_t>(ir_.params.size() - 1), Cmp::eq, t});
}
Val AmdKernel::param_ptr(const std::string& n) { return param(n, Type::ptr_global); }
Val AmdKernel::param_i32(const std::string& n) { return param(n, Type::i32); }
Val AmdKernel::param_f32(const std::string& n) { return param(n, Type::f32); }

void AmdKernel::mov(Val d, Arg a) {
  check_own("mov", d);
  emit({Op::mov, d.reg, {operand("mov", a, d.type)}, 0, Cmp::eq, d.type});
}

Val AmdKernel::copy(Arg a, Type t) {
  return emit({Op::mov, kFresh, {operand("copy", a, t)}, 0, Cmp::eq, t});
}

Val AmdKernel::workitem_id(int dim) {
  if (dim != 0)
    refuse("workitem_id", "dimension " + std::to_string(dim) +
                              "; accepted: 0 (x): workgroups are one-dimensional here");
  return emit({Op::workitem_id, kFresh, {}, dim, Cmp::eq, Type::i32});
}
Val AmdKernel::workgroup_id(int dim) {
  if (dim < 0 || dim > 2)
    refuse("workgroup_id", "dimension " + std::to_string(dim) + "; accepted: 0 (x), 1 (y), 2 (z)");
  return emit({Op::workgroup_id, kFresh, {}, dim, Cmp::eq, Type::i32});
}

Val AmdKernel::readfirstlane(Val a) {
  return emit(
      {Op::readfirstlane, kFresh, {operand("readfirstlane", a, Type::i32)}, 0, Cmp::eq, Type::i32});
}

Val AmdKernel::integer_binary(Op op, Arg a, Arg b) {
  const std::string n = op_name(op);
  Operand x = operand_like(n, a, b), y = operand_like(n, b, a);
  bool bitwise = op == Op::and_ || op == Op::or_ || op == Op::xor_;
  bool shift = op == Op::shl || op == Op::lshr || op == Op::ashr;
  if (x.type != y.type)
    refuse(n,
           "operands are " + type_name(x.type) + " and " + type_name(y.type) + "; they must match");
  if (!(is_int(x.type) || (bitwise && x.type == Type::i1)))
    refuse(n, "operands are " + type_name(x.type) + "; accepted: i32, i64" +
                  std::string(bitwise ? ", i1" : ""));
  if (shift && x.type != Type::i32)
    refuse(n, "operands are " + type_name(x.type) + "; shifts take i32");
  if (shift && !y.is_reg && y.bits >= 32)
    refuse(n, "shift amount " + std::to_string(static_cast<std::int64_t>(y.bits)) +
                  "; accepted: 0..31");
  return emit({op, kFresh, {x, y}, 0, Cmp::eq, x.type});
}

Val AmdKernel::add(Arg a, Arg b) {
  return integer_binary(Op::add, a, b);
}
Val AmdKernel::sub(Arg a, Arg b) {
  return integer_binary(Op::sub, a, b);
}
Val AmdKernel::mul(Arg a, Arg b) {
  return integer_binary(Op::mul, a, b);
}
Val AmdKernel::bit_and(Arg a, Arg b) {
  return integer_binary(Op::and_, a, b);
}
Val AmdKernel::bit_or(Arg a, Arg b) {
  return integer_binary(Op::or_, a, b);
}
Val AmdKernel::bit_xor(Arg a, Arg b) {
  return integer_binary(Op::xor_, a, b);
}
Val AmdKernel::shl(Arg a, Arg b) {
  return integer_binary(Op::shl, a, b);
}
Val AmdKernel::lshr(Arg a, Arg b) {
  return integer_binary(Op::lshr, a, b);
}
Val AmdKernel::ashr(Arg a, Arg b) {
  return integer_binary(Op::ashr, a, b);
}

Val AmdKernel::icmp(Cmp c, Arg a, Arg b) {
  Operand x = operand_like("icmp", a, b), y = operand_like("icmp", b, a);
  if (x.type != y.type || !is_int(x.type))
    refuse("icmp", "operands are " + type_name(x.type) + " and " + type_name(y.type) +
                       "; accepted: two i32 or two i64");
  Inst inst{Op::icmp, kFresh, {x, y}, 0, c, Type::i1};
  return emit(inst);
}

Val AmdKernel::select(Arg cond, Arg a, Arg b) {
  Operand c = operand("select", cond, Type::i1);
  Operand x = operand_like("select", a, b), y = operand_like("select", b, a);
  if (x.type != y.type)
    refuse("select",
           "values are " + type_name(x.type) + " and " + type_name(y.type) + "; they must match");
  return emit({Op::select, kFresh, {c, x, y}, 0, Cmp::eq, x.type});
}

Val AmdKernel::float_binary(Op op, Arg a, Arg b) {
  return emit({op,
               kFresh,
               {operand(op_name(op), a, Type::f32), operand(op_name(op), b, Type::f32)},
               0,
               Cmp::eq,
               Type::f32});
}
Val AmdKernel::fadd(Arg a, Arg b) {
  return float_binary(Op::fadd, a, b);
}
Val AmdKernel::fsub(Arg a, Arg b) {
  return float_binary(Op::fsub, a, b);
}
Val AmdKernel::fmul(Arg a, Arg b) {
  return float_binary(Op::fmul, a, b);
}
Val AmdKernel::fma(Arg a, Arg b, Arg c) {
  return emit(
      {Op::fma,
       kFresh,
       {operand("fma", a, Type::f32), operand("fma", b, Type::f32), operand("fma", c, Type::f32)},
       0,
       Cmp::eq,
       Type::f32});
}

Val AmdKernel::convert(Op op, Val a, Type from, Type to) {
  return emit({op, kFresh, {operand(op_name(op), a, from)}, 0, Cmp::eq, to});
}
Val AmdKernel::zext(Val a) {
  return convert(Op::zext, a, Type::i32, Type::i64);
}
Val AmdKernel::trunc(Val a) {
  return convert(Op::trunc, a, Type::i64, Type::i32);
}
Val AmdKernel::sitofp(Val a) {
  return convert(Op::sitofp, a, Type::i32, Type::f32);
}
Val AmdKernel::fptosi(Val a) {
  return convert(Op::fptosi, a, Type::f32, Type::i32);
}
Val AmdKernel::f32_to_bf16(Val a) {
  return convert(Op::f32_to_bf16, a, Type::f32, Type::i16);
}
Val AmdKernel::bf16_to_f32(Val a) {
  return convert(Op::bf16_to_f32, a, Type::i16, Type::f32);
}
Val AmdKernel::f32_to_f16(Val a) {
  return convert(Op::f32_to_f16, a, Type::f32, Type::i16);
}
Val AmdKernel::f16_to_f32(Val a) {
  return convert(Op::f16_to_f32, a, Type::i16, Type::f32);
}

Val AmdKernel::bitcast(Type to, Val a) {
  check_own("bitcast", a);
  bool pointer = a.type == Type::ptr_global || a.type == Type::ptr_lds || to == Type::ptr_global ||
                 to == Type::ptr_lds;
  if (pointer || a.type == Type::i1 || to == Type::i1 || info(a.type).bytes != info(to).bytes)
    refuse("bitcast", type_name(a.type) + " to " + type_name(to) +
                          ": accepted between non-pointer, non-i1 types of the same size (" +
                          std::to_string(info(a.type).bytes) + " bytes here)");
  return emit({Op::bitcast, kFresh, {reg_operand(a)}, 0, Cmp::eq, to});
}

Val AmdKernel::extract(Val vec, int index) {
  check_own("extract", vec);
  if (!is_vector(vec.type) || index < 0 || index >= info(vec.type).elements)
    refuse("extract", "element " + std::to_string(index) + " of " + type_name(vec.type) +
                          "; accepted: a vector and 0.." +
                          std::to_string(info(vec.type).elements - 1));
  return emit({Op::extract, kFresh, {reg_operand(vec)}, index, Cmp::eq, info(vec.type).element});
}

void AmdKernel::insert(Val vec, int index, Arg element) {
  check_own("insert", vec);
  if (!is_vector(vec.type) || index < 0 || index >= info(vec.type).elements)
    refuse("insert", "element " + std::to_string(index) + " of " + type_name(vec.type) +
                         "; accepted: a vector and 0.." +
                         std::to_string(info(vec.type).elements - 1));
  emit({Op::insert,
        vec.reg,
        {reg_operand(vec), operand("insert", element, info(vec.type).element)},
        index,
        Cmp::eq,
        vec.type});
}

Val AmdKernel::lds(std::uint32_t bytes, std::uint32_t align) {
  if (align == 0 || (align & (align - 1)) != 0 || align > 16)
    refuse("lds", "alignment " + std::to_string(align) + "; accepted: a power of two up to 16");
  std::uint32_t base = (ir_.lds_bytes + align - 1) / align * align;
  if (bytes == 0 || std::uint64_t{base} + bytes > kLdsBytes)
    refuse("lds", std::to_string(bytes) + " bytes at offset " + std::to_string(base) +
                      " do not fit: accepted 1 byte up to the 65536-byte LDS of a workgroup");
  ir_.lds_bytes = base + bytes;
  return emit({Op::lds_base, kFresh, {}, base, Cmp::eq, Type::ptr_lds});
}

Val AmdKernel::ptr_add(Val ptr, Arg bytes) {
  check_own("ptr_add", ptr);
  if (ptr.type != Type::ptr_global && ptr.type != Type::ptr_lds)
    refuse("ptr_add", "base %" + std::to_string(ptr.reg) + " is " + type_name(ptr.type) +
                          "; accepted: ptr.global, ptr.lds");
  return emit({Op::ptr_add,
               kFresh,
               {reg_operand(ptr), operand("ptr_add", bytes, Type::i32)},
               0,
               Cmp::eq,
               ptr.type});
}

namespace {
bool memory_type(Type t) {
  int b = info(t).bytes;
  return t != Type::ptr_lds && t != Type::ptr_global && (b == 2 || b == 4 || b == 8 || b == 16);
}
const char* kMemoryTypes = "i16, i32, f32, i64, v2i32, v4i16, v4i32, v4f32";
}  // namespace

Val AmdKernel::load(Type t, Val ptr) {
  check_own("load", ptr);
  if (ptr.type != Type::ptr_global && ptr.type != Type::ptr_lds)
    refuse("load", "address %" + std::to_string(ptr.reg) + " is " + type_name(ptr.type) +
                       "; accepted: ptr.global, ptr.lds");
  if (!memory_type(t)) refuse("load", "type " + type_name(t) + "; accepted: " + kMemoryTypes);
  return emit({Op::load, kFresh, {reg_operand(ptr)}, 0, Cmp::eq, t});
}

void AmdKernel::store(Val ptr, Arg value) {
  check_own("store", ptr);
  if (ptr.type != Type::ptr_global && ptr.type != Type::ptr_lds)
    refuse("store", "address %" + std::to_string(ptr.reg) + " is " + type_name(ptr.type) +
                        "; accepted: ptr.global, ptr.lds");
  Type t = value.is_imm ? (value.is_float ? Type::f32 : Type::i32) : value.val.type;
  if (!memory_type(t)) refuse("store", "type " + type_name(t) + "; accepted: " + kMemoryTypes);
  emit({Op::store, -1, {reg_operand(ptr), operand("store", value, t)}, 0, Cmp::eq, t});
}

void AmdKernel::barrier() {
  emit({Op::barrier, -1, {}, 0, Cmp::eq, Type::i32});
}

void AmdKernel::mfma(Mfma m, Val d, Val a, Val b, Val c) {
  const MfmaInfo& mi = info(m);
  const std::string op = std::string("mfma ") + mi.name;
  check_own(op, d);
  Operand x = operand(op, a, Type::v4i16), y = operand(op, b, Type::v4i16),
          z = operand(op, c, mi.accumulator);
  if (d.type != mi.accumulator)
    refuse(op, "destination %" + std::to_string(d.reg) + " is " + type_name(d.type) +
                   "; accepted: " + type_name(mi.accumulator));
  emit({Op::mfma, d.reg, {x, y, z}, static_cast<std::int64_t>(m), Cmp::eq, mi.accumulator});
}

Val AmdKernel::make_rsrc(Val base, Arg bytes) {
  Operand p = operand("make_rsrc", base, Type::ptr_global);
  return emit({Op::make_rsrc,
               kFresh,
               {p, operand("make_rsrc", bytes, Type::i32)},
               0,
               Cmp::eq,
               Type::v4i32});
}

namespace {
bool buffer_type(Type t) {
  return t == Type::i32 || t == Type::v2i32 || t == Type::v4i32;
}
}  // namespace

Val AmdKernel::buffer_load(Type t, Val rsrc, Arg offset) {
  if (!buffer_type(t))
    refuse("buffer_load", "type " + type_name(t) + "; accepted: i32, v2i32, v4i32 (x1, x2, x4)");
  Operand r = operand("buffer_load", rsrc, Type::v4i32);
  return emit(
      {Op::buffer_load, kFresh, {r, operand("buffer_load", offset, Type::i32)}, 0, Cmp::eq, t});
}

void AmdKernel::buffer_store(Val rsrc, Arg offset, Val value) {
  check_own("buffer_store", value);
  if (!buffer_type(value.type))
    refuse("buffer_store", "value %" + std::to_string(value.reg) + " is " + type_name(value.type) +
                               "; accepted: i32, v2i32, v4i32 (x1, x2, x4)");
  Operand r = operand("buffer_store", rsrc, Type::v4i32);
  emit({Op::buffer_store,
        -1,
        {r, operand("buffer_store", offset, Type::i32), reg_operand(value)},
        0,
        Cmp::eq,
        value.type});
}

void AmdKernel::nest(Block& block, const std::function<void()>& body) {
  Block* outer = current_;
  current_ = &block;
  try {
    body();
  } catch (...) {
    current_ = outer;
    throw;
  }
  current_ = outer;
}

void AmdKernel::if_then(Arg cond, const std::function<void()>& then_body) {
  if_else(cond, then_body, [] {});
}

void AmdKernel::if_else(Arg cond, const std::function<void()>& then_body,
                     const std::function<void()>& else_body) {
  Stmt s;
  s.kind = Stmt::Kind::if_;
  s.cond = operand("if", cond, Type::i1);
  nest(s.then_body, then_body);
  nest(s.else_body, else_body);
  current_->push_back(std::move(s));
}

void AmdKernel::for_range(Arg begin, Arg end, std::int32_t step,
                       const std::function<void(Val)>& body) {
  if (step <= 0)
    refuse("for_range", "step " + std::to_string(step) + "; accepted: a positive step");
  Stmt s;
  s.kind = Stmt::Kind::loop;
  s.begin = operand("for_range", begin, Type::i32);
  s.end = operand("for_range", end, Type::i32);
  s.step = step;
  Val i = reg(Type::i32);
  s.counter = i.reg;
  nest(s.body, [&] { body(i); });
  current_->push_back(std::move(s));
}

}  // namespace warpforge::amdgpu
