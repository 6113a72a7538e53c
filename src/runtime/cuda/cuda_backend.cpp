#include "warpforge/runtime/cuda_backend.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "context_scope.hpp"
#include "driver.hpp"
#include "jit.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {

using namespace cuda;

struct CudaBackend::Context {
  CUdevice device = 0;
  CUcontext context = nullptr;
};

namespace {

// CUDA C++ Programming Guide, "Shared Memory": above 48 KB per block a kernel
// must opt in through CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
struct KernelState {
  CUfunction function = nullptr;
  int static_shared = 0;                     // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  std::atomic<int> max_dynamic_shared = 0;   // the kernel's current dynamic limit (raised under the mutex)
};

class CudaModule final : public LoadedModule {
 public:
  CudaModule(const CudaBackend& backend, CUcontext context, ptx::Module ir, CUmodule module)
      : backend_(backend), context_(context), ir_(std::move(ir)), module_(module) {}
  ~CudaModule() override {
    // Unloading fails only when the context is already broken; a destructor
    // has nobody to tell.
    if (const ContextScope scope(context_); scope.result() == CUDA_SUCCESS) driver().cuModuleUnload(module_);
  }
  const ptx::Module& ir() const override { return ir_; }

  KernelState& kernel(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second;
    const Driver& d = driver();
    CUfunction function = nullptr;
    int static_shared = 0, max_dynamic_shared = 0;
    check(d.cuModuleGetFunction(&function, module_, name.c_str()), [&] { return "cuModuleGetFunction(" + name + ")"; });
    check(d.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
          [&] { return "cuFuncGetAttribute(" + name + ", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)"; });
    check(d.cuFuncGetAttribute(&max_dynamic_shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function),
          [&] { return "cuFuncGetAttribute(" + name + ", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)"; });
    KernelState& k = kernels_[name];
    k.function = function;
    k.static_shared = static_shared;
    k.max_dynamic_shared = max_dynamic_shared;
    return k;
  }

  // Raises the kernel's dynamic shared memory limit to `bytes` if it is
  // lower (a launch's common case, the limit already high enough, takes no
  // lock).
  void allow_dynamic_shared(const std::string& name, KernelState& k, std::uint32_t bytes, std::size_t optin_limit) {
    if (static_cast<int>(bytes) <= k.max_dynamic_shared.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    if (static_cast<int>(bytes) <= k.max_dynamic_shared.load(std::memory_order_relaxed)) return;
    if (k.static_shared + bytes > optin_limit)
      throw RuntimeError("kernel '" + name + "': " + std::to_string(bytes) + " bytes of dynamic shared memory plus " +
                         std::to_string(k.static_shared) + " static (as compiled) exceed the " +
                         std::to_string(optin_limit) + " bytes per block the device allows");
    check(driver().cuFuncSetAttribute(k.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(bytes)),
          [&] {
            return "cuFuncSetAttribute(" + name + ", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                   std::to_string(bytes) + ")";
          });
    k.max_dynamic_shared.store(static_cast<int>(bytes), std::memory_order_release);
  }

  const CudaBackend& backend() const { return backend_; }

 private:
  const CudaBackend& backend_;
  CUcontext context_;
  ptx::Module ir_;
  CUmodule module_;
  std::mutex mutex_;
  std::map<std::string, KernelState> kernels_;  // node-based: references stay valid
};

// Streams and events are destroyed in their own context, whichever thread
// drops them; as with modules, a failure here has nobody to be reported to.
struct CudaStream final : StreamHandle {
  CudaStream(CUcontext c, bool owned) : context(c), owned(owned) {}
  ~CudaStream() override {
    if (!owned || !stream) return;
    if (const ContextScope scope(context); scope.result() == CUDA_SUCCESS) driver().cuStreamDestroy(stream);
  }
  CUcontext context;
  bool owned;  // false for a borrowed stream, which its creator destroys
  CUstream stream = nullptr;
};

struct CudaEvent final : EventHandle {
  explicit CudaEvent(CUcontext c) : context(c) {}
  ~CudaEvent() override {
    if (!event) return;
    if (const ContextScope scope(context); scope.result() == CUDA_SUCCESS) driver().cuEventDestroy(event);
  }
  CUcontext context;
  CUevent event = nullptr;
};

CUstream stream_of(StreamHandle* s) {
  if (!s) return nullptr;  // the legacy default stream
  auto* cs = dynamic_cast<CudaStream*>(s);
  if (!cs) throw RuntimeError("a stream of another backend was given to the CUDA backend");
  return cs->stream;
}

CUevent event_of(EventHandle& e) {
  auto* ce = dynamic_cast<CudaEvent*>(&e);
  if (!ce) throw RuntimeError("an event of another backend was given to the CUDA backend");
  return ce->event;
}

std::string hex(DevicePtr p) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(p));
  return text;
}

