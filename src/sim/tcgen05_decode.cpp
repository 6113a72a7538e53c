#include "tcgen05_decode.hpp"

#include <algorithm>
#include <utility>

namespace warpforge::sim {

namespace {

bool take(std::vector<std::string>& mods, const std::string& m) {
  auto it = std::find(mods.begin(), mods.end(), m);
  if (it == mods.end()) return false;
  mods.erase(it);
  return true;
}

template <class E>
bool take_one_of(std::vector<std::string>& mods,
                 const std::vector<std::pair<std::string, E>>& table, E& out) {
  for (const auto& [name, value] : table)
    if (take(mods, name)) {
      out = value;
      return true;
    }
  return false;
}

}  // namespace

std::string decode_tcgen05(const ptx::Instruction& in, Inst& d, std::vector<std::string>& mods) {
  static const std::vector<std::pair<std::string, Tcgen05Op>> kOps = {
      {"alloc", Tcgen05Op::alloc},
      {"dealloc", Tcgen05Op::dealloc},
      {"relinquish_alloc_permit", Tcgen05Op::relinquish},
      {"ld", Tcgen05Op::ld},
      {"st", Tcgen05Op::st},
      {"wait::ld", Tcgen05Op::wait},
      {"wait::st", Tcgen05Op::wait},
      {"mma", Tcgen05Op::mma},
      {"cp", Tcgen05Op::cp},
      {"shift", Tcgen05Op::shift},
      {"commit", Tcgen05Op::commit},
      {"fence::before_thread_sync", Tcgen05Op::fence},
      {"fence::after_thread_sync", Tcgen05Op::fence}};
  Tcgen05Op op;
  if (!take_one_of(mods, kOps, op)) return "this tcgen05 instruction is not simulated";
  d.mode = static_cast<std::uint8_t>(op);
  const bool sync = op == Tcgen05Op::alloc || op == Tcgen05Op::dealloc ||
                    op == Tcgen05Op::relinquish || op == Tcgen05Op::ld || op == Tcgen05Op::st ||
                    op == Tcgen05Op::wait;
  d.op = sync ? Op::tcgen05_sync : Op::tcgen05;
  d.cta_pair = take(mods, "cta_group::2");
  take(mods, "cta_group::1");
  take(mods, "sync");
  take(mods, "aligned");
  switch (op) {
    case Tcgen05Op::mma: {
      static const std::vector<std::pair<std::string, Tcgen05Kind>> kKinds = {
          {"kind::f16", Tcgen05Kind::f16},       {"kind::tf32", Tcgen05Kind::tf32},
          {"kind::f8f6f4", Tcgen05Kind::f8f6f4}, {"kind::mxf8f6f4", Tcgen05Kind::mxf8f6f4},
          {"kind::mxf4", Tcgen05Kind::mxf4},     {"kind::mxf4nvf4", Tcgen05Kind::mxf4nvf4}};
      if (take(mods, "ws")) return "tcgen05.mma.ws (the weight-stationary MMA) is not simulated";
      if (take(mods, "sp")) return "tcgen05.mma.sp (structurally sparse A) is not simulated";
      Tcgen05Kind kind;
      if (!take_one_of(mods, kKinds, kind))
        return "tcgen05.mma kinds simulated: f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4";
      d.vec = static_cast<std::uint8_t>(kind);
      if (take(mods, "block_scale")) {
        static const std::vector<std::pair<std::string, std::uint16_t>> kVecs = {
            {"scale_vec::1X", 1}, {"scale_vec::2X", 2}, {"scale_vec::4X", 4}};
        if (!take_one_of(mods, kVecs, d.extent))
          return ".block_scale without .scale_vec::1X/2X/4X is not simulated";
      }
      // A in tensor memory is an address operand [a]; a descriptor is a register.
      d.trans = in.operands.size() > 1 && in.operands[1].kind == ptx::Operand::Kind::address;
      return "";
    }
    case Tcgen05Op::ld:
    case Tcgen05Op::st: {
      static const std::vector<std::pair<std::string, Tcgen05Shape>> kShapes = {
          {"32x32b", Tcgen05Shape::lanes32_bits32},
          {"16x64b", Tcgen05Shape::lanes16_bits64},
          {"16x128b", Tcgen05Shape::lanes16_bits128},
          {"16x256b", Tcgen05Shape::lanes16_bits256}};
      Tcgen05Shape shape;
      if (!take_one_of(mods, kShapes, shape))
        return "tcgen05.ld/st shapes simulated: 32x32b, 16x64b, 16x128b, 16x256b";
      if (take(mods, "pack::16b") || take(mods, "unpack::16b"))
        return "tcgen05.ld.pack::16b and tcgen05.st.unpack::16b (two 16-bit columns per register) "
               "are not "
               "simulated";
      d.vec = static_cast<std::uint8_t>(shape);
      for (int num = 1; num <= 128; num *= 2)
        if (take(mods, "x" + std::to_string(num))) d.extent = static_cast<std::uint16_t>(num);
      if (d.extent == 0) return "tcgen05.ld/st needs .num (.x1 .. .x128)";
      return "";
    }
    case Tcgen05Op::cp: {
      static const std::vector<std::pair<std::string, Tcgen05CopyShape>> kShapes = {
          {"128x256b", Tcgen05CopyShape::rows128_bits256},
          {"4x256b", Tcgen05CopyShape::rows4_bits256},
          {"128x128b", Tcgen05CopyShape::rows128_bits128},
          {"32x128b", Tcgen05CopyShape::rows32_bits128_warpx4}};
      Tcgen05CopyShape shape;
      if (take(mods, "64x128b")) {
        if (take(mods, "warpx2::02_13"))
          shape = Tcgen05CopyShape::rows64_bits128_warpx2_02_13;
        else if (take(mods, "warpx2::01_23"))
          shape = Tcgen05CopyShape::rows64_bits128_warpx2_01_23;
        else
          return "tcgen05.cp.64x128b needs .warpx2::02_13 or .warpx2::01_23";
      } else if (!take_one_of(mods, kShapes, shape)) {
        return "tcgen05.cp shapes simulated: 128x256b, 4x256b, 128x128b, 64x128b.warpx2, "
               "32x128b.warpx4";
      }
      if (shape == Tcgen05CopyShape::rows32_bits128_warpx4 && !take(mods, "warpx4"))
        return "tcgen05.cp.32x128b needs .warpx4";
      d.vec = static_cast<std::uint8_t>(shape);
      return "";
    }
    case Tcgen05Op::shift:
      if (!take(mods, "down")) return "tcgen05.shift takes .down";
      return "";
    case Tcgen05Op::commit:
      if (!take(mods, "mbarrier::arrive::one"))
        return "tcgen05.commit completes through .mbarrier::arrive::one";
      d.multicast = take(mods, "multicast::cluster");
      return "";
    default:
      return "";
  }
}

bool names_cta_group(const Inst& d) {
  if (d.op != Op::tcgen05 && d.op != Op::tcgen05_sync) return false;
  switch (static_cast<Tcgen05Op>(d.mode)) {
    case Tcgen05Op::ld:
    case Tcgen05Op::st:
    case Tcgen05Op::wait:
    case Tcgen05Op::fence:
      return false;
    default:
      return true;
  }
}

std::size_t mixed_cta_group(const std::vector<Inst>& code, std::string& why) {
  const Inst* first = nullptr;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!names_cta_group(code[i])) continue;
    if (!first) {
      first = &code[i];
    } else if (code[i].cta_pair != first->cta_pair) {
      why = std::string(".cta_group::") + (code[i].cta_pair ? "2" : "1") +
            " here and ::" + (first->cta_pair ? "2" : "1") + " at PTX line " +
            std::to_string(first->line) + " (" + first->text +
            "); every tcgen05 instruction of a kernel names the same .cta_group (PTX ISA "
            "9.7.16, tcgen05.alloc)";
      return i;
    }
  }
  return code.size();
}

