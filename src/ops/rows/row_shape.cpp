#include "row_shape.hpp"

#include <algorithm>
#include <bit>

namespace warpforge::ops::rows {

namespace {

constexpr int kMaxThreads = 1024;  // a CTA's threads (CUDA's limit on every target warpforge builds for)

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

int pow2_at_least(std::int64_t v) {
  return static_cast<int>(std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(v, 1))));
}

std::string elements(std::int64_t v) {
  return std::to_string(v) + (v == 1 ? " element" : " elements");
}

}  // namespace

int max_vectors_for(int held_values, int vector, int resident_threads) {
  const int held_registers = 32 * kMaxThreads / resident_threads;
  return std::max(1, held_registers / std::max(1, held_values * vector));
}

int max_cluster_ctas(const runtime::Device& device) {
  return device.properties().compute_capability_major >= 9 ? 8 : 1;
}

std::string_view RowShape::span() const {
  if (ctas > 1) return "cluster";
  return threads == 32 ? "warp" : "cta";
}

std::string RowShape::describe() const {
  std::string s;
  if (ctas > 1)
    s = "a row per cluster of " + std::to_string(ctas) + " CTAs of " + std::to_string(threads) + " threads";
  else if (threads == 32)
    s = "a row per warp, " + std::to_string(rows_per_cta) + " a CTA";
  else
    s = "a row per " + std::to_string(threads) + " threads" +
        (rows_per_cta > 1 ? ", " + std::to_string(rows_per_cta) + " rows a CTA" : std::string(" (a CTA)"));
  return s + ", " + std::to_string(vectors) + (vectors == 1 ? " vector of " : " vectors of ") + elements(vector) +
         " a thread" + (chunks > 1 ? ", in " + std::to_string(chunks) + " passes over the row" : std::string()) +
         (resident_threads != kMaxThreads ? ", " + std::to_string(resident_threads) + " threads resident an SM"
                                          : std::string());
}

namespace {

// The shape at CTAs of at most max_threads threads (see choose_row_shape).
std::optional<RowShape> shape_within(const RowShapeRequest& r, int max_threads, std::string* why) {
  const std::int64_t vectors_in_row = ceil_div(r.n, r.vector);
  RowShape s;
  s.vector = r.vector;
  s.resident_threads = r.resident_threads;
  s.threads = std::clamp(pow2_at_least(ceil_div(vectors_in_row, r.prefer_vectors)), 32, max_threads);
  std::int64_t per_thread = ceil_div(vectors_in_row, s.threads);
  if (per_thread > r.max_vectors) {
    const std::int64_t ctas = pow2_at_least(ceil_div(per_thread, r.max_vectors));
    if (ctas > r.max_ctas && r.chunks) {
      s.ctas = r.max_ctas;
      s.vectors = r.max_vectors;
      s.chunks = static_cast<int>(ceil_div(r.n, s.capacity()));
      return s;
    }
    if (ctas > r.max_ctas) {
      if (why)
        *why = "a row of " + elements(r.n) + " is more than " + std::to_string(r.max_ctas) +
               (r.max_ctas == 1 ? " CTA" : " CTAs") + " of " + std::to_string(max_threads) + " threads hold at " +
               std::to_string(r.max_vectors) + " vectors of " + elements(r.vector) + " a thread (" +
               std::to_string(std::int64_t{r.max_ctas} * max_threads * r.max_vectors * r.vector) + ")";
      return std::nullopt;
    }
    s.ctas = static_cast<int>(ctas);
    per_thread = ceil_div(vectors_in_row, std::int64_t{s.threads} * s.ctas);
  }
  s.vectors = static_cast<int>(per_thread);
  s.rows_per_cta = s.ctas == 1 ? std::max(1, r.min_block / s.threads) : 1;
  return s;
}

}  // namespace

