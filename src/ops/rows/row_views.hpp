// The host side shared by the row ops (norms, softmax, SwiGLU,
// cross-entropy, norm + quantize): reading a tensor as rows of n elements,
// the vector width its tensors allow, and holding execute()'s views to the
// description an op was built with.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops::rows {

// A tensor read as `rows` rows of `n` elements: its last dimension has
// stride 1 and the others collapse into one row stride (elements).
struct RowMatrix {
  runtime::DType dtype = runtime::DType::f32;
  std::int64_t rows = 0, n = 0, row_stride = 0;
  int alignment = 16;  // bytes, up to 16, dividing the base address and the row stride's bytes

  int bytes() const { return runtime::bits(dtype) / 8; }
};

// `view` as rows × n; nullopt, with every reason appended to `why` (each
// naming `role`), where its last dimension is not contiguous or its leading
// dimensions do not collapse into one stride.
std::optional<RowMatrix> as_rows(const runtime::TensorView& view, const std::string& role,
                                 std::vector<std::string>& why);

// An op's first row tensor (x, dy, logits): as_rows(), then a float dtype
// and a row count the kernels take (each reason appended to `why`).
std::optional<RowMatrix> input_rows(const runtime::TensorView& view, const std::string& role,
                                    std::vector<std::string>& why);

// Appends a reason where `rows` exceeds what the kernels count (2^31 - 1, a u32 row index and grid).
void require_row_count(std::int64_t rows, std::vector<std::string>& why);

// The float dtypes the row ops read and write.
bool is_row_float(runtime::DType t);
// Appends "<role> is <dtype>: accepted f32, f16, bf16" unless it is one.
void require_row_float(const RowMatrix& m, const std::string& role, std::vector<std::string>& why);
// Appends a reason unless `m` has `rows` rows of `n` elements (naming `like`, the tensor it must match).
void require_same_rows(const RowMatrix& m, const std::string& role, std::int64_t rows, std::int64_t n,
                       const std::string& like, std::vector<std::string>& why);
// A per-row f32 vector (statistics): `view` dense with `rows` elements; appends a reason otherwise.
void require_row_statistic(const runtime::TensorView& view, const std::string& role, std::int64_t rows,
                           std::vector<std::string>& why);

// The widest vector (elements: a power of two of at most 16 bytes of the
// narrowest dtype among `matrices`) that divides n and whose every access
// each matrix's alignment allows (an access moves min(16, vector · bytes)).
int vector_elements(std::int64_t n, std::initializer_list<const RowMatrix*> matrices);

// The alignment (bytes, up to 16) of an address and a row stride of `stride_bytes`.
int alignment_of(std::uint64_t address, std::uint64_t stride_bytes);

// The descriptions of the views an op was built from, so that execute()
// refuses views of another description, device, presence or a base address
// less aligned than the kernel was built for.
class ViewChecks {
 public:
  // `view` null: a tensor the op was built without. `alignment`: the bytes
  // the kernel's accesses to it assume (0: none).
  void add(std::string role, const runtime::TensorView* view, int alignment = 0);
  // Every way `given` (in the order added) differs from the construction's.
  std::vector<std::string> mismatches(std::initializer_list<const runtime::TensorView*> given,
                                      const runtime::Device& device, const std::string& op) const;

 private:
  struct Entry {
    std::string role;
    bool present;
    runtime::DType dtype;
    std::vector<std::int64_t> shape, strides;
    int alignment;
  };
  std::vector<Entry> entries_;
};

// "\n  - a\n  - b": check_support()'s reasons in a message.
std::string join(const std::vector<std::string>& reasons);

}  // namespace warpforge::ops::rows