std::string validate_tcgen05(const Inst& d) {
  const auto op = static_cast<Tcgen05Op>(d.mode);
  auto count = [&](std::size_t n) {
    return d.ops.size() == n
               ? std::string()
               : "takes " + std::to_string(n) + " operands, not " + std::to_string(d.ops.size());
  };
  switch (op) {
    case Tcgen05Op::alloc:
    case Tcgen05Op::dealloc:
      return count(2);
    case Tcgen05Op::relinquish:
    case Tcgen05Op::wait:
    case Tcgen05Op::fence:
      return count(0);
    case Tcgen05Op::ld:
    case Tcgen05Op::st: {
      if (auto why = count(2); !why.empty()) return why;
      static constexpr int kRegsPerRepeat[] = {1, 1, 2, 4};
      const std::size_t regs = static_cast<std::size_t>(kRegsPerRepeat[d.vec]) * d.extent;
      const auto& data = d.ops[op == Tcgen05Op::ld ? 0 : 1];
      if (data.size() != regs)
        return "the register vector has " + std::to_string(data.size()) +
               " registers; the shape and .num need " + std::to_string(regs);
      for (const Arg& a : data)
        if (a.kind != Arg::Kind::reg) return "the register vector holds only registers";
      return "";
    }
    case Tcgen05Op::mma:
      // [d], a, b, idesc, [sfa], [sfb] (block-scaled), enable_input_d
      return count(d.extent ? 7 : 5);
    case Tcgen05Op::cp:
      return count(2);
    case Tcgen05Op::shift:
      return count(1);
    case Tcgen05Op::commit:
      return count(d.multicast ? 2 : 1);
  }
  return "";
}

}  // namespace warpforge::sim
