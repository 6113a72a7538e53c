// What warpforge.triton (python/warpforge/triton) needs of the C++ library to
// run the PTX that Triton's CUDA backend writes: a simulator of its own
// (triton_simulator: the target it stands for, race checking), a module
// loaded from PTX text and launched with arguments already packed into
// their parameters' bytes (PtxModule, on the simulator or a GPU), host memory
// made addressable at its own address for the duration of a launch, also on
// demand, and scratch memory allocated there (LaunchMemory), and the TMA
// tensor map of a range of that memory (encode_tensor_map). The Python side
// knows Triton's signatures and packs the bytes; nothing here knows Triton.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "launch_config.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"
#include "warpforge/sim/simulator.hpp"

namespace nb = nanobind;

namespace warpforge::python {
namespace {

using Dim3 = Dim3Tuple;

class PtxModule {
 public:
  PtxModule(const std::string& ptx, const std::string& filename, const runtime::Device& device)
      : module_(device, ptx::parse(ptx, filename)) {}

  // (name, bytes) of each parameter of `kernel`, in order.
  std::vector<std::pair<std::string, std::size_t>> params(const std::string& kernel) const {
    std::vector<std::pair<std::string, std::size_t>> out;
    for (const auto& p : function(kernel).params)
      out.emplace_back(p.name, static_cast<std::size_t>(p.size_bytes()));
    return out;
  }

  void launch(const std::string& kernel, Dim3 grid, Dim3 block, std::uint32_t shared_bytes,
              Dim3 cluster, const std::vector<nb::bytes>& args) {
    std::vector<runtime::Arg> packed;
    packed.reserve(args.size());
    for (const nb::bytes& b : args) packed.push_back(runtime::Arg::bytes(b.c_str(), b.size()));
    const runtime::LaunchConfig config = launch_config(grid, block, cluster, shared_bytes);
    nb::gil_scoped_release release;
    module_.launch(kernel, config, packed);
  }

  const runtime::Device& device() const { return module_.device(); }

 private:
  const ptx::Function& function(const std::string& kernel) const {
    const ptx::Function* f = module_.ir().find_function(kernel);
    if (!f || !f->is_entry)
      throw RuntimeError("the PTX module has no kernel (.entry) named '" + kernel + "'");
    return *f;
  }

  runtime::Module module_;
};

// Host memory made addressable by kernels at its own address (Triton's
// host code writes tensors' addresses into memory: grouped GEMM's tables of
// pointers), and device memory allocated, until close().
class LaunchMemory {
 public:
  explicit LaunchMemory(const runtime::Device& device) : device_(device) {}
  LaunchMemory(const LaunchMemory&) = delete;
  LaunchMemory& operator=(const LaunchMemory&) = delete;
  ~LaunchMemory() { close(); }

  void map(std::uint64_t host_address, std::size_t bytes) {
    if (closed_) throw RuntimeError("LaunchMemory is closed");
    mapped_.push_back(device_.backend().map_host_in_place(
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(host_address)), bytes));
  }
  // Has `find` (address, bytes) -> (start, bytes) of the host allocation
  // holding that range, or None, called for every range a kernel reaches
  // outside the mapped memory (addresses it read from a table of pointers);
  // what it finds is mapped like the rest, until close().
  void map_on_demand(nb::callable find) {
    if (closed_) throw RuntimeError("LaunchMemory is closed");
    find_ = std::move(find);  // the handler holds `this` only: it is copied on threads without the GIL
    sim::set_host_memory_handler(device_, [this](std::uint64_t address, std::size_t bytes) {
      nb::gil_scoped_acquire gil;
      try {
        nb::object found = find_(address, bytes);
        if (found.is_none()) return false;
        const auto [start, size] = nb::cast<std::pair<std::uint64_t, std::size_t>>(found);
        map(start, size);
        return true;
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("warpforge: finding the host memory a kernel reached");
        return false;
      }
    });
    handler_set_ = true;
  }
  // Device memory of `bytes`, filled with `fill` (a kernel's scratch).
  runtime::DevicePtr allocate(std::size_t bytes, std::uint8_t fill) {
    if (closed_) throw RuntimeError("LaunchMemory is closed");
    buffers_.emplace_back(device_, bytes);
    buffers_.back().fill(fill);
    return buffers_.back().address();
  }
  void close() {
    if (handler_set_) sim::set_host_memory_handler(device_, {});
    handler_set_ = false;
    buffers_.clear();
    for (runtime::DevicePtr p : mapped_) device_.backend().unmap_host(p);
    mapped_.clear();
    closed_ = true;
  }

