#include "norm_problem.hpp"

#include <algorithm>
#include <cstdio>

namespace warpforge::ops {

using rows::RowMatrix;
using runtime::DType;
using runtime::TensorView;

namespace {

std::string dtype_text(const RowMatrix& m) {
  return std::string(runtime::name(m.dtype));
}

std::string eps_text(float eps) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", static_cast<double>(eps));
  return s;
}

// A row tensor like `like` (rows of n): its matrix, or nullopt with reasons.
std::optional<RowMatrix> row_tensor(const TensorView& v, const std::string& role, std::int64_t rows, std::int64_t n,
                                    const std::string& like, std::vector<std::string>& why) {
  auto m = rows::as_rows(v, role, why);
  if (!m) return std::nullopt;
  rows::require_row_float(*m, role, why);
  rows::require_same_rows(*m, role, rows, n, like, why);
  return m;
}

// A per-column tensor (weight, bias and their gradients): n contiguous elements.
std::optional<RowMatrix> column_tensor(const TensorView& v, const std::string& role, std::int64_t n,
                                       std::vector<std::string>& why) {
  if (v.numel() != n || !v.is_contiguous()) {
    why.push_back(role + " is " + v.describe() + ": it must be contiguous with one element a column (" +
                  std::to_string(n) + ")");
    return std::nullopt;
  }
  auto m = rows::as_rows(v, role, why);
  if (m) rows::require_row_float(*m, role, why);
  return m;
}

std::optional<RowMatrix> column_tensor(const std::optional<TensorView>& v, const std::string& role, std::int64_t n,
                                       std::vector<std::string>& why) {
  return v ? column_tensor(*v, role, n, why) : std::nullopt;
}

void check_eps(const NormOptions& o, std::vector<std::string>& why) {
  if (!(o.eps >= 0.0f) || !(o.eps < 1e30f))
    why.push_back("eps " + eps_text(o.eps) + ": a finite value >= 0 is accepted");
}

int one_if(const std::optional<RowMatrix>& m) {
  return m ? 1 : 0;
}

// The shape for the problem's rows (an empty one where refused: the reason is in `why`).
rows::RowShape choose(rows::RowShapeRequest& request, std::int64_t n, int vector, int held_values, int prefer,
                      const runtime::Device& device, std::vector<std::string>& why, int resident_threads = 1024) {
  request = rows::row_request(n, vector, held_values, prefer, rows::max_cluster_ctas(device), false, resident_threads);
  return rows::row_shape(request, why).value_or(rows::RowShape{});
}

}  // namespace

std::string_view name(NormKind kind) {
  return kind == NormKind::rms ? "rms" : "layer";
}

std::string NormProblem::describe() const {
  std::string s = std::string(name(options.kind)) + " " + std::to_string(rows) + " x " + std::to_string(n) + " " +
                  dtype_text(x) + " -> " + dtype_text(y);
  if (residual) s += ", residual " + dtype_text(*residual) + " -> " + dtype_text(*residual_out);
  if (weight) s += ", weight " + dtype_text(*weight);
  if (bias) s += ", bias " + dtype_text(*bias);
  if (mean) s += ", mean";
  if (rstd) s += ", rstd";
  return s + ", eps " + eps_text(options.eps);
}