std::optional<RowShape> choose_row_shape(const RowShapeRequest& r, std::string* why) {
  // Where clusters are available, a row that needs CTAs of 1024 threads is
  // spread over twice as many CTAs of 512 instead: two CTAs an SM, so that
  // one has its loads in flight while the other reduces and stores (a CTA
  // of 1024 is alone on its SM). Not where that would read the row in more
  // passes than CTAs of 1024 do.
  if (r.max_ctas > 1) {
    auto wide = shape_within(r, kMaxThreads, why);
    if (!wide || wide->threads < kMaxThreads) return wide;
    auto narrow = shape_within(r, kMaxThreads / 2, nullptr);
    return narrow && narrow->chunks <= wide->chunks ? narrow : wide;
  }
  return shape_within(r, kMaxThreads, why);
}

RowShapeRequest row_request(std::int64_t n, int vector, int held_values, int prefer, int max_ctas, bool chunks,
                            int resident_threads) {
  RowShapeRequest r{.n = n, .vector = vector, .max_vectors = max_vectors_for(held_values, vector, resident_threads),
                    .max_ctas = max_ctas, .chunks = chunks, .resident_threads = resident_threads};
  r.prefer_vectors = std::min(prefer, r.max_vectors);
  return r;
}

std::optional<RowShape> row_shape(const RowShapeRequest& request, std::vector<std::string>& why) {
  std::string reason;
  auto shape = choose_row_shape(request, &reason);
  if (!shape) why.push_back(reason + (request.max_ctas == 1 ? " (clusters need compute capability 9.0)" : ""));
  return shape;
}

std::vector<std::string> narrower_spans_passed_over(const RowShape& chosen, const RowShapeRequest& r) {
  std::vector<std::string> out;
  const std::int64_t warp = std::int64_t{32} * r.max_vectors * r.vector;
  const std::int64_t cta = std::int64_t{kMaxThreads} * r.max_vectors * r.vector;
  if (chosen.span() != "warp") {
    if (r.n > warp)
      out.push_back("not warp: a row of " + elements(r.n) + " is more than a warp holds (" + std::to_string(warp) +
                    ")");
    else
      out.push_back("not warp: a row of " + elements(r.n) + " spreads over " + std::to_string(chosen.threads) +
                    " threads at " + std::to_string(r.prefer_vectors) + " vectors a thread, for more loads in flight");
  }
  if (chosen.span() == "cluster" && r.n > cta)
    out.push_back("not cta: a row of " + elements(r.n) + " is more than a CTA holds (" + std::to_string(cta) + ")");
  else if (chosen.span() == "cluster")
    out.push_back("not cta: a row of " + elements(r.n) + " would take a CTA of " + std::to_string(kMaxThreads) +
                  " threads, alone on its SM: CTAs of " + std::to_string(chosen.threads) +
                  " in a cluster keep two rows an SM in flight");
  if (chosen.chunks > 1)
    out.push_back("not held in registers: a row of " + elements(r.n) + " is more than a cluster of " +
                  std::to_string(chosen.ctas) + " holds (" + std::to_string(chosen.capacity()) + "): read again");
  return out;
}

std::int64_t persistent_groups(const RowShape& shape, std::int64_t rows, const runtime::Device& device) {
  const std::int64_t ctas_per_sm = std::max(1, shape.resident_threads / shape.block());
  const std::int64_t resident =
      std::max<std::int64_t>(1, device.properties().sm_count * ctas_per_sm / shape.ctas) * shape.rows_per_cta;
  const std::int64_t groups = std::max<std::int64_t>(1, std::min(rows, resident));
  return ceil_div(groups, shape.rows_per_cta) * shape.rows_per_cta;
}

runtime::LaunchConfig row_launch(const RowShape& shape, std::int64_t groups) {
  const std::int64_t ctas = ceil_div(std::max<std::int64_t>(groups, 1), shape.rows_per_cta) * shape.ctas;
  runtime::LaunchConfig c;
  c.grid = {static_cast<std::uint32_t>(ctas)};
  c.block = {static_cast<std::uint32_t>(shape.block())};
  if (shape.ctas > 1) c.cluster = {static_cast<std::uint32_t>(shape.ctas)};
  return c;
}

}  // namespace warpforge::ops::rows