std::string module_name(const ptx::Module& m) {
  std::string names;
  for (const auto* e : m.entries()) names += (names.empty() ? "" : ", ") + e->name;
  return "the module with kernels " + (names.empty() ? std::string("(none)") : names);
}

}  // namespace

CudaBackend::CudaBackend(int ordinal)
    : context_(std::make_unique<Context>()), cache_(BinaryCache::default_directory()) {
  const Driver& d = driver();
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw RuntimeError("CUDA device " + std::to_string(ordinal) + " requested; this machine has " +
                       std::to_string(count) + (count == 1 ? " device (ordinal 0)" : " devices"));
  check(d.cuDeviceGet(&context_->device, ordinal), [&] { return "cuDeviceGet(" + std::to_string(ordinal) + ")"; });
  const CUdevice dev = context_->device;

  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  auto attribute = [&](CUdevice_attribute a, const char* what) {
    int value = 0;
    check(d.cuDeviceGetAttribute(&value, a, dev), [&] { return std::string("cuDeviceGetAttribute(") + what + ")"; });
    return value;
  };
  properties_.name = name;
  properties_.ordinal = ordinal;
  properties_.compute_capability_major =
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  properties_.compute_capability_minor =
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR");
  properties_.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  properties_.shared_bytes_per_block =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK");
  properties_.shared_bytes_per_block_optin =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  properties_.shared_bytes_per_sm =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR");
  properties_.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK");
  properties_.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE");
  check(d.cuDeviceTotalMem(&properties_.global_bytes, dev), "cuDeviceTotalMem_v2");
  target_ = target_for(properties_);  // refuses devices older than sm_80

  check(d.cuDevicePrimaryCtxRetain(&context_->context, dev), "cuDevicePrimaryCtxRetain");
}

CudaBackend::~CudaBackend() {
  if (context_->context) driver().cuDevicePrimaryCtxRelease(context_->device);
}

ContextScope CudaBackend::enter() const {
  ContextScope scope(context_->context);
  check(scope.result(), "cuCtxSetCurrent");
  return scope;
}

int CudaBackend::driver_version() const { return driver().version; }

std::size_t CudaBackend::free_bytes() {
  const ContextScope scope = enter();
  std::size_t free = 0, total = 0;
  check(driver().cuMemGetInfo(&free, &total), "cuMemGetInfo_v2");
  return free;
}

DevicePtr CudaBackend::allocate(std::size_t bytes) {
  const ContextScope scope = enter();
  CUdeviceptr p = 0;
  check(driver().cuMemAlloc(&p, bytes), [&] { return "cuMemAlloc_v2(" + std::to_string(bytes) + " bytes)"; });
  return p;
}

void CudaBackend::free(DevicePtr ptr) {
  const ContextScope scope = enter();
  check(driver().cuMemFree(ptr), [&] { return "cuMemFree_v2(" + hex(ptr) + ")"; });
}

void CudaBackend::copy_to_device(DevicePtr dst, const void* src, std::size_t bytes, StreamHandle* stream) {
  const ContextScope scope = enter();
  const Driver& d = driver();
  auto call = [&] { return "cuMemcpyHtoD" + std::string(stream ? "Async" : "") + "_v2(" + hex(dst) + ", " +
                           std::to_string(bytes) + " bytes)"; };
  check(stream ? d.cuMemcpyHtoDAsync(dst, src, bytes, stream_of(stream)) : d.cuMemcpyHtoD(dst, src, bytes), call);
}

void CudaBackend::copy_to_host(void* dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) {
  const ContextScope scope = enter();
  const Driver& d = driver();
  auto call = [&] { return "cuMemcpyDtoH" + std::string(stream ? "Async" : "") + "_v2(" + hex(src) + ", " +
                           std::to_string(bytes) + " bytes)"; };
  check(stream ? d.cuMemcpyDtoHAsync(dst, src, bytes, stream_of(stream)) : d.cuMemcpyDtoH(dst, src, bytes), call);
}

void CudaBackend::copy_device_to_device(DevicePtr dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) {
  const ContextScope scope = enter();
  const Driver& d = driver();
  auto call = [&] { return "cuMemcpyDtoD" + std::string(stream ? "Async" : "") + "_v2(" + hex(dst) + ", " +
                           hex(src) + ", " + std::to_string(bytes) + " bytes)"; };
  check(stream ? d.cuMemcpyDtoDAsync(dst, src, bytes, stream_of(stream)) : d.cuMemcpyDtoD(dst, src, bytes), call);
}

