#include "warpforge/amdgpu/llvm_ir.hpp"

#include <bit>
#include <cstdio>
#include <set>
#include <sstream>

namespace warpforge::amdgpu {
namespace {

// The raw-buffer descriptor's word 3 on gfx9-family (CDNA) processors:
// DATA_FORMAT (bits 15-18) = 4, a 32-bit format, every other field zero (CDNA3
// ISA, "Buffer Resource Descriptor"); the value AMD's Composable Kernel uses
// for gfx90a and gfx94x raw buffers.
constexpr unsigned kRsrcWord3 = 0x00020000u;

class Emitter {
 public:
  Emitter(const KernelIR& k, Target t) : k_(k), target_(t) {}

  std::string run() {
    for (std::size_t r = 0; r < k_.regs.size(); ++r)
      entry_ << "  %r" << r << " = alloca " << info(k_.regs[r]).llvm
             << ", align 16, addrspace(5)\n";
    block(k_.body);
    std::ostringstream out;
    out << "; warpforge amdgpu kernel '" << k_.name << "' for " << to_string(target_) << "\n";
    out << "target triple = \"amdgcn-amd-amdhsa\"\n\n";
    if (k_.lds_bytes > 0)
      out << "@" << k_.name << ".lds = internal addrspace(3) global [" << k_.lds_bytes
          << " x i8] poison, align 16\n\n";
    out << "define amdgpu_kernel void @" << k_.name << "(";
    for (std::size_t i = 0; i < k_.params.size(); ++i)
      out << (i ? ", " : "") << info(k_.params[i].type).llvm << " %arg" << i;
    out << ") #0 {\nentry:\n" << entry_.str() << body_.str() << "  ret void\n}\n\n";
    for (const auto& d : declares_) out << d << "\n";
    out << "\nattributes #0 = { \"amdgpu-flat-work-group-size\"=\"" << k_.workgroup_size << ","
        << k_.workgroup_size << "\" \"target-cpu\"=\"" << to_string(target_) << "\" }\n";
    out << "\n; parameters:";
    for (std::size_t i = 0; i < k_.params.size(); ++i)
      out << " %arg" << i << " = " << k_.params[i].name;
    out << "\n";
    return out.str();
  }

 private:
  std::string temp() { return "%t" + std::to_string(next_++); }
  std::string label(const char* what) { return std::string(what) + std::to_string(next_++); }

  // The operand's value as an LLVM operand (loading a register into a temp).
  std::string value(const Operand& o) {
    if (o.is_reg) {
      std::string t = temp();
      body_ << "  " << t << " = load " << info(o.type).llvm << ", ptr addrspace(5) %r" << o.reg
            << ", align 16\n";
      return t;
    }
    if (o.type == Type::i1) return o.bits ? "true" : "false";
    if (o.type == Type::f32) {
      // LLVM IR writes float constants as the hex of the equal double.
      double d = std::bit_cast<float>(static_cast<std::uint32_t>(o.bits));
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%016llX",
                    static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(d)));
      return buf;
    }
    if (o.type == Type::i16) return std::to_string(static_cast<std::int16_t>(o.bits));
    if (o.type == Type::i32) return std::to_string(static_cast<std::int32_t>(o.bits));
    return std::to_string(static_cast<std::int64_t>(o.bits));
  }
  std::string typed(const Operand& o) { return std::string(info(o.type).llvm) + " " + value(o); }

  void store_reg(int reg, const std::string& v) {
    body_ << "  store " << info(k_.regs[reg]).llvm << " " << v << ", ptr addrspace(5) %r" << reg
          << ", align 16\n";
  }
  std::string assign(const std::string& rhs) {
    std::string t = temp();
    body_ << "  " << t << " = " << rhs << "\n";
    return t;
  }
  void declare(const std::string& d) { declares_.insert(d); }

  void block(const Block& b) {
    for (const auto& s : b) {
      if (s.kind == Stmt::Kind::inst) {
        inst(s.inst);
      } else if (s.kind == Stmt::Kind::if_) {
        std::string then_l = label("then"), else_l = label("else"), end_l = label("endif");
        std::string c = value(s.cond);
        body_ << "  br i1 " << c << ", label %" << then_l << ", label %" << else_l << "\n"
              << then_l << ":\n";
        block(s.then_body);
        body_ << "  br label %" << end_l << "\n" << else_l << ":\n";
        block(s.else_body);
        body_ << "  br label %" << end_l << "\n" << end_l << ":\n";
      } else {
        std::string head = label("loop"), body_l = label("body"), exit = label("exit");
        store_reg(s.counter, value(s.begin));
        body_ << "  br label %" << head << "\n" << head << ":\n";
        Operand counter{true, s.counter, Type::i32, 0};
        std::string i = value(counter), e = value(s.end);
        std::string c = assign("icmp ult i32 " + i + ", " + e);
        body_ << "  br i1 " << c << ", label %" << body_l << ", label %" << exit << "\n"
              << body_l << ":\n";
        block(s.body);
        std::string i2 = value(counter);
        store_reg(s.counter, assign("add i32 " + i2 + ", " + std::to_string(s.step)));
        body_ << "  br label %" << head << "\n" << exit << ":\n";
      }
    }
  }