 private:
  runtime::Device device_;
  std::vector<runtime::DevicePtr> mapped_;
  std::vector<runtime::Buffer> buffers_;
  bool closed_ = false;
  bool handler_set_ = false;
  nb::object find_;
};

nb::bytes encode_tensor_map(const runtime::Device& device, std::uint64_t address,
                            const std::string& dtype, const std::vector<std::uint64_t>& dims,
                            const std::vector<std::uint64_t>& strides_bytes,
                            const std::vector<std::uint32_t>& box, std::uint32_t swizzle_bytes) {
  const auto type = runtime::parse_dtype(dtype);
  if (!type) throw RuntimeError("encode_tensor_map: '" + dtype + "' is not a warpforge dtype");
  runtime::TensorMapSwizzle swizzle;
  switch (swizzle_bytes) {
    case 0: swizzle = runtime::TensorMapSwizzle::none; break;
    case 32: swizzle = runtime::TensorMapSwizzle::b32; break;
    case 64: swizzle = runtime::TensorMapSwizzle::b64; break;
    case 128: swizzle = runtime::TensorMapSwizzle::b128; break;
    default:
      throw RuntimeError("encode_tensor_map: a swizzle of " + std::to_string(swizzle_bytes) +
                         " bytes; accepted: 0, 32, 64, 128");
  }
  const runtime::TensorMapDesc desc{.dtype = *type,
                                    .address = address,
                                    .dims = dims,
                                    .strides_bytes = strides_bytes,
                                    .box = box,
                                    .swizzle = swizzle};
  const runtime::TensorMap map = runtime::make_tensor_map(device, desc);
  return nb::bytes(reinterpret_cast<const char*>(map.bytes.data()), map.bytes.size());
}

}  // namespace

// A simulator of its own for Triton's kernels: standing for a GPU of
// `target`, checking shared-memory races where asked.
runtime::Device triton_simulator(const std::string& target, bool check_shared_races) {
  const auto t = ptx::parse_target(target);
  if (!t) throw RuntimeError("triton_simulator: '" + target + "' is not a PTX target");
  sim::SimOptions options;
  options.target = *t;
  options.check_shared_races = check_shared_races;
  return runtime::Device(sim::make_backend(options));
}

void bind_triton(nb::module_& m) {
  m.def("triton_simulator", &triton_simulator, nb::arg("target"), nb::arg("check_shared_races"),
        "A new simulator device standing for a GPU of `target`, reporting shared-memory races where asked.");
  nb::class_<PtxModule>(m, "PtxModule",
                        "PTX text (as Triton's CUDA backend writes it) loaded on a device; its "
                        "kernels launched with each parameter's bytes.")
      .def(nb::init<const std::string&, const std::string&, const runtime::Device&>(), nb::arg("ptx"),
           nb::arg("filename"), nb::arg("device"))
      .def_prop_ro("device", &PtxModule::device)
      .def("params", &PtxModule::params, nb::arg("kernel"),
           "(name, bytes) of each parameter of the kernel, in order.")
      .def("launch", &PtxModule::launch, nb::arg("kernel"), nb::arg("grid"), nb::arg("block"),
           nb::arg("shared_bytes"), nb::arg("cluster"), nb::arg("args"),
           "Runs the kernel; args holds each parameter's bytes (checked against its size).");
  nb::class_<LaunchMemory>(m, "LaunchMemory",
                           "Host memory addressable by the simulator's kernels at its own address, "
                           "and device memory, until close().")
      .def(nb::init<const runtime::Device&>(), nb::arg("device"))
      .def("map", &LaunchMemory::map, nb::arg("host_address"), nb::arg("bytes"),
           "Makes `bytes` host bytes addressable by kernels at their own address.")
      .def("map_on_demand", &LaunchMemory::map_on_demand, nb::arg("find"),
           "Maps, when a kernel reaches host memory outside the mapped ranges, the allocation find(address, "
           "bytes) returns as (start, bytes) (None: there is none, the access is reported).")
      .def("allocate", &LaunchMemory::allocate, nb::arg("bytes"), nb::arg("fill"),
           "The address of new device memory filled with the byte `fill`.")
      .def("close", &LaunchMemory::close);
  m.def("encode_tensor_map", &encode_tensor_map, nb::arg("device"), nb::arg("address"), nb::arg("dtype"),
        nb::arg("dims"), nb::arg("strides_bytes"), nb::arg("box"), nb::arg("swizzle_bytes"),
        "The 128 bytes of the tiled TMA tensor map of memory at a device address: dims and box "
        "innermost first, strides in bytes of dims[1:], swizzle 0, 32, 64 or 128 bytes.");
}

}  // namespace warpforge::python