void CudaBackend::fill(DevicePtr dst, std::uint8_t byte, std::size_t bytes, StreamHandle* stream) {
  const ContextScope scope = enter();
  const Driver& d = driver();
  auto call = [&] { return std::string(stream ? "cuMemsetD8Async(" : "cuMemsetD8_v2(") + hex(dst) + ", " +
                           std::to_string(byte) + ", " + std::to_string(bytes) + " bytes)"; };
  check(stream ? d.cuMemsetD8Async(dst, byte, bytes, stream_of(stream)) : d.cuMemsetD8(dst, byte, bytes), call);
}

std::unique_ptr<StreamHandle> CudaBackend::create_stream() {
  const ContextScope scope = enter();
  auto s = std::make_unique<CudaStream>(context_->context, true);
  // Flags 0 (CU_STREAM_DEFAULT): the stream also orders with the legacy
  // default stream that the synchronous copies use.
  check(driver().cuStreamCreate(&s->stream, 0), "cuStreamCreate");
  return s;
}

std::unique_ptr<StreamHandle> CudaBackend::borrow_stream(std::uintptr_t native) {
  auto s = std::make_unique<CudaStream>(context_->context, false);
  s->stream = reinterpret_cast<CUstream>(native);
  return s;
}

void CudaBackend::synchronize(StreamHandle* stream) {
  const ContextScope scope = enter();
  if (stream)
    check(driver().cuStreamSynchronize(stream_of(stream)), "cuStreamSynchronize");
  else
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

std::unique_ptr<EventHandle> CudaBackend::create_event() {
  const ContextScope scope = enter();
  auto e = std::make_unique<CudaEvent>(context_->context);
  check(driver().cuEventCreate(&e->event, 0), "cuEventCreate");
  return e;
}

void CudaBackend::record(EventHandle& event, StreamHandle* stream) {
  const ContextScope scope = enter();
  check(driver().cuEventRecord(event_of(event), stream_of(stream)), "cuEventRecord");
}

void CudaBackend::synchronize_event(EventHandle& event) {
  const ContextScope scope = enter();
  check(driver().cuEventSynchronize(event_of(event)), "cuEventSynchronize");
}

float CudaBackend::elapsed_ms(EventHandle& start, EventHandle& end) {
  const ContextScope scope = enter();
  check(driver().cuEventSynchronize(event_of(end)), "cuEventSynchronize");
  float ms = 0;
  check(driver().cuEventElapsedTime(&ms, event_of(start), event_of(end)), "cuEventElapsedTime");
  return ms;
}

std::unique_ptr<LoadedModule> CudaBackend::load(const ptx::Module& module) {
  const ContextScope scope = enter();
  const std::string ptx = ptx::emit(module);
  const std::string what = module_name(module);
  std::optional<int> jit_target;
  if (!module.target.empty()) {
    if (auto t = ptx::parse_target(module.target.front()); t && ptx::arch_specific(*t))
      jit_target = CU_COMPUTE_ACCELERATED_TARGET_BASE + ptx::sm_number(*t);
  }
  CUmodule loaded = nullptr;
  if (needs_whole_program(ptx)) {
    loaded = load_whole_program(ptx, what, jit_target);
  } else {
    const CacheKey key = CacheKey::compute(ptx, ptx::name(target_), driver_version());
    auto cubin = cache_.get_or_build(key, [&] { return compile_ptx(ptx, what, jit_target); });
    check(driver().cuModuleLoadDataEx(&loaded, cubin->data(), 0, nullptr, nullptr),
          [&] { return "cuModuleLoadDataEx(cubin of " + what + ")"; });
  }
  return std::make_unique<CudaModule>(*this, context_->context, module, loaded);
}

namespace {

// Whether $WARPFORGE_SERIAL_LAUNCHES=1 turns programmatic dependent launch
// off (LaunchConfig::overlap_previous), read once.
bool serial_launches() {
  static const bool serial = [] {
    const char* v = std::getenv("WARPFORGE_SERIAL_LAUNCHES");
    return v && std::string_view(v) == "1";
  }();
  return serial;
}

// cuLaunchKernelEx's attributes for `config`: its cluster dimension and
// programmatic stream serialization (CUDA driver API, "Execution Control").
struct LaunchAttributes {
  CUlaunchAttribute attrs[2]{};
  unsigned count = 0;
  explicit LaunchAttributes(const LaunchConfig& config) {
    if (config.cluster != Dim3{}) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[count++].value.clusterDim = {config.cluster.x, config.cluster.y, config.cluster.z};
    }
    if (config.overlap_previous && !serial_launches()) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[count++].value.programmaticStreamSerializationAllowed = 1;
    }
  }
};

// cuLaunchKernelEx's description of `config` with `attributes` (which must
// outlive the result).
CUlaunchConfig launch_config(const LaunchConfig& config, LaunchAttributes& attributes, CUstream stream) {
  CUlaunchConfig launch{};
  launch.gridDimX = config.grid.x;
  launch.gridDimY = config.grid.y;
  launch.gridDimZ = config.grid.z;
  launch.blockDimX = config.block.x;
  launch.blockDimY = config.block.y;
  launch.blockDimZ = config.block.z;
  launch.sharedMemBytes = config.dynamic_shared_bytes;
  launch.hStream = stream;
  launch.attrs = attributes.attrs;
  launch.numAttrs = attributes.count;
  return launch;
}