  void inst(const Inst& in) {
    const auto& a = in.args;
    const std::string ty = info(in.type).llvm;
    std::string result;
    switch (in.op) {
      case Op::mov:
        result = value(a[0]);
        break;
      case Op::add:
      case Op::sub:
      case Op::mul:
      case Op::and_:
      case Op::or_:
      case Op::xor_:
      case Op::shl:
      case Op::lshr:
      case Op::ashr:
      case Op::fadd:
      case Op::fsub:
      case Op::fmul: {
        static const char* const kLlvm[] = {"",   "add", "sub", "mul",  "and",
                                            "or", "xor", "shl", "lshr", "ashr"};
        std::string opname = in.op == Op::fadd   ? "fadd"
                             : in.op == Op::fsub ? "fsub"
                             : in.op == Op::fmul ? "fmul"
                                                 : kLlvm[static_cast<int>(in.op)];
        std::string x = value(a[0]), y = value(a[1]);
        result = assign(opname + " " + ty + " " + x + ", " + y);
        break;
      }
      case Op::icmp: {
        std::string x = value(a[0]), y = value(a[1]);
        result = assign(std::string("icmp ") + cmp_name(in.cmp) + " " + info(a[0].type).llvm + " " +
                        x + ", " + y);
        break;
      }
      case Op::select: {
        std::string c = typed(a[0]), x = typed(a[1]), y = typed(a[2]);
        result = assign("select " + c + ", " + x + ", " + y);
        break;
      }
      case Op::fma: {
        declare("declare float @llvm.fma.f32(float, float, float)");
        std::string x = typed(a[0]), y = typed(a[1]), z = typed(a[2]);
        result = assign("call float @llvm.fma.f32(" + x + ", " + y + ", " + z + ")");
        break;
      }
      case Op::zext:
        result = assign("zext " + typed(a[0]) + " to i64");
        break;
      case Op::trunc:
        result = assign("trunc " + typed(a[0]) + " to i32");
        break;
      case Op::sitofp:
        result = assign("sitofp " + typed(a[0]) + " to float");
        break;
      case Op::fptosi:
        result = assign("fptosi " + typed(a[0]) + " to i32");
        break;
      case Op::f32_to_bf16:
        result =
            assign("bitcast bfloat " + assign("fptrunc " + typed(a[0]) + " to bfloat") + " to i16");
        break;
      case Op::f32_to_f16:
        result =
            assign("bitcast half " + assign("fptrunc " + typed(a[0]) + " to half") + " to i16");
        break;
      case Op::bf16_to_f32:
        result =
            assign("fpext bfloat " + assign("bitcast " + typed(a[0]) + " to bfloat") + " to float");
        break;
      case Op::f16_to_f32:
        result =
            assign("fpext half " + assign("bitcast " + typed(a[0]) + " to half") + " to float");
        break;
      case Op::bitcast:
        result = assign("bitcast " + typed(a[0]) + " to " + ty);
        break;
      case Op::extract:
        result = assign("extractelement " + typed(a[0]) + ", i32 " + std::to_string(in.imm));
        break;
      case Op::insert: {
        std::string v = typed(a[0]), e = typed(a[1]);
        result = assign("insertelement " + v + ", " + e + ", i32 " + std::to_string(in.imm));
        break;
      }
      case Op::workitem_id:
      case Op::workgroup_id: {
        std::string f = std::string("llvm.amdgcn.") +
                        (in.op == Op::workitem_id ? "workitem" : "workgroup") + ".id." +
                        "xyz"[in.imm];
        declare("declare i32 @" + f + "()");
        result = assign("call i32 @" + f + "()");
        break;
      }
      case Op::readfirstlane:
        // The unsuffixed name of LLVM 16-18; LLVM 19 upgrades it to .i32.
        declare("declare i32 @llvm.amdgcn.readfirstlane(i32)");
        result = assign("call i32 @llvm.amdgcn.readfirstlane(" + typed(a[0]) + ")");
        break;
      case Op::param:
        result = "%arg" + std::to_string(in.imm);
        break;
      case Op::lds_base:
        result = assign("getelementptr i8, ptr addrspace(3) @" + k_.name + ".lds, i32 " +
                        std::to_string(in.imm));
        break;
      case Op::ptr_add: {
        std::string p = typed(a[0]), off = typed(a[1]);
        if (a[0].type == Type::ptr_global) off = "i64 " + assign("zext " + off + " to i64");
        result = assign("getelementptr i8, " + p + ", " + off);
        break;
      }
      case Op::load:
        result = assign("load " + ty + ", " + typed(a[0]) + ", align " +
                        std::to_string(info(in.type).bytes));
        break;
      case Op::store: {
        std::string p = typed(a[0]), v = typed(a[1]);
        body_ << "  store " << v << ", " << p << ", align " << info(in.type).bytes << "\n";
        return;
      }
      case Op::barrier:
        declare("declare void @llvm.amdgcn.s.barrier()");
        body_ << "  fence syncscope(\"workgroup\") release\n  call void @llvm.amdgcn.s.barrier()\n"
              << "  fence syncscope(\"workgroup\") acquire\n";
        return;
      case Op::mfma: {
        const MfmaInfo& mi = info(static_cast<Mfma>(in.imm));
        const std::string acc = info(mi.accumulator).llvm,
                          in_ty = mi.bf16 ? "<4 x i16>" : "<4 x half>";
        declare("declare " + acc + " @llvm." + mi.intrinsic + "(" + in_ty + ", " + in_ty + ", " +
                acc + ", i32, i32, i32)");
        std::string x = value(a[0]), y = value(a[1]);
        if (!mi.bf16) {
          x = assign("bitcast <4 x i16> " + x + " to <4 x half>");
          y = assign("bitcast <4 x i16> " + y + " to <4 x half>");
        }
        std::string c = typed(a[2]);
        // cbsz, abid, blgp = 0: no broadcast, no lane-group permutation.
        result = assign("call " + acc + " @llvm." + mi.intrinsic + "(" + in_ty + " " + x + ", " +
                        in_ty + " " + y + ", " + c + ", i32 0, i32 0, i32 0)");
        break;
      }
      case Op::make_rsrc: {
        std::string p = typed(a[0]), bytes = value(a[1]);
        std::string base = assign("ptrtoint " + p + " to i64");
        std::string lo = assign("trunc i64 " + base + " to i32");
        std::string hi = assign("trunc i64 " + assign("lshr i64 " + base + ", 32") + " to i32");
        // Word 1 holds base address bits 32-47 in its low 16 bits; stride (bits 16-29) = 0.
        std::string w1 = assign("and i32 " + hi + ", 65535");
        std::string v = assign("insertelement <4 x i32> poison, i32 " + lo + ", i32 0");
        v = assign("insertelement <4 x i32> " + v + ", i32 " + w1 + ", i32 1");
        v = assign("insertelement <4 x i32> " + v + ", i32 " + bytes + ", i32 2");
        result = assign("insertelement <4 x i32> " + v + ", i32 " + std::to_string(kRsrcWord3) +
                        ", i32 3");
        break;
      }
      case Op::buffer_load: {
        std::string suffix = in.type == Type::i32 ? "i32" : type_name(in.type);
        declare("declare " + ty + " @llvm.amdgcn.raw.buffer.load." + suffix +
                "(<4 x i32>, i32, i32, i32)");
        std::string r = typed(a[0]), off = typed(a[1]);
        // soffset = 0, aux (cache policy) = 0.
        result = assign("call " + ty + " @llvm.amdgcn.raw.buffer.load." + suffix + "(" + r + ", " +
                        off + ", i32 0, i32 0)");
        break;
      }
      case Op::buffer_store: {
        std::string suffix = in.type == Type::i32 ? "i32" : type_name(in.type);
        declare("declare void @llvm.amdgcn.raw.buffer.store." + suffix + "(" + ty +
                ", <4 x i32>, i32, i32, i32)");
        std::string r = typed(a[0]), off = typed(a[1]), v = typed(a[2]);
        body_ << "  call void @llvm.amdgcn.raw.buffer.store." << suffix << "(" << v << ", " << r
              << ", " << off << ", i32 0, i32 0)\n";
        return;
      }
    }
    if (in.dst >= 0) store_reg(in.dst, result);
  }

  const KernelIR& k_;
  Target target_;
  std::ostringstream entry_, body_;
  std::set<std::string> declares_;
  int next_ = 0;
};

}  // namespace

std::string to_llvm_ir(const KernelIR& kernel, Target target) {
  return Emitter(kernel, target).run();
}

}  // namespace warpforge::amdgpu
