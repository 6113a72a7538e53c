// Several devices of one process used at once, as JAX and multi-threaded
// serving use them (one host thread per GPU, and sometimes several): each
// thread builds its own GemmAmax on its device, compiles it (threads of one
// device compiling the same kernel at the same time) and runs it, and every
// result is checked against the reference. Run on simulators in CI and on
// GPUs where a machine has two (tests/gpu).
#pragma once

#include <string>
#include <vector>

#include "gemm_amax_test_support.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

struct AtOnce {
  int threads_per_device = 2;
  int rounds = 2;       // runs of each thread's op
  GemmAmaxCase shape;   // each thread's problem: this shape, a format of its own
};

// Every failure, named by device and thread (empty: all passed).
std::vector<std::string> run_on_devices_at_once(const std::vector<runtime::Device>& devices, const AtOnce& plan);

// What GemmAmax::execute says when the op was built on `built` and run on
// tensors of `other` (the problem otherwise the same); empty if it ran.
std::string refusal_across_devices(const runtime::Device& built, const runtime::Device& other);

}  // namespace warpforge::ops::testing
