#include "warpforge/runtime/dlpack.hpp"

#include <array>
#include <memory>
#include <optional>

#include "warpforge/error.hpp"

namespace warpforge::runtime {
namespace {

// Codes of DLPack 1.1's DLDataTypeCode that dlpack.h v0.6 does not define
// (see dlpack.hpp).
constexpr std::uint8_t kDLFloat8_e4m3fn = 10;
constexpr std::uint8_t kDLFloat8_e5m2 = 12;
constexpr std::uint8_t kDLFloat8_e8m0fnu = 14;
constexpr std::uint8_t kDLFloat4_e2m1fn = 17;

struct Mapping {
  DType dtype;
  std::uint8_t code;
};

constexpr std::array<Mapping, 15> kMappings{{
    {DType::f32, kDLFloat},
    {DType::f16, kDLFloat},
    {DType::bf16, kDLBfloat},
    {DType::e4m3, kDLFloat8_e4m3fn},
    {DType::e5m2, kDLFloat8_e5m2},
    {DType::e2m1, kDLFloat4_e2m1fn},
    {DType::e8m0, kDLFloat8_e8m0fnu},
    {DType::i8, kDLInt},
    {DType::u8, kDLUInt},
    {DType::i16, kDLInt},
    {DType::i32, kDLInt},
    {DType::u32, kDLUInt},
    {DType::i64, kDLInt},
    {DType::u64, kDLUInt},
    {DType::f64, kDLFloat},
}};

// What an exported DLManagedTensor owns: the storage and the arrays its
// DLTensor points into.
struct ExportContext {
  std::shared_ptr<const void> storage;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); }

std::string describe(DLDevice d) {
  return "(device_type " + std::to_string(static_cast<int>(d.device_type)) + ", device_id " +
         std::to_string(d.device_id) + ")";
}

}  // namespace

DLDataType to_dlpack(DType dtype) {
  const Mapping& m = kMappings[static_cast<std::size_t>(dtype)];
  return DLDataType{m.code, static_cast<std::uint8_t>(bits(dtype)), 1};
}

DType dtype_from_dlpack(DLDataType type) {
  for (const Mapping& m : kMappings) {
    if (m.code == type.code && bits(m.dtype) == type.bits && type.lanes == 1) return m.dtype;
  }
  throw RuntimeError("DLPack dtype (code " + std::to_string(type.code) + ", bits " + std::to_string(type.bits) +
                     ", lanes " + std::to_string(type.lanes) +
                     ") has no warpforge dtype; accepted: int 8/16/32/64, uint 8/32/64, float 16/32/64, "
                     "bfloat 16, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn, all with lanes 1");
}

DLDevice dlpack_device(const Device& device) {
  if (device.is_simulator()) return DLDevice{kDLExtDev, 0};
  return DLDevice{kDLCUDA, device.properties().ordinal};
}

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  auto ctx = std::make_unique<ExportContext>();
  ctx->storage = tensor.storage();
  ctx->shape = tensor.shape();
  ctx->strides = tensor.strides();
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = reinterpret_cast<void*>(tensor.data());
  t.device = dlpack_device(tensor.device());
  t.ndim = tensor.rank();
  t.dtype = to_dlpack(tensor.dtype());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = tensor.byte_offset();
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = delete_export;
  return &ctx.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* managed, const Device& device) {
  if (!managed) throw RuntimeError("from_dlpack given a null DLManagedTensor");
  // Owned from here on: the deleter runs when the last user lets go, or now
  // if the import is refused.
  std::shared_ptr<const void> owner(managed, [](const void* p) {
    auto* m = static_cast<DLManagedTensor*>(const_cast<void*>(p));
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& t = managed->dl_tensor;
  const DLDevice expected = dlpack_device(device);
  const bool host_on_simulator = t.device.device_type == kDLCPU && device.is_simulator();
  if (!host_on_simulator &&
      (t.device.device_type != expected.device_type || t.device.device_id != expected.device_id))
    throw RuntimeError("from_dlpack: the tensor lives on DLPack device " + describe(t.device) +
                       ", not on the requested device " + describe(expected) +
                       (device.is_simulator() ? " or the host (kDLCPU)" : ""));
  if (t.ndim < 0 || t.ndim > TensorView::max_rank)
    throw RuntimeError("from_dlpack: tensor of rank " + std::to_string(t.ndim) + " refused: at most 8 dimensions");
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<std::int64_t> strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  TensorView view(device, reinterpret_cast<DevicePtr>(t.data), dtype_from_dlpack(t.dtype), std::move(shape),
                  std::move(strides), t.byte_offset);
  if (!host_on_simulator) return Tensor(std::move(view), std::move(owner));
  // Host memory (NumPy) on the simulator: the bytes from t.data to the last
  // element are mapped into the simulated address space, not copied; the
  // mapping goes before the producer's memory does.
  const std::uint64_t bytes = t.byte_offset + view.extent_bytes();
  const DevicePtr mapped = device.backend().map_host(t.data, bytes);
  // (The deleter unmaps; `owner`, which it holds, lets go of the memory after.)
  std::shared_ptr<const void> mapping(
      owner.get(), [device, mapped, owner](const void*) { device.backend().unmap_host(mapped); });
  TensorView mapped_view(device, mapped, view.dtype(), view.shape(), view.strides(),
                         view.byte_offset());
  return Tensor(std::move(mapped_view), std::move(mapping));
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (!managed) throw RuntimeError("from_dlpack given a null DLManagedTensor");
  auto release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  const DLDevice d = managed->dl_tensor.device;
  if (d.device_type != kDLCUDA) {
    release();
    throw RuntimeError("from_dlpack without a device takes kDLCUDA tensors only; this one is on " + describe(d) +
                       "; pass the Device it belongs to");
  }
  std::optional<Device> device;
  try {
    device = Device::cuda(d.device_id);
  } catch (...) {
    release();
    throw;
  }
  return from_dlpack(managed, *device);
}

}  // namespace warpforge::runtime
