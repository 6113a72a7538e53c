// The fp64 reference of attention and its gradients, with the bound of
// attention_reference.hpp computed beside every value.
#include "warpforge/ops/attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attention_problem.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops {
namespace {

constexpr double eps = 0x1p-23;
constexpr double approx = 0x1p-21;  // ex2/lg2 .approx
constexpr double inf = std::numeric_limits<double>::infinity();

struct Sequence {
  std::int64_t q0, nq, k0, nk;  // first canonical row and length, of Q and of K
};

// A head's rows of a Q/K/V-like tensor, as a row-major (rows x head_dim) array.
std::vector<double> head_rows(const HostTensor& t, bool varlen, std::int64_t b, std::int64_t h,
                              std::int64_t row0, std::int64_t rows, std::int64_t hd) {
  std::vector<double> out(static_cast<std::size_t>(rows * hd));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t d = 0; d < hd; ++d)
      out[static_cast<std::size_t>(i * hd + d)] =
          varlen ? t.get({row0 + i, h, d}) : t.get({b, h, i, d});
  return out;
}

double unit_roundoff(runtime::DType t) {
  return t == runtime::DType::f16 ? 0x1p-11 : 0x1p-8;
}

}  // namespace

AttentionReference attention_reference(const HostTensor& q, const HostTensor& k,
                                       const HostTensor& v, const HostTensor* d_o,
                                       const AttentionOptions& options,
                                       const std::vector<std::int32_t>* cu_seqlens_q,
                                       const std::vector<std::int32_t>* cu_seqlens_k,
                                       const std::vector<double>* o_read) {
  const bool varlen = cu_seqlens_q != nullptr;
  if (o_read && o_read->size() != static_cast<std::size_t>(
                    (varlen ? q.shape[0] : q.shape[0] * q.shape[2]) * q.shape[1] * q.shape.back()))
    throw OpsError("attention_reference: o_read holds " + std::to_string(o_read->size()) + " values, not Q's count");
  if (varlen != (cu_seqlens_k != nullptr) || q.shape.size() != (varlen ? 3u : 4u) ||
      k.shape.size() != q.shape.size() || v.shape.size() != q.shape.size())
    throw OpsError("attention_reference: Q, K, V must be rank 4 (dense) or rank 3 with both "
                   "cu_seqlens (varlen)");
  const std::int64_t hq = q.shape[1], hkv = k.shape[1], hd = q.shape.back();
  const std::int64_t group = hq / hkv;
  // The mask and scale as the op reads them.
  AttentionProblem mask;
  mask.window_left = options.window_left;
  mask.window_right = options.causal ? 0 : options.window_right;
  mask.top_left = options.alignment == MaskAlignment::top_left;
  const double scale = options.scale.value_or(1.0 / std::sqrt(double(hd)));
  const double u = unit_roundoff(q.dtype);

  std::vector<Sequence> seqs;
  if (varlen) {
    for (std::size_t b = 0; b + 1 < cu_seqlens_q->size(); ++b)
      seqs.push_back({(*cu_seqlens_q)[b], (*cu_seqlens_q)[b + 1] - (*cu_seqlens_q)[b],
                      (*cu_seqlens_k)[b], (*cu_seqlens_k)[b + 1] - (*cu_seqlens_k)[b]});
  } else {
    const std::int64_t sq = q.shape[2], sk = k.shape[2];
    for (std::int64_t b = 0; b < q.shape[0]; ++b) seqs.push_back({b * sq, sq, b * sk, sk});
  }
  const std::int64_t rows_q = varlen ? q.shape[0] : q.shape[0] * q.shape[2];
  const std::int64_t rows_k = varlen ? k.shape[0] : k.shape[0] * k.shape[2];

  AttentionReference r;
  const auto n_o = static_cast<std::size_t>(rows_q * hq * hd);
  const auto n_kv = static_cast<std::size_t>(rows_k * hkv * hd);
  r.o.assign(n_o, 0), r.o_bound.assign(n_o, 0);
  r.lse.assign(static_cast<std::size_t>(rows_q * hq), -inf);
  r.lse_bound.assign(r.lse.size(), 0);
  if (d_o) {
    r.dq.assign(n_o, 0), r.dq_bound.assign(n_o, 0);
    r.dk.assign(n_kv, 0), r.dk_bound.assign(n_kv, 0);
    r.dv.assign(n_kv, 0), r.dv_bound.assign(n_kv, 0);
  }
  auto at = [&](std::int64_t row, std::int64_t h, std::int64_t heads, std::int64_t d) {
    return static_cast<std::size_t>((row * heads + h) * hd + d);
  };

  for (std::size_t b = 0; b < seqs.size(); ++b) {
    const Sequence& s = seqs[b];
    const auto bi = static_cast<std::int64_t>(b);
    for (std::int64_t h = 0; h < hq; ++h) {
      const std::int64_t kh = h / group;
      const auto Q = head_rows(q, varlen, bi, h, s.q0, s.nq, hd);
      const auto K = head_rows(k, varlen, bi, kh, s.k0, s.nk, hd);
      const auto V = head_rows(v, varlen, bi, kh, s.k0, s.nk, hd);
      std::vector<double> dO;
      if (d_o) dO = head_rows(*d_o, varlen, bi, h, s.q0, s.nq, hd);
      // Per row: P (normalised), its exponent error δ, the lse's bound.
      std::vector<double> P(static_cast<std::size_t>(s.nq * s.nk), 0.0);
      std::vector<double> delta(static_cast<std::size_t>(s.nq), 0.0);
      std::vector<std::int64_t> seen(static_cast<std::size_t>(s.nq), 0);
      for (std::int64_t i = 0; i < s.nq; ++i) {
        std::vector<double> score(static_cast<std::size_t>(s.nk), -inf), size(score.size(), 0);
        double m = -inf;
        for (std::int64_t j = 0; j < s.nk; ++j) {
          if (!mask.visible(i, j, s.nq, s.nk)) continue;
          double dot = 0, mag = 0;
          for (std::int64_t d = 0; d < hd; ++d) {
            dot += Q[i * hd + d] * K[j * hd + d];
            mag += std::abs(Q[i * hd + d] * K[j * hd + d]);
          }
          score[j] = scale * dot, size[j] = mag;
          m = std::max(m, score[j]);
          ++seen[i];
        }
        const std::size_t row = static_cast<std::size_t>((s.q0 + i) * hq + h);
        if (!seen[i]) continue;  // O = 0, lse = -inf, gradients 0: exact
        double l = 0, dl = 0;
        for (std::int64_t j = 0; j < s.nk; ++j) {
          if (score[j] == -inf) continue;
          l += std::exp(score[j] - m);
          dl = std::max(dl, scale * hd * eps * size[j] + 2 * eps * (std::abs(score[j]) + std::abs(m)));
        }
        const double lse = m + std::log(l);
        delta[i] = dl + approx;
        r.lse[row] = lse;
        r.lse_bound[row] = 2 * (delta[i] + seen[i] * eps + 2 * eps * std::abs(lse) +
                                0x1p-18 * std::log2(std::exp(1.0)) * std::abs(lse - m) + approx);
        for (std::int64_t j = 0; j < s.nk; ++j)
          if (score[j] != -inf) P[i * s.nk + j] = std::exp(score[j] - lse);
        for (std::int64_t d = 0; d < hd; ++d) {
          double o = 0, pv = 0;
          for (std::int64_t j = 0; j < s.nk; ++j) {
            o += P[i * s.nk + j] * V[j * hd + d];
            pv += P[i * s.nk + j] * std::abs(V[j * hd + d]);
          }
          r.o[at(s.q0 + i, h, hq, d)] = o;
          r.o_bound[at(s.q0 + i, h, hq, d)] =
              2 * ((u + 2 * delta[i] + 2 * seen[i] * eps) * pv + u * std::abs(o));
        }
      }
      if (!d_o) continue;

      // The backward: dV = Pᵀ·dO, dP = dO·Vᵀ, D = rowsum(dO∘O),
      // dS = P∘(dP - D), dQ = scale·dS·K, dK = scale·dSᵀ·Q.
      std::vector<double> dS(P.size(), 0.0), dS_err(P.size(), 0.0);
      for (std::int64_t i = 0; i < s.nq; ++i) {
        if (!seen[i]) continue;
        const std::size_t row = static_cast<std::size_t>((s.q0 + i) * hq + h);
        const double rho = delta[i] + r.lse_bound[row];
        double D = 0, dD = 0, dO_O = 0;
        for (std::int64_t d = 0; d < hd; ++d) {
          const double o = (o_read ? *o_read : r.o)[at(s.q0 + i, h, hq, d)];
          D += dO[i * hd + d] * o;
          dO_O += std::abs(dO[i * hd + d] * o);
          if (!o_read) dD += std::abs(dO[i * hd + d]) * r.o_bound[at(s.q0 + i, h, hq, d)];
        }
        dD += hd * eps * dO_O;
        for (std::int64_t j = 0; j < s.nk; ++j) {
          const double p = P[i * s.nk + j];
          if (p == 0) continue;
          double dp = 0, mag = 0;
          for (std::int64_t d = 0; d < hd; ++d) {
            dp += dO[i * hd + d] * V[j * hd + d];
            mag += std::abs(dO[i * hd + d] * V[j * hd + d]);
          }
          const double ds = p * (dp - D);
          dS[i * s.nk + j] = ds;
          dS_err[i * s.nk + j] = p * (hd * eps * mag + dD + rho * std::abs(dp - D)) + u * std::abs(ds);
        }
        for (std::int64_t d = 0; d < hd; ++d) {
          double dq = 0, err = 0;
          for (std::int64_t j = 0; j < s.nk; ++j) {
            const double ds = dS[i * s.nk + j];
            dq += ds * K[j * hd + d];
            err += (dS_err[i * s.nk + j] + s.nk * eps * std::abs(ds)) * std::abs(K[j * hd + d]);
          }
          r.dq[at(s.q0 + i, h, hq, d)] = scale * dq;
          r.dq_bound[at(s.q0 + i, h, hq, d)] = 2 * (scale * err + u * std::abs(scale * dq));
        }
      }
      // dK and dV of this head add into its KV head's (the group's sum); their
      // bounds' sum parts likewise, the final rounding's term added below.
      const std::int64_t n_rows = s.nq * group;
      for (std::int64_t j = 0; j < s.nk; ++j)
        for (std::int64_t d = 0; d < hd; ++d) {
          double dk = 0, dk_err = 0, dv = 0, dv_err = 0;
          for (std::int64_t i = 0; i < s.nq; ++i) {
            const double p = P[i * s.nk + j];
            if (p == 0) continue;
            const double ds = dS[i * s.nk + j];
            const double rho = delta[i] + r.lse_bound[static_cast<std::size_t>((s.q0 + i) * hq + h)];
            dk += ds * Q[i * hd + d];
            dk_err += (dS_err[i * s.nk + j] + n_rows * eps * std::abs(ds)) * std::abs(Q[i * hd + d]);
            dv += p * dO[i * hd + d];
            dv_err += (u + rho + n_rows * eps) * p * std::abs(dO[i * hd + d]);
          }
          r.dk[at(s.k0 + j, kh, hkv, d)] += scale * dk;
          r.dk_bound[at(s.k0 + j, kh, hkv, d)] += 2 * scale * dk_err;
          r.dv[at(s.k0 + j, kh, hkv, d)] += dv;
          r.dv_bound[at(s.k0 + j, kh, hkv, d)] += 2 * dv_err;
        }
    }
  }
  for (std::size_t i = 0; i < r.dk.size(); ++i) {
    r.dk_bound[i] += 2 * u * std::abs(r.dk[i]);
    r.dv_bound[i] += 2 * u * std::abs(r.dv[i]);
  }
  return r;
}

