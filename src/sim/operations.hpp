// Internal: for each operation the simulator runs (program.hpp's Op), who
// runs it and how many sources it reads: the one list of them
// (operations.cpp), which the scheduler dispatches on (warp_scheduler.cpp),
// the float executor reads its operand count from, and the decoder's checks
// read whether the instruction must name a type.
#pragma once

#include <cstdint>

#include "program.hpp"

namespace warpforge::sim {

enum class Runner : std::uint8_t {
  none,              // not an operation the simulator runs (a refused opcode)
  scheduler,         // control flow and barriers: the scheduler moves the lanes itself
  warp,              // every lane of the warp's members arrives, then it runs (collectives)
  warpgroup,         // every thread of a warpgroup arrives (wgmma, setmaxnreg)
  integer,           // exec_integer: integer and bit arithmetic (mov: a bit copy of any type)
  integer_or_float,  // exec_float for float types, else exec_integer
  float_function,    // exec_float: rcp, sqrt and the .approx functions
  compare,           // exec_compare: setp, selp
  convert,           // exec_convert
  memory,            // exec_memory: ld, st, cvta, mapa
  atomic,            // exec_atomic
  async_copy,        // exec_async_copy: cp.async and its groups
  mbarrier,          // exec_mbarrier (the scheduler parks try_wait's lanes)
  lane_mask,         // exec_collective: activemask
  tensormap,         // exec_tensormap: tensormap.replace, tensormap.cp_fenceproxy
  tensor_copy,       // exec_tensor_copy
  bulk_copy,         // exec_bulk_copy
  bulk_group,        // exec_bulk_group
  tcgen05,           // exec_tcgen05: the single-thread tcgen05 operations
  vprintf,           // exec_vprintf
  frame_copy,        // exec_frame_copy
  nothing,           // fences and hints: every access here is already ordered
};

struct Operation {
  Runner runner = Runner::none;
  std::uint8_t sources = 0;  // value operands after the destination, where fixed
};

const Operation& operation(Op op);

// Arithmetic, logic, comparison and conversion name their type.
inline bool needs_type(Op op) {
  const Runner r = operation(op).runner;
  return r == Runner::integer || r == Runner::integer_or_float || r == Runner::float_function ||
         r == Runner::compare || r == Runner::convert;
}

}  // namespace warpforge::sim
