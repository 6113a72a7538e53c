// Tensors in device memory: a TensorView is an address with a dtype, a shape
// and strides (both counted in elements, up to 8 dimensions) on one device,
// owning nothing; a Tensor is a view that also keeps its storage alive (a
// Buffer it allocated, or memory imported through DLPack).
//
// For e2m1 (two elements per byte) element i of the flattened strided index
// lies in byte i/2, low nibble first; so that every row starts on a byte its
// last dimension must be contiguous and every other stride even.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::runtime {

class TensorView {
 public:
  static constexpr int max_rank = 8;

  // A view of `buffer`; empty `strides` means contiguous row-major. Throws
  // RuntimeError when the rank exceeds 8, an extent or stride is negative,
  // `byte_offset` is not a multiple of the element size, or the strided
  // extent does not lie inside the buffer.
  TensorView(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
             std::vector<std::int64_t> strides = {}, std::uint64_t byte_offset = 0);
  // A view of memory whose size is not known here (imported memory): the
  // same checks but the bounds.
  TensorView(const Device& device, DevicePtr data, DType dtype, std::vector<std::int64_t> shape,
             std::vector<std::int64_t> strides = {}, std::uint64_t byte_offset = 0);

  const Device& device() const { return device_; }
  DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  DevicePtr data() const { return data_; }                   // the base the byte offset is added to
  std::uint64_t byte_offset() const { return byte_offset_; }
  DevicePtr address() const { return data_ + byte_offset_; }  // the first element
  std::int64_t numel() const;
  // Bytes from address() to the end of the last element (0 when empty).
  std::uint64_t extent_bytes() const;

  bool is_contiguous() const;  // row-major without gaps (size-1 dimensions ignored)
  // Throws RuntimeError naming `use` and the strides when not contiguous.
  void require_contiguous(const std::string& use) const;

  // Whole-tensor copies of a contiguous view; `bytes` must equal extent_bytes().
  void copy_from_host(const void* src, std::size_t bytes) const;
  void copy_to_host(void* dst, std::size_t bytes) const;

  static std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);
  std::string describe() const;  // "bf16[16, 8] strides [8, 1]"

 private:
  void check_layout(std::uint64_t capacity, bool bounded) const;

  Device device_;
  DevicePtr data_;
  DType dtype_;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> strides_;
  std::uint64_t byte_offset_;
};

class Tensor : public TensorView {
 public:
  // A new contiguous tensor in its own Buffer (contents undefined).
  static Tensor empty(const Device& device, DType dtype, std::vector<std::int64_t> shape);
  // `view` whose memory `storage` keeps alive for as long as the Tensor (and
  // any copy of it, or DLPack export of it) lives.
  Tensor(TensorView view, std::shared_ptr<const void> storage);

  const std::shared_ptr<const void>& storage() const { return storage_; }

 private:
  std::shared_ptr<const void> storage_;
};

}  // namespace warpforge::runtime
