#include "warpforge/runtime/tensor.hpp"

#include <sstream>

#include "warpforge/error.hpp"

namespace warpforge::runtime {
namespace {

std::string join(const std::vector<std::int64_t>& v) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << "]";
  return out.str();
}

}  // namespace

TensorView::TensorView(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::uint64_t byte_offset)
    : TensorView(buffer.device(), buffer.address(), dtype, std::move(shape), std::move(strides), byte_offset) {
  check_layout(buffer.size(), true);
}

TensorView::TensorView(const Device& device, DevicePtr data, DType dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::uint64_t byte_offset)
    : device_(device),
      data_(data),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(strides.empty() ? contiguous_strides(shape_) : std::move(strides)),
      byte_offset_(byte_offset) {
  check_layout(0, false);
}

std::vector<std::int64_t> TensorView::contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

std::string TensorView::describe() const {
  return std::string(name(dtype_)) + join(shape_) + " strides " + join(strides_);
}

void TensorView::check_layout(std::uint64_t capacity, bool bounded) const {
  if (shape_.size() > max_rank)
    throw RuntimeError("tensor of rank " + std::to_string(shape_.size()) + " refused: at most 8 dimensions");
  if (strides_.size() != shape_.size())
    throw RuntimeError("tensor with shape " + join(shape_) + " got " + std::to_string(strides_.size()) +
                       " strides " + join(strides_) + "; give one stride per dimension");
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] < 0 || strides_[i] < 0)
      throw RuntimeError("tensor " + describe() + " refused: extents and strides must be non-negative");
  }
  const int element_bits = bits(dtype_);
  if (element_bits >= 8 && byte_offset_ % (element_bits / 8) != 0)
    throw RuntimeError("tensor " + describe() + " refused: byte offset " + std::to_string(byte_offset_) +
                       " is not a multiple of the " + std::to_string(element_bits / 8) + "-byte element");
  if (element_bits < 8 && rank() > 0) {
    bool rows_on_bytes = shape_.back() <= 1 || strides_.back() == 1;
    for (int i = 0; i + 1 < rank(); ++i) rows_on_bytes = rows_on_bytes && (shape_[i] <= 1 || strides_[i] % 2 == 0);
    if (!rows_on_bytes)
      throw RuntimeError("tensor " + describe() + " refused: " + std::string(name(dtype_)) +
                         " packs two elements per byte, so the last dimension must have stride 1 and "
                         "every other stride must be even");
  }
  if (bounded && byte_offset_ + extent_bytes() > capacity)
    throw RuntimeError("tensor " + describe() + " at byte offset " + std::to_string(byte_offset_) + " spans " +
                       std::to_string(byte_offset_ + extent_bytes()) + " bytes of a buffer of " +
                       std::to_string(capacity) + " bytes");
}

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (auto e : shape_) n *= e;
  return n;
}

std::uint64_t TensorView::extent_bytes() const {
  if (numel() == 0) return 0;
  std::uint64_t last = 0;  // index of the last element, in elements
  for (std::size_t i = 0; i < shape_.size(); ++i) last += static_cast<std::uint64_t>(shape_[i] - 1) * strides_[i];
  return ((last + 1) * bits(dtype_) + 7) / 8;
}

bool TensorView::is_contiguous() const {
  const auto expected = contiguous_strides(shape_);
  for (std::size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] > 1 && strides_[i] != expected[i]) return false;
  return true;
}

void TensorView::require_contiguous(const std::string& use) const {
  if (!is_contiguous())
    throw RuntimeError(use + " needs a contiguous row-major tensor; got " + describe() + ", contiguous strides are " +
                       join(contiguous_strides(shape_)));
}

void TensorView::copy_from_host(const void* src, std::size_t bytes) const {
  require_contiguous("copy_from_host");
  if (bytes != extent_bytes())
    throw RuntimeError("copy_from_host of " + std::to_string(bytes) + " bytes into tensor " + describe() + " of " +
                       std::to_string(extent_bytes()) + " bytes");
  if (bytes) device_.backend().copy_to_device(address(), src, bytes, nullptr);
}

void TensorView::copy_to_host(void* dst, std::size_t bytes) const {
  require_contiguous("copy_to_host");
  if (bytes != extent_bytes())
    throw RuntimeError("copy_to_host of " + std::to_string(bytes) + " bytes from tensor " + describe() + " of " +
                       std::to_string(extent_bytes()) + " bytes");
  if (bytes) device_.backend().copy_to_host(dst, address(), bytes, nullptr);
}

Tensor Tensor::empty(const Device& device, DType dtype, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= std::max<std::int64_t>(e, 0);
  auto buffer = std::make_shared<Buffer>(device, static_cast<std::size_t>((n * bits(dtype) + 7) / 8));
  TensorView view(*buffer, dtype, std::move(shape));
  return Tensor(std::move(view), std::move(buffer));
}

Tensor::Tensor(TensorView view, std::shared_ptr<const void> storage)
    : TensorView(std::move(view)), storage_(std::move(storage)) {}

}  // namespace warpforge::runtime
