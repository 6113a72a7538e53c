#include "warpforge/runtime/kernel_arg.hpp"

#include <sstream>

#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::runtime {

Arg::Arg(const Buffer& buffer) : Arg(pointer(buffer.address())) {}
Arg::Arg(const TensorView& tensor) : Arg(pointer(tensor.address())) {}

Arg Arg::pointer(DevicePtr address) {
  Arg a(Kind::pointer);
  a.set(&address, sizeof address);
  return a;
}

Arg Arg::bytes(const void* data, std::size_t size) {
  Arg a(Kind::bytes);
  a.set(data, size);
  return a;
}

void Arg::set(const void* data, std::size_t size) {
  size_ = size;
  if (size <= inline_.size()) {
    if (size) std::memcpy(inline_.data(), data, size);
  } else {
    heap_.resize(size);
    std::memcpy(heap_.data(), data, size);
  }
}

DevicePtr Arg::address() const {
  DevicePtr p = 0;
  std::memcpy(&p, data(), sizeof p);
  return p;
}

std::string Arg::describe() const {
  std::ostringstream out;
  switch (kind_) {
    case Kind::pointer:
      out << "pointer 0x" << std::hex << address();
      break;
    case Kind::integer: {
      std::uint64_t raw = 0;
      std::memcpy(&raw, data(), size_);
      out << (is_signed_ ? "i" : "u") << size_ * 8 << " ";
      if (is_signed_) {
        const int shift = 64 - 8 * static_cast<int>(size_);  // sign-extend from the value's width
        out << (static_cast<std::int64_t>(raw << shift) >> shift);
      } else {
        out << raw;
      }
      break;
    }
    case Kind::floating:
      if (size_ == 4) {
        float f;
        std::memcpy(&f, data(), 4);
        out << "f32 " << f;
      } else {
        double d;
        std::memcpy(&d, data(), 8);
        out << "f64 " << d;
      }
      break;
    case Kind::bytes:
      out << size_ << " bytes";
      break;
  }
  return out.str();
}

}  // namespace warpforge::runtime
