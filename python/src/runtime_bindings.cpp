// Devices and tensors: warpforge.Device, the Tensor handle the package's ops
// take, and the DLPack import (with a byte dtype reinterpreted as a
// float one of its width where a framework has no DLPack code for it).
#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <mutex>

#include "bindings.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/dlpack.hpp"

namespace nb = nanobind;
using namespace warpforge::runtime;

namespace warpforge::python {

Device simulator() {
  static Device* sim =
      new Device(Device::sim());  // never destroyed: mappings may outlive module teardown
  return *sim;
}

Device cuda_device(int ordinal) {
  static std::mutex mutex;
  static auto* devices = new std::map<int, Device>();
  std::lock_guard lock(mutex);
  auto it = devices->find(ordinal);
  if (it == devices->end()) it = devices->emplace(ordinal, Device::cuda(ordinal)).first;
  return it->second;
}

std::optional<Stream> caller_stream(const Device& device, std::optional<std::uintptr_t> handle) {
  if (!handle || device.is_simulator()) return std::nullopt;
  return Stream::borrow(device, *handle);
}

namespace {

DType dtype_named(const std::string& text) {
  if (auto t = parse_dtype(text)) return *t;
  throw RuntimeError("dtype '" + text +
                     "' is not a warpforge dtype; accepted: f32, f16, bf16, e4m3, e5m2, e2m1, "
                     "e8m0, i8, u8, i16, i32, "
                     "u32, i64, u64, f64");
}

// Takes the capsule's DLManagedTensor (renaming the capsule "used_dltensor",
// as the DLPack protocol asks, so that its destructor leaves it alone).
Tensor import_capsule(nb::capsule capsule, std::optional<std::string> as_dtype,
                      const std::string& role) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) {
    PyErr_Clear();
    throw RuntimeError(
        role + ": not a DLPack capsule named 'dltensor' (already consumed, or a versioned one)");
  }
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  const DLDevice where = managed->dl_tensor.device;
  Tensor t = [&] {
    try {
      if (where.device_type == kDLCPU) return from_dlpack(managed, simulator());
      if (where.device_type == kDLCUDA) {
        std::optional<Device> device;
        try {
          device = cuda_device(where.device_id);
        } catch (...) {
          if (managed->deleter) managed->deleter(managed);
          throw;
        }
        return from_dlpack(managed, *device);
      }
      if (managed->deleter) managed->deleter(managed);
      throw RuntimeError(
          "DLPack device type " + std::to_string(static_cast<int>(where.device_type)) +
          " is neither the host (kDLCPU, run on the simulator) nor a CUDA GPU (kDLCUDA)");
    } catch (const RuntimeError& e) {
      throw RuntimeError(role + ": " + e.what());
    }
  }();
  if (!as_dtype) return t;
  const DType wanted = dtype_named(*as_dtype);
  const bool integer = t.dtype() == DType::u8 || t.dtype() == DType::i8 || t.dtype() == DType::i16;
  if (!integer || bits(t.dtype()) != bits(wanted))
    throw RuntimeError(
        role + ": " + t.describe() + " cannot be read as " + *as_dtype +
        ": only u8/i8 (as e4m3, e5m2, e8m0) and i16 (as bf16, f16) are reinterpreted");
  TensorView view(t.device(), t.data(), wanted, t.shape(), t.strides(), t.byte_offset());
  return Tensor(std::move(view), t.storage());
}

