// The multifunction unit's sweep (issue 45): the f32 .approx forms
// (rcp, sqrt, rsqrt, ex2, lg2, tanh, of which the H100's SASS MUFU computes
// the core) run over their structurally complete input domains, every mantissa
// of one or two binades, where the recorded families (float_approx) have
// 1,024 random cases; the outputs are stored as their difference in ulps
// from the correctly rounded function, the data from which the units'
// algorithms, or a table of their corrections, are found.
//
//   warpforge-difftest mufu --device cuda|sim --out DIR [--thin N] [--function NAME]...
//
// DIR receives one folder per function (rcp, sqrt, rsqrt, ex2, lg2, tanh, div;
// with --function, only those),
// each holding sets.txt (one line per input set: its name, the PTX form and
// the rule of its inputs) and .npy arrays per set:
//   <set>.d.npy   int8, per input: GPU result − correctly rounded result in
//                 ulps (as ordered integers of the f32 bits, -0 one below +0;
//                 NaN and NaN agree); -128 where that is not in [-127, 127] or only one
//                 is a NaN, the GPU's bits then in
//   <set>.xi.npy, <set>.xb.npy   uint32: those inputs' indices and the GPU's bits;
//   <set>.a.npy [, <set>.b.npy]  uint32: the inputs, where the rule is "listed".
// Rules: "bits FIRST COUNT" (the f32 bit patterns FIRST, FIRST+1, ...),
// "grid K0 COUNT SHIFT" (x = k·2^SHIFT for k = K0, K0+1, ...), "listed".
// The correctly rounded results are the host's long double functions
// rounded to f32 (division, square root exactly; 1/sqrt checked against
// its midpoints exactly), with the .ftz forms' inputs and results flushed.
// --thin N keeps every Nth input of each set (the simulator's self-test).
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "warpforge/runtime/device.hpp"

namespace warpforge::difftest {

// Runs every set (of the `functions` named; all where it is empty) on
// `device` and writes DIR as above; prints one line per set. Throws
// warpforge::Error for a function it has no sets of.
void mufu_sweep(const runtime::Device& device, const std::filesystem::path& out,
                std::uint32_t thin, const std::set<std::string>& functions = {});

// The correctly rounded f32 result of `opcode` (one of the sweep's forms,
// "rcp.approx.ftz.f32", "div.full.f32", ...) on a (and b), as f32 bits.
std::uint32_t correctly_rounded_f32(const std::string& opcode, std::uint32_t a,
                                    std::uint32_t b = 0);

}  // namespace warpforge::difftest
