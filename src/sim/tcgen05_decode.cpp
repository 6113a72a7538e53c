#include "tcgen05_decode.hpp"

#include <initializer_list>
#include <utility>

#include "decode_forms.hpp"

namespace warpforge::sim {

namespace {

using M = ptx::Mod;

template <class E>
bool take_one_of(std::vector<M>& rest, std::initializer_list<std::pair<M, E>> table, E& out) {
  for (const auto& [word, value] : table)
    if (take(rest, word)) {
      out = value;
      return true;
    }
  return false;
}

}  // namespace

std::string decode_tcgen05(const ptx::Instruction& in, Inst& d, std::vector<M>& rest) {
  const auto op = static_cast<Tcgen05Op>(d.mode);
  d.cta_pair = take(rest, M::cta_group_2);
  take(rest, M::cta_group_1);
  switch (op) {
    case Tcgen05Op::mma: {
      if (take(rest, M::ws)) return "tcgen05.mma.ws (the weight-stationary MMA) is not simulated";
      if (take(rest, M::sp)) return "tcgen05.mma.sp (structurally sparse A) is not simulated";
      Tcgen05Kind kind;
      if (!take_one_of(rest,
                       {std::pair{M::kind_f16, Tcgen05Kind::f16}, {M::kind_tf32, Tcgen05Kind::tf32},
                        {M::kind_f8f6f4, Tcgen05Kind::f8f6f4},
                        {M::kind_mxf8f6f4, Tcgen05Kind::mxf8f6f4},
                        {M::kind_mxf4, Tcgen05Kind::mxf4},
                        {M::kind_mxf4nvf4, Tcgen05Kind::mxf4nvf4}},
                       kind))
        return "tcgen05.mma kinds simulated: f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4";
      d.vec = static_cast<std::uint8_t>(kind);
      if (take(rest, M::block_scale) &&
          !take_one_of(rest,
                       {std::pair{M::scale_vec_1X, std::uint16_t{1}}, {M::scale_vec_2X, 2},
                        {M::scale_vec_4X, 4}},
                       d.extent))
        return ".block_scale without .scale_vec::1X/2X/4X is not simulated";
      // A in tensor memory is an address operand [a]; a descriptor is a register.
      d.trans = in.operands.size() > 1 && in.operands[1].kind == ptx::Operand::Kind::address;
      return "";
    }
    case Tcgen05Op::ld:
    case Tcgen05Op::st: {
      Tcgen05Shape shape;
      if (!take_one_of(rest,
                       {std::pair{M::_32x32b, Tcgen05Shape::lanes32_bits32},
                        {M::_16x64b, Tcgen05Shape::lanes16_bits64},
                        {M::_16x128b, Tcgen05Shape::lanes16_bits128},
                        {M::_16x256b, Tcgen05Shape::lanes16_bits256}},
                       shape))
        return "tcgen05.ld/st shapes simulated: 32x32b, 16x64b, 16x128b, 16x256b";
      if (take(rest, M::pack_16b) || take(rest, M::unpack_16b))
        return "tcgen05.ld.pack::16b and tcgen05.st.unpack::16b (two 16-bit columns per register) "
               "are not simulated";
      d.vec = static_cast<std::uint8_t>(shape);
      for (M num : {M::x1, M::x2, M::x4, M::x8, M::x16, M::x32, M::x64, M::x128})
        if (take(rest, num))
          d.extent = ptx::meaning(num, {ptx::ModifierClass::matrix_count})->value;
      if (d.extent == 0) return "tcgen05.ld/st needs .num (.x1 .. .x128)";
      return "";
    }
    case Tcgen05Op::cp: {
      Tcgen05CopyShape shape;
      if (take(rest, M::_64x128b)) {
        if (!take_one_of(rest,
                         {std::pair{M::warpx2_02_13, Tcgen05CopyShape::rows64_bits128_warpx2_02_13},
                          {M::warpx2_01_23, Tcgen05CopyShape::rows64_bits128_warpx2_01_23}},
                         shape))
          return "tcgen05.cp.64x128b needs .warpx2::02_13 or .warpx2::01_23";
      } else if (!take_one_of(rest,
                              {std::pair{M::_128x256b, Tcgen05CopyShape::rows128_bits256},
                               {M::_4x256b, Tcgen05CopyShape::rows4_bits256},
                               {M::_128x128b, Tcgen05CopyShape::rows128_bits128},
                               {M::_32x128b, Tcgen05CopyShape::rows32_bits128_warpx4}},
                              shape)) {
        return "tcgen05.cp shapes simulated: 128x256b, 4x256b, 128x128b, 64x128b.warpx2, "
               "32x128b.warpx4";
      }
      if (shape == Tcgen05CopyShape::rows32_bits128_warpx4 && !take(rest, M::warpx4))
        return "tcgen05.cp.32x128b needs .warpx4";
      d.vec = static_cast<std::uint8_t>(shape);
      return "";
    }
    case Tcgen05Op::shift:
      if (!take(rest, M::down)) return "tcgen05.shift takes .down";
      return "";
    case Tcgen05Op::commit:
      if (!take(rest, M::mbarrier_arrive_one))
        return "tcgen05.commit completes through .mbarrier::arrive::one";
      d.multicast = take(rest, M::multicast_cluster);
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