std::vector<double> attention_rows(const HostTensor& t) {
  const auto& s = t.shape;
  std::vector<double> out;
  if (s.size() == 4) {  // (batch, heads, seq, d) -> ((b·seq + i, h), d)
    out.resize(static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]));
    for (std::int64_t b = 0; b < s[0]; ++b)
      for (std::int64_t h = 0; h < s[1]; ++h)
        for (std::int64_t i = 0; i < s[2]; ++i)
          for (std::int64_t d = 0; d < s[3]; ++d)
            out[static_cast<std::size_t>(((b * s[2] + i) * s[1] + h) * s[3] + d)] = t.get({b, h, i, d});
  } else if (s.size() == 3 && t.dtype == runtime::DType::f32) {  // lse (batch, heads, seq)
    out.resize(static_cast<std::size_t>(s[0] * s[1] * s[2]));
    for (std::int64_t b = 0; b < s[0]; ++b)
      for (std::int64_t h = 0; h < s[1]; ++h)
        for (std::int64_t i = 0; i < s[2]; ++i)
          out[static_cast<std::size_t>((b * s[2] + i) * s[1] + h)] = t.get({b, h, i});
  } else if (s.size() == 3) {  // (total, heads, d): already in that order
    out.resize(static_cast<std::size_t>(s[0] * s[1] * s[2]));
    for (std::int64_t r = 0; r < s[0]; ++r)
      for (std::int64_t h = 0; h < s[1]; ++h)
        for (std::int64_t d = 0; d < s[2]; ++d)
          out[static_cast<std::size_t>((r * s[1] + h) * s[2] + d)] = t.get({r, h, d});
  } else if (s.size() == 2) {  // lse (heads, total)
    out.resize(static_cast<std::size_t>(s[0] * s[1]));
    for (std::int64_t h = 0; h < s[0]; ++h)
      for (std::int64_t r = 0; r < s[1]; ++r)
        out[static_cast<std::size_t>(r * s[0] + h)] = t.get({h, r});
  } else {
    throw OpsError("attention_rows: a tensor of rank " + std::to_string(s.size()) +
                   "; attention's outputs are of rank 2 to 4");
  }
  return out;
}

AttentionCheck check_within_bound(const std::vector<double>& got, const std::vector<double>& want,
                                  const std::vector<double>& bound) {
  if (got.size() != want.size() || bound.size() != want.size())
    throw OpsError("check_within_bound: " + std::to_string(got.size()) + " values against " +
                   std::to_string(want.size()) + " (bounds " + std::to_string(bound.size()) + ")");
  AttentionCheck c;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double ratio;
    if (std::isnan(got[i]))
      ratio = inf;
    else if (std::isinf(want[i]))
      ratio = got[i] == want[i] ? 0 : inf;
    else {
      const double err = std::abs(got[i] - want[i]);
      ratio = err == 0 ? 0 : bound[i] > 0 ? err / bound[i] : inf;
    }
    if (ratio > 1) ++c.failures;
    if (ratio > c.worst || c.worst_at < 0) c.worst = ratio, c.worst_at = static_cast<std::int64_t>(i);
  }
  return c;
}

std::string AttentionCheck::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "%lld outside the bound, worst %.3g of it at %lld",
                static_cast<long long>(failures), worst, static_cast<long long>(worst_at));
  return text;
}

}  // namespace warpforge::ops
