// The attention problem read off the views and options, with every reason
// it cannot run (each naming the value, the rule and what is accepted).
#include "attention_problem.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// Reads the views in the order the rules name them, appending refusals.
class Reader {
 public:
  Reader(bool varlen, std::vector<std::string>& why) : varlen_(varlen), why_(why) {}

  // A Q/K/V/O-like tensor: dense (batch, heads, seq, head_dim), varlen
  // (total, heads, head_dim). Returns its strides and extents.
  struct Read {
    AttentionStrides strides;
    std::int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
    DType dtype = DType::bf16;
    bool ok = false;
  };
  Read matrix(const char* role, const TensorView& v) {
    Read r;
    r.dtype = v.dtype();
    const int want_rank = varlen_ ? 3 : 4;
    if (v.rank() != want_rank) {
      why_.push_back(std::string(role) + " is " + v.describe() + "; " +
                     (varlen_ ? "varlen attention takes (total, heads, head_dim)"
                              : "attention takes (batch, heads, seq, head_dim)") +
                     ", rank " + std::to_string(want_rank));
      return r;
    }
    const auto& s = v.shape();
    const auto& st = v.strides();
    if (varlen_) {
      r.seq = s[0], r.heads = s[1], r.head_dim = s[2];
      r.strides = {0, st[1], st[0]};
    } else {
      r.batch = s[0], r.heads = s[1], r.seq = s[2], r.head_dim = s[3];
      r.strides = {st[0], st[1], st[2]};
    }
    if (v.dtype() != DType::bf16 && v.dtype() != DType::f16)
      why_.push_back(std::string(role) + " is " + std::string(runtime::name(v.dtype())) +
                     "; attention takes bf16 or f16");
    if (st.back() != 1 && r.head_dim > 1)
      why_.push_back(std::string(role) + "'s head_dim stride is " + std::to_string(st.back()) +
                     "; it must be 1 (head_dim contiguous)");
    for (std::size_t i = 0; i + 1 < st.size(); ++i)
      if (st[i] % 8 != 0 && s[i] > 1)
        why_.push_back(std::string(role) + "'s stride " + std::to_string(st[i]) + " (dimension " +
                       std::to_string(i) + " of " + v.describe() +
                       ") is not a multiple of 8 elements; the kernels move 16-byte pieces");
    if (v.address() % 16 != 0)
      why_.push_back(std::string(role) + " starts at an address that is not 16-byte aligned");
    r.ok = true;
    return r;
  }

  // lse: dense (batch, heads, seq), varlen (heads, total); f32.
  AttentionStrides lse(const TensorView& v, std::int64_t batch, std::int64_t heads,
                       std::int64_t rows) {
    const std::vector<std::int64_t> want =
        varlen_ ? std::vector<std::int64_t>{heads, rows} : std::vector<std::int64_t>{batch, heads, rows};
    if (v.dtype() != DType::f32)
      why_.push_back("lse is " + std::string(runtime::name(v.dtype())) + "; it must be f32");
    if (v.shape() != want) {
      why_.push_back("lse is " + v.describe() + "; it must have shape " + shape_text(want) +
                     (varlen_ ? " (heads_q, total_q)" : " (batch, heads_q, seq_q)"));
      return {};
    }
    if (v.address() % 4 != 0)
      why_.push_back("lse starts at an address that is not 4-byte aligned");
    const auto& st = v.strides();
    return varlen_ ? AttentionStrides{0, st[0], st[1]} : AttentionStrides{st[0], st[1], st[2]};
  }

  // cu_seqlens: i32 (batch + 1).
  std::int64_t cu_seqlens(const char* role, const TensorView& v) {
    if (v.dtype() != DType::i32)
      why_.push_back(std::string(role) + " is " + std::string(runtime::name(v.dtype())) +
                     "; it must be i32");
    if (v.rank() != 1 || v.shape()[0] < 2) {
      why_.push_back(std::string(role) + " is " + v.describe() +
                     "; it must be one-dimensional with batch + 1 >= 2 values");
      return 0;
    }
    if (v.address() % 4 != 0)
      why_.push_back(std::string(role) + " starts at an address that is not 4-byte aligned");
    return v.shape()[0] - 1;
  }

  void same_device(const char* role, const TensorView& v, const TensorView& first) {
    if (!(v.device() == first.device()))
      why_.push_back(std::string(role) + " is on " + v.device().describe() + "; Q is on " +
                     first.device().describe() + ": every tensor must be on one device");
  }

 private:
  bool varlen_;
  std::vector<std::string>& why_;
};

