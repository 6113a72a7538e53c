#include "wave.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "../float_format.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim::amdgpu {

namespace {
// Registers start as this pattern, so that a read before any write shows.
constexpr std::uint32_t kPoison = 0xDEADBEEFu;

std::uint64_t width_mask(Type t) {
  switch (t) {
    case Type::i1:
      return 1;
    case Type::i16:
      return 0xFFFF;
    case Type::i64:
    case Type::ptr_global:
      return ~0ull;
    default:
      return 0xFFFFFFFFull;
  }
}

std::int64_t sign_extend(std::uint64_t v, Type t) {
  return t == Type::i64 ? static_cast<std::int64_t>(v)
                        : static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

float as_float(std::uint64_t bits) {
  return f32_of(bits);
}

// v_cvt_i32_f32 saturates and turns NaN into 0 (AMD CDNA3 ISA, VOP1 opcodes);
// LLVM calls out-of-range fptosi poison, so any value is allowed there.
std::int32_t to_i32(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return std::numeric_limits<std::int32_t>::max();
  if (f < -2147483648.0f) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(f);
}
}  // namespace

Wave::Wave(Workgroup& group, int index, int live_lanes)
    : group_(group),
      index_(index),
      exec_(live_lanes >= kWaveSize ? ~0ull : ((1ull << live_lanes) - 1)),
      regs_(group.kernel.regs.size()) {
  for (std::size_t r = 0; r < regs_.size(); ++r)
    regs_[r].assign(static_cast<std::size_t>(info(group.kernel.regs[r]).words) * kWaveSize,
                    kPoison);
}

std::uint32_t* Wave::words(int reg, int lane) {
  return regs_[reg].data() + static_cast<std::size_t>(lane) * info(group_.kernel.regs[reg]).words;
}

const std::uint32_t* Wave::read(const Operand& o, int lane, std::uint32_t* scratch) {
  if (o.is_reg) return words(o.reg, lane);
  scratch[0] = static_cast<std::uint32_t>(o.bits & width_mask(o.type));
  scratch[1] = static_cast<std::uint32_t>(o.type == Type::i64 ? o.bits >> 32 : 0);
  return scratch;
}

std::uint64_t Wave::scalar(const Operand& o, int lane) {
  std::uint32_t scratch[2];
  const std::uint32_t* w = read(o, lane, scratch);
  std::uint64_t v = w[0];
  if (info(o.type).words == 2) v |= std::uint64_t{w[1]} << 32;
  return v & width_mask(o.type);
}

void Wave::write_scalar(int reg, int lane, std::uint64_t v) {
  Type t = group_.kernel.regs[reg];
  v &= width_mask(t);
  std::uint32_t* w = words(reg, lane);
  w[0] = static_cast<std::uint32_t>(v);
  if (info(t).words == 2) w[1] = static_cast<std::uint32_t>(v >> 32);
}

std::uint64_t Wave::lane_mask(const Operand& cond) {
  std::uint64_t m = 0;
  for (int lane = 0; lane < kWaveSize; ++lane)
    if (active(lane) && scalar(cond, lane)) m |= 1ull << lane;
  return m;
}

void Wave::fail(const Inst& in, int lane, const std::string& what) const {
  throw SimError("amdgpu kernel '" + group_.kernel.name + "', instruction `" + to_string(in) +
                 "`, workgroup (" + std::to_string(group_.id[0]) + "," +
                 std::to_string(group_.id[1]) + "," + std::to_string(group_.id[2]) + "), wave " +
                 std::to_string(index_) + " lane " + std::to_string(lane) + " (work-item " +
                 std::to_string(index_ * kWaveSize + lane) + "): " + what);
}

void Wave::run_until_barrier() {
  while (!done() && !at_barrier_) step();
}

void Wave::step() {
  const Step& s = group_.program[pc_];
  switch (s.kind) {
    case Step::Kind::inst:
      ++pc_;
      if (exec_ != 0) execute(*s.inst);
      return;
    case Step::Kind::if_begin: {
      std::uint64_t taken = lane_mask(s.stmt->cond);
      stack_.push_back({exec_, taken});
      exec_ = taken;
      // With no lane on the then-path the wave branches over it.
      pc_ = taken ? pc_ + 1 : static_cast<std::size_t>(s.jump);
      return;
    }
    case Step::Kind::else_: {
      const Frame& f = stack_.back();
      exec_ = f.saved_exec & ~f.taken;
      pc_ = exec_ ? pc_ + 1 : static_cast<std::size_t>(s.jump);
      return;
    }
    case Step::Kind::end_if:
    case Step::Kind::loop_end:
      exec_ = stack_.back().saved_exec;
      stack_.pop_back();
      ++pc_;
      return;
    case Step::Kind::loop_init:
      stack_.push_back({exec_, 0});
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane)) write_scalar(s.stmt->counter, lane, scalar(s.stmt->begin, lane));
      ++pc_;
      return;
    case Step::Kind::loop_head: {
      Operand counter{true, s.stmt->counter, Type::i32, 0};
      std::uint64_t stay = 0;
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane) && scalar(counter, lane) < scalar(s.stmt->end, lane)) stay |= 1ull << lane;
      exec_ = stay;
      pc_ = stay ? pc_ + 1 : static_cast<std::size_t>(s.jump);
      return;
    }
    case Step::Kind::loop_latch: {
      Operand counter{true, s.stmt->counter, Type::i32, 0};
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane))
          write_scalar(s.stmt->counter, lane,
                       scalar(counter, lane) + static_cast<std::uint32_t>(s.stmt->step));
      pc_ = static_cast<std::size_t>(s.jump);
      return;
    }
  }
}

