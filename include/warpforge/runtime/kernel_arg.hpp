// One argument of a kernel launch, as the caller gives it: a device address
// (from a Buffer, a TensorView or a raw address), a C++ integer or floating
// value of a definite width, or raw bytes (a TMA descriptor, a struct). The
// launch checks each against the kernel's .param declaration
// (launch_check.hpp) before packing it into the bytes the backend passes on.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime {

class Buffer;
class TensorView;

class Arg {
 public:
  enum class Kind : std::uint8_t { pointer, integer, floating, bytes };

  Arg(const Buffer& buffer);      // its address
  Arg(const TensorView& tensor);  // the address of its first element

  // An integer of the type's width (int32_t -> 4 bytes). bool is refused at
  // compile time: PTX has no boolean parameter type.
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Arg(T value) : kind_(Kind::integer), is_signed_(std::is_signed_v<T>) {
    set(&value, sizeof value);
  }
  template <std::floating_point T>
    requires(sizeof(T) == 4 || sizeof(T) == 8)
  Arg(T value) : kind_(Kind::floating) {
    set(&value, sizeof value);
  }

  // A device address given as a number (for memory warpforge did not allocate).
  static Arg pointer(DevicePtr address);
  // The bytes of a byte-array or vector parameter, or the raw bits of any
  // parameter of the same size.
  static Arg bytes(const void* data, std::size_t size);
  template <class T>
    requires std::is_trivially_copyable_v<T>
  static Arg bytes_of(const T& value) {
    return bytes(&value, sizeof value);
  }

  Kind kind() const { return kind_; }
  std::size_t size() const { return size_; }
  const std::byte* data() const { return size_ <= inline_.size() ? inline_.data() : heap_.data(); }
  DevicePtr address() const;  // for Kind::pointer
  // "pointer 0x7f3a00000000", "i32 -5", "u64 7", "f32 1.5", "128 bytes".
  std::string describe() const;

 private:
  Arg(Kind kind) : kind_(kind) {}
  void set(const void* data, std::size_t size);

  Kind kind_;
  bool is_signed_ = false;
  std::size_t size_ = 0;
  std::array<std::byte, 8> inline_{};  // scalars and pointers: no allocation per launch
  std::vector<std::byte> heap_;        // larger byte arguments
};

}  // namespace warpforge::runtime
