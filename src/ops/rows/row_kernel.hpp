// The skeleton every row kernel is written on (row_shape.hpp says how a row
// is spread over threads): the loop over the rows a group owns, a thread's
// part of a row of each tensor loaded with vector accesses into registers in
// the tensor's own bits (16-bit dtypes two to a register, converted to f32
// where a value is used), stores converting f32 values back, and the
// reduction over the threads sharing a row (tile/reduction.hpp). A kernel
// built on it reads as its row's arithmetic:
//
//   RowKernel rk(k, shape, n);
//   rk.for_each_row(rows, [&](const Reg& row) {
//     RowFragment x = rk.load(x_tensor, &row, 0.0f);
//     ... rk.allreduce({sum}, tile::add()) ...
//     rk.store(y_tensor, &row, [&](int j, int e) { return y_of(x.value(j, e)); });
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "row_shape.hpp"
#include "warpforge/dsl/kernel.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::ops::rows {

// A value a thread computes for element e of its vector j (an f32 register).
// Passes over a thread's elements call it again rather than keep every value:
// a row's values are converted or combined where used, and registers hold
// only the loaded words.
using RowValue = std::function<dsl::Reg(int j, int e)>;

// A row tensor inside a kernel: dtype (f32, f16, bf16), the global address
// of its first element (u64 register), its row stride in elements (0: every
// row reads the same elements, as a weight does), and `interleave` elements
// of it to each element of the row (2: pairs side by side, as SwiGLU's gate
// and up in one tensor; a vector then holds 2·vector of its elements).
struct RowOperand {
  runtime::DType dtype = runtime::DType::f32;
  dsl::Reg base;
  std::int64_t row_stride = 0;
  int interleave = 1;
};

// A thread's part of one row of one tensor as loaded: for each of its
// vectors the registers the access filled.
class RowFragment {
 public:
  RowFragment(dsl::Kernel& k, runtime::DType dtype, std::vector<dsl::Regs> words)
      : k_(&k), dtype_(dtype), words_(std::move(words)) {}
  // Element e of vector j as an f32 register (emits the conversion of a
  // 16-bit dtype, exact, at each call); e < vector · the operand's interleave.
  dsl::Reg value(int j, int e) const;
  runtime::DType dtype() const { return dtype_; }
  const dsl::Regs& words(int j) const { return words_[static_cast<std::size_t>(j)]; }

 private:
  dsl::Kernel* k_;
  runtime::DType dtype_;
  std::vector<dsl::Regs> words_;
};

class RowKernel {
 public:
  // Declares the launch shape (.maxntid the block, .minnctapersm so that
  // 1024 threads fit an SM: 64 registers a thread), reads the thread's place
  // (tid.x, ctaid.x, the cluster rank) and makes the shape's reduction (its
  // shared memory named `name`). The kernel is
  // launched with row_launch(shape, groups) or a grid of fewer groups that
  // loop (for_each_row).
  RowKernel(dsl::Kernel& k, const RowShape& shape, std::int64_t n, const std::string& name = "row");

  dsl::Kernel& kernel() const { return *k_; }
  const RowShape& shape() const { return shape_; }
  std::int64_t n() const { return n_; }

  // body(row) for row = group, group + groups, ... < rows (u32 registers):
  // each row group of the grid works on its rows one after another.
  void for_each_row(const dsl::Src& rows, const std::function<void(const dsl::Reg& row)>& body);
  // for_each_row with each row's loads issued a row ahead: load(row) issues
  // the loads body(row, fragments) works on, and the group's next row's are
  // issued before body runs, so that they are in flight while it reduces and
  // stores (twice the bytes in flight for the registers of a second row).
  // The loop runs to `end` (rows, or more: padding rows the body handles
  // itself); a load of a row past rows - 1 is clamped to it (loaded, unused).
  using RowLoads = std::function<std::vector<RowFragment>(const dsl::Reg& row)>;
  void for_each_row_prefetched(const dsl::Src& end, const dsl::Reg& rows, const RowLoads& load,
                               const std::function<void(const dsl::Reg& row, const std::vector<RowFragment>&)>& body);
  // The row group's index in the grid and the number of groups (u32).
  const dsl::Reg& group() const { return group_; }

  // Whether this thread's vector j lies in the row: nullopt where it does in
  // every thread (the row fills the shape's vector j).
  const std::optional<dsl::Pred>& in_row(int j) const { return in_row_[static_cast<std::size_t>(j)]; }
  // `value` where vector j lies in the row, else `otherwise` (no instruction
  // where it always does).
  dsl::Reg in_row_or(int j, const dsl::Reg& value, const dsl::Src& otherwise) const;
  // The index in the row of element e of vector j (u32; of pass `chunk`
  // where the shape reads rows in several) is element_base(chunk) +
  // element_offset(j, e): a register the thread computes once, and a constant.
  dsl::Reg element_base(const dsl::Reg* chunk = nullptr) const;
  std::int64_t element_offset(int j, int e) const { return j * vector_step() * shape_.vector + e; }
  // body(chunk) for each pass over a row (u32 0 .. shape.chunks - 1): the
  // loads and stores given `chunk` address that pass's part of the row.
  void for_each_chunk(const std::function<void(const dsl::Reg& chunk)>& body);