// Q, K, V, O, lse and cu_seqlens: the forward's part of either problem.
AttentionProblem read_forward(const TensorView& q, const TensorView& k, const TensorView& v,
                              const TensorView& o, const TensorView* lse,
                              const TensorView* cu_q, const TensorView* cu_k,
                              const AttentionOptions& options, std::vector<std::string>& why) {
  AttentionProblem p;
  if (!cu_q != !cu_k)
    why.push_back(std::string("only ") + (cu_q ? "cu_seqlens_q" : "cu_seqlens_k") +
                  " is given; varlen attention takes both (neither: dense)");
  p.varlen = cu_q && cu_k;
  Reader read(p.varlen, why);
  const auto rq = read.matrix("Q", q), rk = read.matrix("K", k), rv = read.matrix("V", v),
             ro = read.matrix("O", o);
  read.same_device("K", k, q);
  read.same_device("V", v, q);
  read.same_device("O", o, q);
  if (lse) read.same_device("lse", *lse, q);
  if (!(rq.ok && rk.ok && rv.ok && ro.ok)) return p;

  p.dtype = rq.dtype;
  for (auto [role, r] : {std::pair{"K", &rk}, {"V", &rv}, {"O", &ro}})
    if (r->dtype != rq.dtype)
      why.push_back(std::string(role) + " is " + std::string(runtime::name(r->dtype)) + " and Q " +
                    std::string(runtime::name(rq.dtype)) + "; they must be of one dtype");
  p.head_dim = rq.head_dim;
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    why.push_back("head_dim = " + std::to_string(p.head_dim) + "; attention takes 64, 128 or 256");
  for (auto [role, r] : {std::pair{"K", &rk}, {"V", &rv}, {"O", &ro}})
    if (r->head_dim != rq.head_dim)
      why.push_back(std::string(role) + "'s head_dim is " + std::to_string(r->head_dim) +
                    " and Q's " + std::to_string(rq.head_dim) + "; they must be equal");
  p.heads_q = rq.heads, p.heads_kv = rk.heads;
  if (rv.heads != rk.heads)
    why.push_back("V has " + std::to_string(rv.heads) + " heads and K " + std::to_string(rk.heads) +
                  "; they must be equal");
  if (ro.heads != rq.heads || ro.seq != rq.seq || ro.batch != rq.batch)
    why.push_back("O is " + o.describe() + "; it must have Q's shape " + shape_text(q.shape()));
  if (rk.heads < 1 || rq.heads < 1 || rq.heads % rk.heads != 0)
    why.push_back("heads_q = " + std::to_string(rq.heads) + ", heads_kv = " + std::to_string(rk.heads) +
                  "; heads_kv must be >= 1 and divide heads_q (grouped-query attention)");
  if (rv.seq != rk.seq || rv.batch != rk.batch)
    why.push_back("V is " + v.describe() + "; it must have K's shape " + shape_text(k.shape()));
  p.q = rq.strides, p.k = rk.strides, p.v = rv.strides, p.o = ro.strides;

  if (p.varlen) {
    const std::int64_t bq = read.cu_seqlens("cu_seqlens_q", *cu_q);
    const std::int64_t bk = read.cu_seqlens("cu_seqlens_k", *cu_k);
    read.same_device("cu_seqlens_q", *cu_q, q);
    read.same_device("cu_seqlens_k", *cu_k, q);
    if (bq != bk)
      why.push_back("cu_seqlens_q holds " + std::to_string(bq + 1) + " values and cu_seqlens_k " +
                    std::to_string(bk + 1) + "; both must hold batch + 1");
    p.batch = bq;
    p.total_q = rq.seq, p.total_k = rk.seq;
    p.seq_q = options.max_seqlen_q, p.seq_k = options.max_seqlen_k;
    if (p.seq_q < 1 || p.seq_k < 1)
      why.push_back("max_seqlen_q = " + std::to_string(p.seq_q) + ", max_seqlen_k = " +
                    std::to_string(p.seq_k) + "; varlen attention needs both >= 1 (they size the grid)");
  } else {
    p.batch = rq.batch;
    if (rk.batch != rq.batch)
      why.push_back("K has batch " + std::to_string(rk.batch) + " and Q " + std::to_string(rq.batch) +
                    "; they must be equal");
    p.seq_q = rq.seq, p.seq_k = rk.seq;
    if (options.max_seqlen_q || options.max_seqlen_k)
      why.push_back("max_seqlen_q/_k are given without cu_seqlens; they belong to varlen attention");
  }
  if (p.batch < 1 || p.heads_q < 1 || (!p.varlen && (p.seq_q < 1 || p.seq_k < 1)))
    why.push_back("batch " + std::to_string(p.batch) + ", heads_q " + std::to_string(p.heads_q) +
                  (p.varlen ? "" : ", seq_q " + std::to_string(p.seq_q) + ", seq_k " + std::to_string(p.seq_k)) +
                  "; each must be >= 1");
  constexpr std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  for (auto [what, value] : {std::pair{"seq_q", p.varlen ? p.total_q : p.seq_q},
                             {"seq_k", p.varlen ? p.total_k : p.seq_k}})
    if (value > limit)
      why.push_back(std::string(what) + " = " + std::to_string(value) +
                    "; the kernels count rows in 32 bits (at most 2^31 - 1)");
  if (p.heads_q * p.batch > 65535 * std::int64_t{65535})
    why.push_back("batch x heads_q = " + std::to_string(p.heads_q * p.batch) + "; too many for the grid");

  if (lse) {
    p.has_lse = true;
    p.lse = read.lse(*lse, p.batch, p.heads_q, p.varlen ? p.total_q : p.seq_q);
  }

  p.scale = options.scale.value_or(p.head_dim > 0 ? 1.0 / std::sqrt(double(p.head_dim)) : 1.0);
  if (!std::isfinite(p.scale) || p.scale <= 0)
    why.push_back("scale = " + std::to_string(p.scale) +
                  "; it must be finite and > 0 (folded into exp2 after the row maximum)");
  p.window_left = options.window_left, p.window_right = options.window_right;
  if (p.window_left < -1 || p.window_right < -1)
    why.push_back("window (" + std::to_string(p.window_left) + ", " + std::to_string(p.window_right) +
                  "); each side is -1 (unbounded) or >= 0");
  if (options.causal) {
    if (p.window_right > 0)
      why.push_back("causal with window_right = " + std::to_string(p.window_right) +
                    "; causal means window_right = 0 (give one or the other)");
    p.window_right = 0;
  }
  p.top_left = options.alignment == MaskAlignment::top_left;
  p.deterministic = options.deterministic;
  return p;
}

