#include "warpforge/sim/amdgpu/wave_simulator.hpp"

#include <algorithm>

#include "warpforge/error.hpp"
#include "wave.hpp"

namespace warpforge::sim::amdgpu {

std::uint64_t f32_arg(float v) {
  return __builtin_bit_cast(std::uint32_t, v);
}

namespace {

// LDS starts as this byte, so that reading before writing shows.
constexpr std::byte kLdsPoison{0xCD};

void check_args(const KernelIR& kernel, const Args& args, GlobalMemory& memory) {
  if (args.size() != kernel.params.size())
    throw SimError("amdgpu kernel '" + kernel.name + "': " + std::to_string(args.size()) +
                   " arguments for " + std::to_string(kernel.params.size()) + " parameters");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param& p = kernel.params[i];
    if (p.type != Type::ptr_global && args[i] > 0xFFFFFFFFull)
      throw SimError("amdgpu kernel '" + kernel.name + "': argument " + std::to_string(i) + " (" +
                     p.name + ", " + type_name(p.type) + ") = " + std::to_string(args[i]) +
                     " does not fit in 32 bits");
    if (p.type == Type::ptr_global && args[i] != 0 && !memory.find(args[i], 1))
      throw SimError("amdgpu kernel '" + kernel.name + "': argument " + std::to_string(i) + " (" +
                     p.name + ") = " + hex(args[i]) +
                     " is not inside an allocation: " + memory.describe_nearest(args[i]));
  }
}

void run_workgroup(Workgroup& group) {
  const int size = group.kernel.workgroup_size;
  std::vector<Wave> waves;
  for (int w = 0; w * kWaveSize < size; ++w)
    waves.emplace_back(group, w, std::min(kWaveSize, size - w * kWaveSize));
  for (;;) {
    for (auto& w : waves) w.run_until_barrier();
    // Waves that have ended do not hold a barrier back (s_barrier counts the
    // workgroup's live waves).
    bool waiting = false;
    for (auto& w : waves) {
      waiting = waiting || w.at_barrier();
      w.leave_barrier();
    }
    if (!waiting) return;
  }
}

}  // namespace

void run(const KernelIR& kernel, Grid grid, const Args& args, GlobalMemory& memory) {
  check_args(kernel, args, memory);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw SimError("amdgpu kernel '" + kernel.name + "': grid (" + std::to_string(grid.x) + "," +
                   std::to_string(grid.y) + "," + std::to_string(grid.z) +
                   ") is empty; every dimension must be at least 1");
  const std::vector<Step> program = flatten(kernel.body);
  for (std::uint32_t z = 0; z < grid.z; ++z)
    for (std::uint32_t y = 0; y < grid.y; ++y)
      for (std::uint32_t x = 0; x < grid.x; ++x) {
        Workgroup group{kernel, program,   args,
                        memory, {x, y, z}, std::vector<std::byte>(kernel.lds_bytes, kLdsPoison)};
        run_workgroup(group);
      }
}

}  // namespace warpforge::sim::amdgpu
