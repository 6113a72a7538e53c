// Attention's CPU reference, in fp64, with the error bound the kernels are
// held to (tests, the CLI's checks and the benchmark's). Inputs are host
// copies of the views (gemm_reference.hpp's HostTensor); outputs come in one
// canonical order whatever the layout:
//   O, dQ: ((row, head_q), d)   lse: (row, head_q)   dK, dV: ((row_k, head_kv), d)
// where row counts the query rows of every sequence one after another
// (dense: b·seq_q + i; varlen: the packed row) and row_k likewise the keys.
// attention_rows() reads a kernel's output into that order.
//
// The bound (per element; derived for the kernels' arithmetic: products of
// the inputs exact, sums in f32, exp2/lg2 approximate, P and dS rounded to
// the input dtype before their matrix products, outputs rounded once):
//
//   u   = the input dtype's unit roundoff (bf16 2^-8, f16 2^-11), also the
//         outputs' (O, dQ, dK, dV are of the input dtype)
//   eps = 2^-23: an f32 sum of n terms is within n·eps·Σ|term| (rounding to
//         nearest gives half of that; tensor cores may truncate, hence 2^-23)
//   Per row i, the error in s_ij - m_i (the exponent, natural units) is at
//   most δ_i = max_j [scale·hd·eps·Σ_d|q_id·k_jd| + 2·eps·(|s_ij| + |m_i|)]
//   + 2^-21 (ex2.approx.f32 measured within 2 ulps on an H100, docs/SIMULATOR.md).
//   So each normalised P_ij is within P_ij·(2δ_i + n_k·eps) of the truth,
//   and
//     |ΔO_id|  <= (u + 2δ_i + 2·n_k·eps)·Σ_j P_ij|v_jd| + u·|O_id|
//     |Δlse_i| <= δ_i + n_k·eps + 2·eps·|lse_i| + 2^-18·log2(e)·|lse_i - m_i| + 2^-21
//   (lg2.approx.f32 measured within 20 ulps on an H100, docs/SIMULATOR.md).
//   The backward recomputes P from the kernel's lse (ρ_i = δ_i + |Δlse_i|),
//   reads the kernel's O (rounded) for D_i = Σ_d dO_id·O_id, and rounds P
//   and dS to the input dtype before dV = Pᵀ·dO, dQ = scale·dS·K and
//   dK = scale·dSᵀ·Q:
//     |ΔdV_jd| <= Σ_i (u + ρ_i + n_q·eps)·P_ij|dO_id| + u·|dV_jd|
//     |ΔdS_ij| <= P_ij·(hd·eps·Σ_d|dO_id·v_jd| + |ΔD_i| + ρ_i·|dP_ij - D_i|) + u·|dS_ij|
//       with |ΔD_i| <= Σ_d |dO_id|·|ΔO_id| + hd·eps·Σ_d|dO_id·O_id|
//     |ΔdQ_id| <= scale·Σ_j (|ΔdS_ij| + n_k·eps·|dS_ij|)·|k_jd| + u·|dQ_id|
//     |ΔdK_jd| <= scale·Σ_i (|ΔdS_ij| + n_q·eps·|dS_ij|)·|q_id| + u·|dK_jd|
//   (grouped-query dK, dV: summed over the group's query heads). The bound
//   held to is twice these first-order terms. A row that sees no key has
//   O = 0, lse = -inf and zero gradients, exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/ops/attention.hpp"
#include "warpforge/ops/gemm_reference.hpp"

namespace warpforge::ops {

struct AttentionReference {
  std::vector<double> o, o_bound, lse, lse_bound;           // forward
  std::vector<double> dq, dq_bound, dk, dk_bound, dv, dv_bound;  // with dO
};

// The forward (and with d_o the backward) of the problem the views describe:
// q, k, v (and d_o) as attention.hpp takes them, dense or varlen (then the
// host copies of cu_seqlens_q/_k); options as the op's. The gradients'
// bound counts the forward's bound on the O and lse a backward kernel reads;
// given `o_read` (the O the backward kernel reads, canonical order: a
// forward kernel's output), D = rowsum(dO∘O) is taken from it as the kernel
// takes it, and the gradients are those of that computation (D's error term
// then drops from their bound, which holds the backward kernel's own
// arithmetic tighter; the forward's O is checked against its own bound).
AttentionReference attention_reference(const HostTensor& q, const HostTensor& k,
                                       const HostTensor& v, const HostTensor* d_o,
                                       const AttentionOptions& options,
                                       const std::vector<std::int32_t>* cu_seqlens_q = nullptr,
                                       const std::vector<std::int32_t>* cu_seqlens_k = nullptr,
                                       const std::vector<double>* o_read = nullptr);

// A kernel's output in the canonical order: Q/O-like (batch, heads, seq, d)
// or (total, heads, d) tensors, and lse (batch, heads, seq) or (heads, total).
std::vector<double> attention_rows(const HostTensor& t);

// got against want within bound, element by element. A NaN in got fails;
// an infinite want (lse of a row that sees no key) must be matched exactly.
struct AttentionCheck {
  std::int64_t failures = 0;
  double worst = 0;           // max |got - want| / bound
  std::int64_t worst_at = -1;
  std::string describe() const;  // "0 of 76800 outside the bound, worst 0.13 of it at 5121"
};
AttentionCheck check_within_bound(const std::vector<double>& got, const std::vector<double>& want,
                                  const std::vector<double>& bound);

}  // namespace warpforge::ops