void Wave::execute(const Inst& in) {
  switch (in.op) {
    case Op::barrier:
      at_barrier_ = true;
      return;
    case Op::mfma:
      mfma(in);
      return;
    case Op::readfirstlane: {
      const int first = __builtin_ctzll(exec_);
      const std::uint64_t v = scalar(in.args[0], first);
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane)) write_scalar(in.dst, lane, v);
      return;
    }
    case Op::load:
    case Op::store:
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane)) memory(in, lane);
      return;
    case Op::buffer_load:
    case Op::buffer_store:
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane)) buffer(in, lane);
      return;
    default:
      for (int lane = 0; lane < kWaveSize; ++lane)
        if (active(lane)) alu(in, lane);
  }
}

void Wave::alu(const Inst& in, int lane) {
  const auto& a = in.args;
  auto u = [&](int i) { return scalar(a[i], lane); };
  auto f = [&](int i) { return as_float(scalar(a[i], lane)); };
  auto put_f = [&](float v) { write_scalar(in.dst, lane, bits_of(v)); };
  switch (in.op) {
    case Op::mov: {
      std::uint32_t scratch[2];
      const std::uint32_t* src = read(a[0], lane, scratch);
      std::memcpy(words(in.dst, lane), src,
                  sizeof(std::uint32_t) * static_cast<std::size_t>(info(in.type).words));
      return;
    }
    case Op::add:
      write_scalar(in.dst, lane, u(0) + u(1));
      return;
    case Op::sub:
      write_scalar(in.dst, lane, u(0) - u(1));
      return;
    case Op::mul:
      write_scalar(in.dst, lane, u(0) * u(1));
      return;
    case Op::and_:
      write_scalar(in.dst, lane, u(0) & u(1));
      return;
    case Op::or_:
      write_scalar(in.dst, lane, u(0) | u(1));
      return;
    case Op::xor_:
      write_scalar(in.dst, lane, u(0) ^ u(1));
      return;
    case Op::shl:
    case Op::lshr:
    case Op::ashr: {
      std::uint64_t amount = u(1);
      if (amount >= 32)
        fail(in, lane,
             "shift amount " + std::to_string(amount) + " is not below 32 (LLVM: poison)");
      std::uint32_t x = static_cast<std::uint32_t>(u(0));
      std::uint32_t r = in.op == Op::shl ? x << amount
                        : in.op == Op::lshr
                            ? x >> amount
                            : static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> amount);
      write_scalar(in.dst, lane, r);
      return;
    }
    case Op::icmp: {
      std::uint64_t x = u(0), y = u(1);
      std::int64_t sx = sign_extend(x, a[0].type), sy = sign_extend(y, a[0].type);
      bool r = false;
      switch (in.cmp) {
        case Cmp::eq:
          r = x == y;
          break;
        case Cmp::ne:
          r = x != y;
          break;
        case Cmp::ult:
          r = x < y;
          break;
        case Cmp::ule:
          r = x <= y;
          break;
        case Cmp::ugt:
          r = x > y;
          break;
        case Cmp::uge:
          r = x >= y;
          break;
        case Cmp::slt:
          r = sx < sy;
          break;
        case Cmp::sle:
          r = sx <= sy;
          break;
        case Cmp::sgt:
          r = sx > sy;
          break;
        case Cmp::sge:
          r = sx >= sy;
          break;
      }
      write_scalar(in.dst, lane, r);
      return;
    }
    case Op::select: {
      std::uint32_t scratch[2];
      const std::uint32_t* src = read(u(0) ? a[1] : a[2], lane, scratch);
      std::memcpy(words(in.dst, lane), src,
                  sizeof(std::uint32_t) * static_cast<std::size_t>(info(in.type).words));
      return;
    }
    case Op::fadd:
      put_f(f(0) + f(1));
      return;
    case Op::fsub:
      put_f(f(0) - f(1));
      return;
    case Op::fmul:
      put_f(f(0) * f(1));
      return;
    case Op::fma:
      put_f(std::fma(f(0), f(1), f(2)));
      return;
    case Op::zext:
      write_scalar(in.dst, lane, u(0));
      return;
    case Op::trunc:
      write_scalar(in.dst, lane, u(0));
      return;
    case Op::sitofp:
      put_f(static_cast<float>(static_cast<std::int32_t>(u(0))));
      return;
    case Op::fptosi:
      write_scalar(in.dst, lane, static_cast<std::uint32_t>(to_i32(f(0))));
      return;
    case Op::f32_to_bf16:
      write_scalar(in.dst, lane, encode_float(f(0), kBF16, Rounding::rn, false));
      return;
    case Op::f32_to_f16:
      write_scalar(in.dst, lane, encode_float(f(0), kF16, Rounding::rn, false));
      return;
    case Op::bf16_to_f32:
      put_f(static_cast<float>(decode_float(static_cast<std::uint32_t>(u(0)), kBF16)));
      return;
    case Op::f16_to_f32:
      put_f(static_cast<float>(decode_float(static_cast<std::uint32_t>(u(0)), kF16)));
      return;
    case Op::bitcast:
      std::memcpy(words(in.dst, lane), words(a[0].reg, lane),
                  sizeof(std::uint32_t) * static_cast<std::size_t>(info(in.type).words));
      return;
    case Op::extract:
    case Op::insert: {
      const TypeInfo& vec = info(a[0].type);
      int bytes = info(vec.element).bytes;
      std::vector<std::uint32_t> v(words(a[0].reg, lane), words(a[0].reg, lane) + vec.words);
      auto* at = reinterpret_cast<std::byte*>(v.data()) + in.imm * bytes;
      if (in.op == Op::extract) {
        std::uint64_t e = 0;
        std::memcpy(&e, at, static_cast<std::size_t>(bytes));
        write_scalar(in.dst, lane, e);
      } else {
        std::uint64_t e = scalar(a[1], lane);
        std::memcpy(at, &e, static_cast<std::size_t>(bytes));
        std::memcpy(words(in.dst, lane), v.data(), v.size() * sizeof(std::uint32_t));
      }
      return;
    }
    case Op::workitem_id:
      write_scalar(in.dst, lane, static_cast<std::uint64_t>(index_ * kWaveSize + lane));
      return;
    case Op::workgroup_id:
      write_scalar(in.dst, lane, group_.id[in.imm]);
      return;
    case Op::param:
      write_scalar(in.dst, lane, group_.args[static_cast<std::size_t>(in.imm)]);
      return;
    case Op::lds_base:
      write_scalar(in.dst, lane, static_cast<std::uint64_t>(in.imm));
      return;
    case Op::ptr_add:
      write_scalar(in.dst, lane, u(0) + u(1));
      return;
    case Op::make_rsrc: {
      std::uint64_t base = u(0);
      std::uint32_t* w = words(in.dst, lane);
      w[0] = static_cast<std::uint32_t>(base);
      w[1] = static_cast<std::uint32_t>(base >> 32) & 0xFFFFu;  // base bits 32-47; stride 0
      w[2] = static_cast<std::uint32_t>(u(1));                  // num_records, in bytes
      w[3] = 0x00020000u;                                       // as the emitter writes it
      return;
    }
    default:
      fail(in, lane, std::string("the simulator has no ALU rule for ") + op_name(in.op));
  }
}

}  // namespace warpforge::sim::amdgpu