NormProblem describe_norm(const NormTensors& t, const NormOptions& options, const runtime::Device& device,
                          std::vector<std::string>& why) {
  NormProblem p;
  p.options = options;
  check_eps(options, why);
  auto x = rows::input_rows(t.x, "x", why);
  if (!x) return p;
  p.x = *x;
  p.rows = x->rows;
  p.n = x->n;
  if (auto y = row_tensor(t.y, "y", p.rows, p.n, "x", why)) p.y = *y;
  if (t.residual) p.residual = row_tensor(*t.residual, "residual", p.rows, p.n, "x", why);
  if (t.residual_out) p.residual_out = row_tensor(*t.residual_out, "residual_out", p.rows, p.n, "x", why);
  if (t.residual && !t.residual_out)
    why.push_back("a residual without residual_out: the sum x + residual the norm reads is an output");
  if (!t.residual && t.residual_out) why.push_back("residual_out without a residual to add");
  p.weight = column_tensor(t.weight, "weight", p.n, why);
  p.bias = column_tensor(t.bias, "bias", p.n, why);
  if (t.bias && options.kind == NormKind::rms) why.push_back("a bias with rms norm: only layer norm takes one");
  if (t.mean) {
    rows::require_row_statistic(*t.mean, "mean", p.rows, why);
    if (options.kind == NormKind::rms) why.push_back("a mean with rms norm: only layer norm computes one");
  }
  if (t.rstd) rows::require_row_statistic(*t.rstd, "rstd", p.rows, why);
  p.mean = t.mean.has_value();
  p.rstd = t.rstd.has_value();
  for (const TensorView* v : {t.residual ? &*t.residual : nullptr, t.weight ? &*t.weight : nullptr,
                              t.bias ? &*t.bias : nullptr, &t.y, t.residual_out ? &*t.residual_out : nullptr,
                              t.mean ? &*t.mean : nullptr, t.rstd ? &*t.rstd : nullptr})
    if (v && !(v->device() == t.x.device()))
      why.push_back("a tensor is on " + v->device().describe() + " and x on " + t.x.device().describe() +
                    ": every tensor must be on one device");
  if (!why.empty()) return p;

  const int vector = rows::vector_elements(p.n, {&p.x, &p.y, p.residual ? &*p.residual : nullptr,
                                                p.residual_out ? &*p.residual_out : nullptr,
                                                p.weight ? &*p.weight : nullptr, p.bias ? &*p.bias : nullptr});
  // Held at once: x (or h), the residual while h is formed, and for layer
  // norm its centred values (the second pass; without them its f32 rows of
  // 8 vectors a thread spill). Weight and bias are loaded a vector at a time
  // after the statistics (norm_kernel.cpp), not held across the reductions.
  const int held = 1 + one_if(p.residual) + (options.kind == NormKind::layer ? 1 : 0);
  p.shape = choose(p.request, p.n, vector, held, 4, device, why);
  // LayerNorm, whose two reductions a row cost each thread alike however
  // many elements it holds: where 64 registers hold fewer than 4 vectors a
  // thread, up to 4 at 512 threads resident an SM (128 registers: 101 at n
  // 4096 in 16 bits, where 64 spilled 84 bytes; ptxas 13, sm_90a), the same
  // bytes in flight an SM at half the threads' reductions.
  if (options.kind == NormKind::layer && why.empty() && p.shape.vectors < 4)
    p.shape = choose(p.request, p.n, vector, held, 4, device, why, 512);
  if (why.empty()) p.groups = rows::persistent_groups(p.shape, p.rows, device);
  p.prefetch = runtime::bits(p.x.dtype) == 16 && (!p.residual || runtime::bits(p.residual->dtype) == 16);
  return p;
}

std::string NormBackwardProblem::describe() const {
  std::string s = std::string(name(options.kind)) + " backward " + std::to_string(rows) + " x " + std::to_string(n) +
                  " dy " + dtype_text(dy) + ", x " + dtype_text(x) + " -> dx " + dtype_text(dx);
  if (dresidual_out) s += ", dresidual_out " + dtype_text(*dresidual_out);
  if (weight) s += ", weight " + dtype_text(*weight);
  if (dweight) s += ", dweight " + dtype_text(*dweight);
  if (dbias) s += ", dbias " + dtype_text(*dbias);
  return s;
}

std::size_t NormBackwardProblem::workspace_bytes() const {
  const int sums = (dweight ? 1 : 0) + (dbias ? 1 : 0);
  return static_cast<std::size_t>(sums) * static_cast<std::size_t>(groups * n) * 4;
}

std::uint32_t NormBackwardProblem::sums_shared_bytes() const {
  const int sums = (dweight ? 1 : 0) + (dbias ? 1 : 0);
  return static_cast<std::uint32_t>(sums * shape.block() * shape.vectors * shape.vector * 4);
}