CudaModule& cuda_module(LoadedModule& module, const CudaBackend& backend, const std::string& kernel) {
  auto* m = dynamic_cast<CudaModule*>(&module);
  if (!m || &m->backend() != &backend)
    throw RuntimeError("kernel '" + kernel + "' launched with a module of another device");
  return *m;
}

}  // namespace

int CudaBackend::max_active_clusters(LoadedModule& module, const std::string& kernel, const LaunchConfig& config) {
  CudaModule& m = cuda_module(module, *this, kernel);
  const ContextScope scope = enter();
  const Driver& d = driver();
  if (!d.cuOccupancyMaxActiveClusters)
    throw CudaError("dlsym(libcuda.so.1, cuOccupancyMaxActiveClusters)", -1, "CUDA driver too old",
                    "the driver does not export cuOccupancyMaxActiveClusters; it needs a CUDA 11.8 or newer driver");
  KernelState& k = m.kernel(kernel);
  m.allow_dynamic_shared(kernel, k, config.dynamic_shared_bytes, properties_.shared_bytes_per_block_optin);
  LaunchConfig clusters_only = config;  // how many fit does not depend on when they start
  clusters_only.overlap_previous = false;
  LaunchAttributes attributes(clusters_only);
  const CUlaunchConfig launch = launch_config(clusters_only, attributes, nullptr);
  int clusters = 0;
  check(d.cuOccupancyMaxActiveClusters(&clusters, k.function, &launch),
        [&] { return "cuOccupancyMaxActiveClusters(" + kernel + ")"; });
  return clusters;
}

namespace {

// A kernel resolved by CudaBackend::prepare: its module and its state there
// (the CUfunction and its shared memory limit).
struct CudaKernel final : PreparedKernel {
  CudaKernel(CudaModule& module, KernelState& state, std::string name)
      : module(module), state(state), name(std::move(name)) {}
  CudaModule& module;
  KernelState& state;
  std::string name;
};

// The one launch every path ends in, in the device's context:
// cuLaunchKernel, or cuLaunchKernelEx for a configuration with attributes.
// params[i] points to the bytes of parameter i; the driver reads as many as
// the kernel's own parameter list says.
void launch_function(CudaModule& m, KernelState& k, const std::string& kernel, const LaunchConfig& config,
                     void** params, StreamHandle* stream, std::size_t optin_limit) {
  m.allow_dynamic_shared(kernel, k, config.dynamic_shared_bytes, optin_limit);
  const Driver& d = driver();
  LaunchAttributes attributes(config);
  auto call = [&] { return std::string(attributes.count == 0 ? "cuLaunchKernel(" : "cuLaunchKernelEx(") + kernel + ")"; };
  if (attributes.count == 0) {
    check(d.cuLaunchKernel(k.function, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
                           config.block.z, config.dynamic_shared_bytes, stream_of(stream), params, nullptr),
          call);
    return;
  }
  const CUlaunchConfig launch = launch_config(config, attributes, stream_of(stream));
  check(d.cuLaunchKernelEx(&launch, k.function, params, nullptr), call);
}

}  // namespace

std::unique_ptr<PreparedKernel> CudaBackend::prepare(LoadedModule& module, const std::string& kernel) {
  CudaModule& m = cuda_module(module, *this, kernel);
  const ContextScope scope = enter();
  return std::make_unique<CudaKernel>(m, m.kernel(kernel), kernel);
}

void CudaBackend::launch_prepared(PreparedKernel& kernel, const LaunchConfig& config, void* const* params,
                                  StreamHandle* stream) {
  auto* k = dynamic_cast<CudaKernel*>(&kernel);
  if (!k || &k->module.backend() != this) throw RuntimeError("a kernel prepared by another device was launched");
  const ContextScope scope = enter();
  launch_function(k->module, k->state, k->name, config, const_cast<void**>(params), stream,
                  properties_.shared_bytes_per_block_optin);
}

void CudaBackend::launch(LoadedModule& module, const std::string& kernel, const LaunchConfig& config,
                         const std::vector<KernelArg>& args, StreamHandle* stream) {
  CudaModule& m = cuda_module(module, *this, kernel);
  const ContextScope scope = enter();
  std::vector<void*> params(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) params[i] = const_cast<std::byte*>(args[i].bytes.data());
  launch_function(m, m.kernel(kernel), kernel, config, params.data(), stream, properties_.shared_bytes_per_block_optin);
}

}  // namespace warpforge::runtime