  // The address of element 0 of row `row` of `t` (u64).
  dsl::Reg row_address(const RowOperand& t, const dsl::Reg& row) const;

  // Whether element `index` (u32, below n) of the row is one of this
  // thread's (in pass `chunk`): a few instructions a row, where comparing
  // each element's index would cost two an element.
  dsl::Pred owns(const dsl::Reg& index, const dsl::Reg* chunk = nullptr) const;
  // Stores `value` (f32) rounded to t's dtype as element `index` of row
  // `row` of `t` (interleave 1): one scalar access.
  void store_element(const RowOperand& t, const dsl::Reg& row, const dsl::Reg& index, const dsl::Reg& value) const;

  // The thread's part of row `row` of `t` (row null for a tensor of row
  // stride 0); vectors outside the row hold `fill` (read as each element).
  RowFragment load(const RowOperand& t, const dsl::Reg* row, float fill, const dsl::Reg* chunk = nullptr) const;
  // Vector j alone of that part (the fragment's other vectors are empty): a
  // value used once, after a row's reductions (a weight), loaded next to its
  // use so that it is not held in registers across the row.
  RowFragment load_vector(const RowOperand& t, const dsl::Reg* row, float fill, int j) const;
  // value(j, e) (f32) rounded to nearest even to `dtype`, in the registers
  // a load of that dtype fills (so value() reads the rounded values back).
  RowFragment pack(runtime::DType dtype, const std::function<dsl::Reg(int j, int e)>& value,
                   int interleave = 1) const;
  // Stores the thread's vectors that lie in the row (`values` of t's dtype).
  void store(const RowOperand& t, const dsl::Reg* row, const RowFragment& values,
             const dsl::Reg* chunk = nullptr) const;
  // The same for value(j, e) rounded to t's dtype.
  void store(const RowOperand& t, const dsl::Reg* row, const std::function<dsl::Reg(int j, int e)>& value,
             const dsl::Reg* chunk = nullptr) const {
    store(t, row, pack(t.dtype, value, t.interleave), chunk);
  }

  // Stores vector j alone: value(e) of its elements, rounded to t's dtype.
  void store_vector(const RowOperand& t, const dsl::Reg* row, int j, const std::function<dsl::Reg(int e)>& value) const;

  // f(j, e) for every element of the thread's vectors, in order.
  void for_each_element(const std::function<void(int j, int e)>& f) const {
    for (int j = 0; j < shape_.vectors; ++j)
      for (int e = 0; e < shape_.vector; ++e) f(j, e);
  }

  // Every thread of the row's group ends with the group's combination.
  void allreduce(const dsl::Regs& values, const tile::Combine& combine);
  // Its two steps (tile::GroupReduction): the CTA's part of the row, then
  // the cluster's CTAs (nothing where a CTA holds the row).
  void allreduce_in_cta(const dsl::Regs& values, const tile::Combine& combine);
  void allreduce_across_ctas(const dsl::Regs& values, const tile::Combine& combine);
  // True in one thread of the row's group (the writer of its statistics).
  const dsl::Pred& leader() const { return leader_; }

 private:
  // The address of the thread's first vector of `t` in `row` (u64), in pass `chunk`.
  dsl::Reg thread_address(const RowOperand& t, const dsl::Reg* row, const dsl::Reg* chunk) const;
  // Whether each of the thread's vectors lies in the row: in_row_, or in pass `chunk`.
  std::vector<std::optional<dsl::Pred>> in_row_of(const dsl::Reg* chunk) const;
  // load, pack and store of the thread's vectors first .. end - 1.
  RowFragment load_vectors(const RowOperand& t, const dsl::Reg* row, float fill, const dsl::Reg* chunk, int first,
                           int end) const;
  RowFragment pack_vectors(runtime::DType dtype, const std::function<dsl::Reg(int j, int e)>& value, int interleave,
                           int first, int end) const;
  void store_vectors(const RowOperand& t, const dsl::Reg* row, const RowFragment& values, const dsl::Reg* chunk,
                     int first, int end) const;
  std::int64_t vector_step() const { return std::int64_t{shape_.ctas} * shape_.threads; }

  dsl::Kernel* k_;
  RowShape shape_;
  std::int64_t n_;
  tile::GroupReduction reduction_;
  dsl::Reg group_, groups_, first_vector_;
  dsl::Pred leader_;
  std::vector<std::optional<dsl::Pred>> in_row_;
};

// Declares a row tensor's parameter (a global u64 pointer) with the alignment
// its vector accesses need, min(16, vector · interleave · its bytes), which
// every launch is then checked for (runtime/launch_check.hpp).
dsl::Reg row_param(dsl::Kernel& k, const std::string& name, const RowShape& shape, runtime::DType dtype,
                   int interleave = 1);

// The bits of `value` in `dtype` repeated over a 32-bit word (two 16-bit
// elements, or one f32): what a fill or constant looks like loaded.
std::uint32_t word_of(runtime::DType dtype, float value);

}  // namespace warpforge::ops::rows