NormBackwardProblem describe_norm_backward(const NormBackwardTensors& t, const NormOptions& options,
                                           const runtime::Device& device, std::vector<std::string>& why) {
  NormBackwardProblem p;
  p.options = options;
  auto dy = rows::input_rows(t.dy, "dy", why);
  if (!dy) return p;
  p.dy = *dy;
  p.rows = dy->rows;
  p.n = dy->n;
  if (auto x = row_tensor(t.x, "x", p.rows, p.n, "dy", why)) p.x = *x;
  if (auto dx = row_tensor(t.dx, "dx", p.rows, p.n, "dy", why)) p.dx = *dx;
  if (t.dresidual_out) p.dresidual_out = row_tensor(*t.dresidual_out, "dresidual_out", p.rows, p.n, "dy", why);
  p.weight = column_tensor(t.weight, "weight", p.n, why);
  p.dweight = column_tensor(t.dweight, "dweight", p.n, why);
  p.dbias = column_tensor(t.dbias, "dbias", p.n, why);
  if (t.dweight && !t.weight) why.push_back("dweight without weight: a norm without weight has no dweight");
  if (t.dbias && options.kind == NormKind::rms) why.push_back("dbias with rms norm: only layer norm has a bias");
  rows::require_row_statistic(t.rstd, "rstd", p.rows, why);
  if (options.kind == NormKind::layer) {
    if (!t.mean)
      why.push_back("layer norm's backward needs the forward's mean");
    else
      rows::require_row_statistic(*t.mean, "mean", p.rows, why);
  } else if (t.mean) {
    why.push_back("a mean with rms norm: only layer norm computes one");
  }
  for (const TensorView* v : {&t.x, &t.rstd, &t.dx, t.weight ? &*t.weight : nullptr, t.mean ? &*t.mean : nullptr,
                              t.dresidual_out ? &*t.dresidual_out : nullptr, t.dweight ? &*t.dweight : nullptr,
                              t.dbias ? &*t.dbias : nullptr})
    if (v && !(v->device() == t.dy.device()))
      why.push_back("a tensor is on " + v->device().describe() + " and dy on " + t.dy.device().describe() +
                    ": every tensor must be on one device");
  if (!why.empty()) return p;

  const int vector = rows::vector_elements(p.n, {&p.dy, &p.x, &p.dx, p.dresidual_out ? &*p.dresidual_out : nullptr,
                                                p.weight ? &*p.weight : nullptr, p.dweight ? &*p.dweight : nullptr,
                                                p.dbias ? &*p.dbias : nullptr});
  // Held across a row: dy and x (the weight is loaded where it is used, the
  // running sums of dweight and dbias are in shared memory); the weight
  // counted too for LayerNorm (its second row sum) and for a row spread over
  // a cluster (its reduction), which spill otherwise (row_ops_ptxas_test.cpp).
  // RMSNorm prefers a vector a thread, taking two where that keeps a row in
  // one CTA rather than a cluster (n 8192 in 16 bits): at n 4096, 256 threads
  // of 2 vectors measured 0.67 of the copy against 0.77 for 512 of 1 (H200,
  // twice the row groups' dweight partials), at n 8192 0.81-0.89 against
  // 0.71-0.75 for a cluster of 2 x 512 of 1.
  const bool layer = options.kind == NormKind::layer;
  p.shape = choose(p.request, p.n, vector, layer ? 2 + one_if(p.weight) : 2, layer ? 2 : 1, device, why);
  if (!why.empty()) return p;
  if (!layer && p.weight && p.shape.ctas > 1) p.shape = choose(p.request, p.n, vector, 3, 2, device, why);
  // LayerNorm where a vector a thread takes a cluster (n 8192 in 16 bits: 2 x
  // 512 threads, 0.60-0.64 of the copy, H200, the cluster's reductions and
  // twice the threads' shuffles): two vectors a thread in one CTA, at 512
  // threads an SM, whose 128 registers hold them (110, where 64 spilled 140
  // bytes: ptxas 13, sm_90a).
  if (layer && p.shape.ctas > 1) p.shape = choose(p.request, p.n, vector, 2 + one_if(p.weight), 2, device, why, 512);
  if (!why.empty()) return p;
  p.groups = rows::persistent_groups(p.shape, p.rows, device);
  p.prefetch = runtime::bits(p.dy.dtype) == 16 && runtime::bits(p.x.dtype) == 16;
  return p;
}

}  // namespace warpforge::ops