std::string describe_device(const Device& d) {
  if (d.is_simulator()) return "Device.sim()";
  return "Device.cuda(" + std::to_string(d.properties().ordinal) + ") '" + d.properties().name +
         "'";
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Device>(m, "Device", "A CUDA GPU or the CPU simulator.")
      .def_static("cuda", &cuda_device, nb::arg("ordinal") = 0, "The CUDA GPU of this ordinal.")
      .def_static("sim", &simulator, "The CPU simulator (where NumPy arrays run).")
      .def_static("cuda_count", &Device::cuda_count, "The number of CUDA GPUs; 0 without a driver.")
      .def_prop_ro("is_simulator", &Device::is_simulator)
      .def_prop_ro("name", [](const Device& d) { return d.properties().name; })
      .def_prop_ro("ordinal", [](const Device& d) { return d.properties().ordinal; })
      .def_prop_ro("compute_capability",
                   [](const Device& d) {
                     return std::make_tuple(d.properties().compute_capability_major,
                                            d.properties().compute_capability_minor);
                   })
      .def_prop_ro("sm_count", [](const Device& d) { return d.properties().sm_count; })
      .def_prop_ro("target", [](const Device& d) { return std::string(ptx::name(d.target())); })
      .def("synchronize", &Device::synchronize)
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__repr__", &describe_device);

  nb::class_<Tensor>(
      m, "Tensor",
      "A tensor in device (or simulator-mapped host) memory: the form warpforge's ops take. "
      "It keeps the producer's memory alive.")
      .def_prop_ro("device", [](const Tensor& t) { return t.device(); })
      .def_prop_ro("dtype", [](const Tensor& t) { return std::string(name(t.dtype())); })
      .def_prop_ro("shape", [](const Tensor& t) { return t.shape(); })
      .def_prop_ro("strides", [](const Tensor& t) { return t.strides(); })
      .def_prop_ro("address", [](const Tensor& t) { return t.address(); })
      .def("describe", &Tensor::describe)
      .def("__repr__", [](const Tensor& t) { return "warpforge.Tensor(" + t.describe() + ")"; });

  m.def("from_dlpack", &import_capsule, nb::arg("capsule"), nb::arg("as_dtype") = nb::none(),
        nb::arg("role") = "tensor",
        "A Tensor sharing a DLPack capsule's memory (no copy). Host memory goes to the simulator. "
        "as_dtype reads integers as a float dtype of their width (u8/i8 as e4m3, e5m2 or e8m0; i16 "
        "as bf16 "
        "or f16) for producers with no DLPack code for it. Errors name `role`.");
  nb::class_<TensorMapArg>(m, "TensorMap",
                           "A TMA tensor map of a tensor: a kernel argument (128 bytes).")
      .def_prop_ro("tensor", [](const TensorMapArg& t) { return t.tensor; });
  m.def(
      "tensor_map",
      [](const Tensor& t, const std::vector<std::uint32_t>& box, const std::string& swizzle,
         const std::vector<std::uint32_t>& element_strides) {
        if (t.rank() < 1 || t.strides().back() != 1)
          throw RuntimeError("tensor_map of " + t.describe() +
                             ": the last dimension must have stride 1");
        TensorMapDesc desc{.dtype = t.dtype(),
                           .address = t.address(),
                           .box = box,
                           .element_strides = element_strides};
        const std::uint64_t element = tensor_map_element_bytes(t.dtype());
        for (int i = t.rank() - 1; i >= 0; --i) {  // innermost first
          const auto at = static_cast<std::size_t>(i);
          desc.dims.push_back(static_cast<std::uint64_t>(t.shape()[at]));
          if (i < t.rank() - 1)
            desc.strides_bytes.push_back(static_cast<std::uint64_t>(t.strides()[at]) * element);
        }
        const std::pair<const char*, TensorMapSwizzle> modes[] = {{"none", TensorMapSwizzle::none},
                                                                  {"b32", TensorMapSwizzle::b32},
                                                                  {"b64", TensorMapSwizzle::b64},
                                                                  {"b128", TensorMapSwizzle::b128}};
        bool known = false;
        for (const auto& [mode_name, mode] : modes)
          if (swizzle == mode_name) desc.swizzle = mode, known = true;
        if (!known) throw RuntimeError("swizzle '" + swizzle + "': accepted none, b32, b64, b128");
        return TensorMapArg{t, make_tensor_map(t.device(), desc)};
      },
      nb::arg("tensor"), nb::arg("box"), nb::arg("swizzle") = "none",
      nb::arg("element_strides") = std::vector<std::uint32_t>{},
      "The TMA tensor map of a tensor on its device (the GPU's driver encodes it, or the "
      "simulator); box and "
      "element_strides innermost dimension first, as tma_load's coordinates.");
  m.def(
      "dtype_bits", [](const std::string& n) { return bits(dtype_named(n)); }, nb::arg("dtype"));
}

}  // namespace warpforge::python
