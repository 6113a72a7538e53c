// warp::gemm: D = alpha·A·B + beta·C at warp scope, lowered to an unrolled
// nest of mma.sync atoms. Candidates, in priority order: m16n8k16, then
// m16n8k8 (PTX ISA 9.7.14.5.14). Each checks the operands' shapes,
// element types, register layouts and alpha/beta; when none fits the error
// lists every candidate's reasons.
//
// A is M×K, B is K×N, C and D are M×N (f32); A and B are f16 or bf16 of one
// type. alpha must be 1 and beta 0 or 1 (mma.sync has no scaling). With beta
// 0, C is not read and may be omitted.
#pragma once

#include <optional>
#include <string>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::tile::warp {

// Returns the name of the candidate that was used.
std::string gemm(dsl::Kernel& k, const RegisterTile& d, const RegisterTile& a, const RegisterTile& b,
                 const std::optional<RegisterTile>& c, float alpha = 1.0f, float beta = 0.0f);

}  // namespace warpforge::tile::warp