// dO, dQ, dK, dV: each of the shape, dtype and device of what it differentiates.
AttentionStrides read_like(const char* role, const TensorView& v, const char* like_role,
                           const TensorView& like, bool varlen, std::vector<std::string>& why) {
  Reader read(varlen, why);
  const auto r = read.matrix(role, v);
  read.same_device(role, v, like);
  if (r.ok && (v.shape() != like.shape() || v.dtype() != like.dtype()))
    why.push_back(std::string(role) + " is " + v.describe() + "; it must have " + like_role +
                  "'s dtype and shape (" + std::string(runtime::name(like.dtype())) +
                  shape_text(like.shape()) + ")");
  return r.strides;
}

}  // namespace

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += "\n  - " + r;
  return s;
}

bool AttentionProblem::visible(std::int64_t i, std::int64_t j, std::int64_t len_q,
                               std::int64_t len_k) const {
  if (j < 0 || j >= len_k) return false;
  const std::int64_t diag = i + diagonal(len_q, len_k);
  if (window_right >= 0 && j > diag + window_right) return false;
  if (window_left >= 0 && j < diag - window_left) return false;
  return true;
}

float AttentionProblem::scale_log2() const {
  return static_cast<float>(scale * 1.4426950408889634);  // log2(e)
}

std::string AttentionProblem::describe() const {
  char scale_text[32];
  std::snprintf(scale_text, sizeof scale_text, "%.6g", scale);
  std::string s = std::string(runtime::name(dtype)) + " b" + std::to_string(batch) + " hq" +
                  std::to_string(heads_q) + " hkv" + std::to_string(heads_kv) +
                  (varlen ? " varlen max_sq" : " sq") + std::to_string(seq_q) +
                  (varlen ? " max_sk" : " sk") + std::to_string(seq_k) + " d" + std::to_string(head_dim);
  if (window_left >= 0 || window_right >= 0)
    s += " window(" + std::to_string(window_left) + "," + std::to_string(window_right) + ")" +
         (top_left ? " top-left" : "");
  return s + " scale " + scale_text;
}

AttentionProblem attention_problem(const AttentionTensors& t, const AttentionOptions& options,
                                   std::vector<std::string>& why) {
  return read_forward(t.q, t.k, t.v, t.o, t.lse, t.cu_seqlens_q, t.cu_seqlens_k, options, why);
}

AttentionProblem attention_backward_problem(const AttentionBackwardTensors& t,
                                            const AttentionOptions& options,
                                            std::vector<std::string>& why) {
  AttentionProblem p =
      read_forward(t.q, t.k, t.v, t.o, &t.lse, t.cu_seqlens_q, t.cu_seqlens_k, options, why);
  p.d_o = read_like("dO", t.d_o, "O", t.o, p.varlen, why);
  p.dq = read_like("dQ", t.dq, "Q", t.q, p.varlen, why);
  p.dk = read_like("dK", t.dk, "K", t.k, p.varlen, why);
  p.dv = read_like("dV", t.dv, "V", t.v, p.varlen, why);
  return p;
}

}  // namespace warpforge::ops
