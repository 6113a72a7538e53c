// How a row kernel spreads a row over threads, chosen from the row's
// length: a thread holds `vectors` vectors of `vector` consecutive elements
// of each row tensor it reads (one 16-byte access each, where the dtype and
// alignment allow), `threads` threads of a CTA share a row (a warp, or
// several warps meeting in shared memory), and where one CTA's registers do
// not hold a row, `ctas` CTAs of a cluster share it (meeting in distributed
// shared memory). Short rows put several rows in a CTA (`rows_per_cta`).
//
// Vector j of thread t of CTA rank c in the row's cluster holds elements
// from (j·ctas·threads + c·threads + t)·vector on: each warp-wide access
// reads 32 consecutive vectors (512 bytes of 16-byte accesses).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::rows {

struct RowShape {
  int vector = 1;         // elements of one access
  int vectors = 1;        // accesses a thread makes to each row tensor
  int threads = 32;       // threads of a CTA sharing a row: a power of two, 32..1024
  int ctas = 1;           // CTAs of a cluster sharing a row: a power of two, 1..8
  int rows_per_cta = 1;   // rows a CTA works on side by side
  // Passes over a row longer than its threads hold at once (1: the row is
  // held in registers; more: the kernel reads it chunk by chunk, each pass
  // again: an online algorithm).
  int chunks = 1;
  // Threads an SM keeps resident (the kernel's .minnctapersm): 1024, 64
  // registers a thread; 512 gives a thread 128, for rows whose threads hold
  // more than 64 registers take without spilling.
  int resident_threads = 1024;

  int block() const { return threads * rows_per_cta; }
  // Elements one pass holds: vector · vectors · threads · ctas.
  std::int64_t capacity() const { return std::int64_t{vector} * vectors * threads * ctas; }
  // What a row spans, the kernel's name in describe(): "warp", "cta", "cluster".
  std::string_view span() const;
  // "a row per CTA of 256 threads, 4 vectors of 8 elements a thread"
  std::string describe() const;
};

struct RowShapeRequest {
  std::int64_t n = 0;       // elements of a row
  int vector = 1;           // vector_elements() of the op's tensors
  int prefer_vectors = 4;   // vectors a thread holds where the row is long enough
  int max_vectors = 8;      // the most a thread holds (its registers: max_vectors_for())
  int min_block = 128;      // threads of a CTA at least: short rows share a CTA
  int max_ctas = 8;         // the portable cluster size (1 where clusters are not available)
  bool chunks = false;      // the op's kernel reads a row in several passes where one does not hold it
  int resident_threads = 1024;  // the shape's (RowShape::resident_threads)
};

// The vectors a thread may hold when it keeps `held_values` values an element
// in registers at once (the row tensors it holds, and accumulators), each
// counted as an f32 register whatever its dtype (the compiler keeps a
// converted value live where passes over the row use it again): at most half
// the registers a thread has at `resident_threads` an SM (32 of 64 at 1024,
// 64 of 128 at 512). At least one.
int max_vectors_for(int held_values, int vector, int resident_threads = 1024);

// Clusters where the device has them (sm_90 on), else single CTAs.
int max_cluster_ctas(const runtime::Device& device);

// The shape for a row of n elements: the fewest threads that hold it at
// prefer_vectors a thread (at least a warp), up to a CTA of 1024 threads at
// max_vectors, then clusters of 2, 4, 8 such CTAs; past that, where the op
// allows it (request.chunks), the largest cluster in several passes. Where
// clusters are available, CTAs of 512 threads in a cluster rather than one
// of 1024 (two rows an SM in flight), unless that takes more passes.
// nullopt where nothing holds it, with the reason in `why`.
std::optional<RowShape> choose_row_shape(const RowShapeRequest& request, std::string* why);

// The request for a row of n elements in accesses of `vector` whose threads
// hold `held_values` values an element: up to `prefer` vectors a thread
// (where the budget at `resident_threads` an SM allows), clusters up to
// max_ctas, passes where `chunks`.
RowShapeRequest row_request(std::int64_t n, int vector, int held_values, int prefer, int max_ctas, bool chunks,
                            int resident_threads = 1024);
// choose_row_shape(request), or nullopt with the reason appended to `why`.
std::optional<RowShape> row_shape(const RowShapeRequest& request, std::vector<std::string>& why);

// For describe(): why each narrower span than the chosen one was not taken.
std::vector<std::string> narrower_spans_passed_over(const RowShape& chosen, const RowShapeRequest& request);

// Row groups for a grid that loops over `rows` rows: about as many as are
// resident at once (shape.resident_threads an SM, as the kernels'
// .minnctapersm promises), a whole number of CTAs, at least one. Each group then keeps
// what every row shares (a weight) in registers across its rows, and sums
// over its rows (dweight, losses) stay few.
std::int64_t persistent_groups(const RowShape& shape, std::int64_t rows, const runtime::Device& device);

// The launch of `groups` row groups (each row group a shape.threads-thread
// part of a CTA, or a cluster of shape.ctas CTAs): grid, block, cluster.
runtime::LaunchConfig row_launch(const RowShape& shape, std::int64_t groups);

}  // namespace warpforge::ops::rows
