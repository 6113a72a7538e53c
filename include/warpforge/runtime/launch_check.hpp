// The checks every launch passes before anything reaches a backend, the same
// for every backend: the kernel exists, the launch configuration fits the
// kernel's directives and the device's limits, and each argument fits its
// .param declaration. Each refusal is a RuntimeError naming the kernel, the
// parameter or setting, and the value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/kernel_arg.hpp"

namespace warpforge::runtime {

// The .entry called `name`; the refusal lists the module's entries.
const ptx::Function& find_kernel(const ptx::Module& module, const std::string& name);

// Bytes of statically declared shared memory the kernel uses: the sized
// .shared variables of its body and the module-scope ones it names.
std::int64_t static_shared_bytes(const ptx::Module& module, const ptx::Function& kernel);

// Grid and block extents (CUDA C++ Programming Guide, "Compute Capabilities":
// grid x < 2^31, y and z <= 65535; block x, y <= 1024, z <= 64 and at most
// max_threads_per_block threads), the kernel's .reqntid / .maxntid, shared
// memory (static + dynamic) against the device's opt-in limit per block, and
// clusters: compute capability 9.0 or newer, dimensions dividing the grid, at
// most 8 CTAs (the portable cluster size). `static_shared` is
// static_shared_bytes() of the kernel, computed once by the caller.
void check_launch_config(const ptx::Function& kernel, std::int64_t static_shared, const LaunchConfig& config,
                         const DeviceProperties& device);

// Where each parameter's bytes sit in the kernel's parameter block: in
// order, each at its .align (else its element's size), as the CUDA ABI and
// the simulator's .param space lay them out. Computed once per kernel.
struct ParamLayout {
  std::vector<std::uint32_t> offsets, sizes;
  std::vector<std::uint8_t> accepts;  // per parameter, a bit per Arg::Kind it takes of its size
  std::uint32_t bytes = 0;  // the whole block
  std::uint32_t align = 1;  // the largest parameter alignment
};
ParamLayout param_layout(const ptx::Function& kernel);

// Checks the arguments against the kernel's parameters and writes argument
// i's bytes to out + layout.offsets[i] (`out` holds layout.bytes):
// - the count matches;
// - a byte-array or vector parameter (.param .align 64 .b8 tmap[128]) takes
//   Arg::bytes of exactly its size;
// - a `.ptr` parameter takes a non-null pointer, aligned as its `.align N`;
// - a 64-bit integer parameter takes a non-null pointer or a 64-bit integer
//   (pass std::uint64_t{0} for a deliberate null);
// - other integer parameters take an integer of the same width, .f32 / .f64 a
//   float / double, .bN any value of N bits, and any parameter the raw bytes
//   of its size.
void pack_arguments(const ptx::Function& kernel, const ParamLayout& layout, std::span<const Arg> args,
                    std::byte* out);

}  // namespace warpforge::runtime
