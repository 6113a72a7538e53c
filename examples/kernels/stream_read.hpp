// A memory-bound example, and the floor of any kernel that reads a buffer
// once: `stream_read(src, vectors, out)` reads `vectors` 16-byte vectors of
// src (16-byte aligned), each thread four at a time a grid stride apart
// (then one at a time for the rest), and folds them by XOR into one word per
// warp, out[global warp index] (grid x block / 32 words; the block a
// multiple of 32), so that no load can be left out. bench_gemm's sweep times
// it beside GEMMs that stream the same bytes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::examples {

inline constexpr const char* kStreamReadKernel = "stream_read";

ptx::Module stream_read_kernel(ptx::Target target);

// Each warp's fold, as the kernel computes it, of `words` (4 per vector)
// read by `threads` threads in warps of 32.
std::vector<std::uint32_t> stream_read_reference(const std::vector<std::uint32_t>& words, std::uint32_t threads);

}  // namespace warpforge::examples
