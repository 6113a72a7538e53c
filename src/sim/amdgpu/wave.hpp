// One wave64 of a workgroup: its VGPR-like register file (every register
// holds a value per lane), exec mask, program counter and the mask stack of
// the ifs and loops it is inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/sim/amdgpu/wave_simulator.hpp"
#include "wave_program.hpp"

namespace warpforge::sim::amdgpu {

// The IR's names, which the simulator's own (PTX) Inst and Op would hide.
using warpforge::amdgpu::Cmp;
using warpforge::amdgpu::info;
using warpforge::amdgpu::Inst;
using warpforge::amdgpu::KernelIR;
using warpforge::amdgpu::Mfma;
using warpforge::amdgpu::MfmaInfo;
using warpforge::amdgpu::Op;
using warpforge::amdgpu::op_name;
using warpforge::amdgpu::Operand;
using warpforge::amdgpu::Param;
using warpforge::amdgpu::to_string;
using warpforge::amdgpu::Type;
using warpforge::amdgpu::type_name;
using warpforge::amdgpu::TypeInfo;

inline constexpr int kWaveSize = 64;  // CDNA waves are 64 lanes (AMD CDNA3 ISA, "Wavefronts")

// What the waves of one workgroup share.
struct Workgroup {
  const warpforge::amdgpu::KernelIR& kernel;
  const std::vector<Step>& program;
  const Args& args;
  GlobalMemory& memory;
  std::uint32_t id[3];
  std::vector<std::byte> lds;
};

class Wave {
 public:
  Wave(Workgroup& group, int index, int live_lanes);

  // Runs until the wave ends or reaches a barrier (with some lane active).
  void run_until_barrier();
  bool done() const { return pc_ >= group_.program.size(); }
  bool at_barrier() const { return at_barrier_; }
  void leave_barrier() { at_barrier_ = false; }

 private:
  struct Frame {
    std::uint64_t saved_exec;
    std::uint64_t taken;  // if: the lanes that took the then-branch
  };

  bool active(int lane) const { return (exec_ >> lane) & 1u; }
  std::uint32_t* words(int reg, int lane);
  // The operand's words for a lane (an immediate in scratch).
  const std::uint32_t* read(const Operand& o, int lane, std::uint32_t* scratch);
  std::uint64_t scalar(const Operand& o, int lane);  // i1 / i16 / i32 / i64 / pointer
  void write_scalar(int reg, int lane, std::uint64_t v);
  std::uint64_t lane_mask(const Operand& cond);

  void step();
  void execute(const Inst& in);
  void alu(const Inst& in, int lane);
  void memory(const Inst& in, int lane);
  void buffer(const Inst& in, int lane);
  void mfma(const Inst& in);
  std::byte* global_bytes(const Inst& in, int lane, std::uint64_t address, int bytes,
                          const char* what);
  [[noreturn]] void fail(const Inst& in, int lane, const std::string& what) const;

  Workgroup& group_;
  int index_;
  std::size_t pc_ = 0;
  std::uint64_t exec_;
  std::vector<Frame> stack_;
  bool at_barrier_ = false;
  std::vector<std::vector<std::uint32_t>> regs_;  // [reg][lane * words + w]
};

}  // namespace warpforge::sim::amdgpu
