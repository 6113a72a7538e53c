#include "sim_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "decode.hpp"
#include "float_format.hpp"
#include "grid.hpp"
#include "memory_access.hpp"
#include "tensor_map_encoding.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/host_memory.hpp"

namespace warpforge::sim {
namespace {

class SimStream : public runtime::StreamHandle {};

// The value a function's name has in an initializer (nvcc's tables of
// function pointers, `.global .u64 ops[2] = {f, g}`): an address that is no
// memory's, this base plus the function's item index. The simulator refuses
// indirect calls, so nothing calls through it; the table's other kernels run.
constexpr std::uint64_t kFunctionAddressBase = 0xF000'0000'0000'0000ull;

std::optional<std::uint64_t> function_index(const ptx::Module& module, const ptx::Operand& name) {
  if (name.kind != ptx::Operand::Kind::symbol) return std::nullopt;
  for (std::size_t i = 0; i < module.items.size(); ++i)
    if (const auto* f = std::get_if<ptx::Function>(&module.items[i]); f && f->name == name.text)
      return i;
  return std::nullopt;
}

// Appends the initializer's scalars, each encoded as the variable's type.
void flatten(const ptx::Module& module, const ptx::Initializer& init, ptx::Type t,
             std::vector<std::byte>& out) {
  if (!init.value) {
    for (const auto& e : init.elements) flatten(module, e, t, out);
    return;
  }
  const std::size_t size = static_cast<std::size_t>((ptx::bits(t) + 7) / 8);
  const ptx::Operand& v = *init.value;
  std::uint64_t bits;
  if (t == ptx::Type::f32)
    bits = bits_of(static_cast<float>(v.float_value()));
  else if (t == ptx::Type::f64)
    bits = bits_of(v.float_value());
  else if (v.kind == ptx::Operand::Kind::imm_int)
    bits = static_cast<std::uint64_t>(v.int_value());
  else if (auto f = function_index(module, v); f && ptx::bits(t) == 64)
    bits = kFunctionAddressBase + *f;
  else
    throw SimError("initializer '" + ptx::to_string(v) + "' of a ." + std::string(ptx::name(t)) +
                   " variable is not simulated");
  const std::size_t at = out.size();
  out.resize(at + size);
  std::memcpy(out.data() + at, &bits, size);
}

std::vector<std::byte> initial_bytes(const ptx::Module& module, const ptx::Variable& v) {
  std::vector<std::byte> bytes;
  if (v.init) flatten(module, *v.init, v.type, bytes);
  const auto size = static_cast<std::size_t>(v.size_bytes());
  if (bytes.size() > size)
    throw SimError("variable '" + v.name + "' has more initializers than elements");
  bytes.resize(size, std::byte{0});
  return bytes;
}

// A watchdog limit: the option when set, else the environment variable when
// set (a positive number, else refused naming it), else the default.
template <class T>
T limit(T option, const char* variable, T fallback) {
  if (option > 0) return option;
  const char* text = std::getenv(variable);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || !(v >= 1) || v > 1e18)
    throw SimError(std::string("environment variable ") + variable + "='" + text +
                   "' refused; expected a positive number from 1 to 1e18");
  return static_cast<T>(v);
}

}  // namespace

SimModule::SimModule(ptx::Module ir, std::shared_ptr<GlobalMemory> global)
    : ir_(std::move(ir)), global_(std::move(global)) {
  ModuleSymbols symbols;
  for (const auto& item : ir_.items) {
    const auto* v = std::get_if<ptx::Variable>(&item);
    if (!v) continue;
    if (v->space == ptx::Space::global) {
      const std::vector<std::byte> bytes = initial_bytes(ir_, *v);
      const std::uint64_t address = global_->allocate(bytes.size());
      global_variables_.push_back(address);
      std::memcpy(global_->require(address, bytes.size(), "initializing '" + v->name + "'"),
                  bytes.data(), bytes.size());
      symbols[v->name] = {Space::global, address};
    } else if (v->space == ptx::Space::const_) {
      const std::vector<std::byte> bytes = initial_bytes(ir_, *v);
      const std::size_t align = v->align ? static_cast<std::size_t>(v->align) : 8;
      const std::size_t at = (const_bank_.size() + align - 1) / align * align;
      const_bank_.resize(at);
      const_bank_.insert(const_bank_.end(), bytes.begin(), bytes.end());
      symbols[v->name] = {Space::const_, at};
    }
  }
  symbols_ = std::move(symbols);
}

SimModule::~SimModule() {
  for (std::uint64_t address : global_variables_) global_->free(address);
}

const Kernel& SimModule::kernel(const std::string& name) {
  std::lock_guard lock(decoding_);
  if (auto it = kernels_.find(name); it != kernels_.end()) return it->second;
  std::string known;
  for (std::size_t i = 0; i < ir_.items.size(); ++i) {
    const auto* f = std::get_if<ptx::Function>(&ir_.items[i]);
    if (!f || !f->is_entry || !f->body) continue;
    if (f->name == name)
      return kernels_.emplace(name, decode_kernel(ir_, i, symbols_)).first->second;
    known += (known.empty() ? "" : ", ") + f->name;
  }
  throw SimError("no kernel '" + name +
                 "' in the module; it has: " + (known.empty() ? "none" : known));
}

SimBackend::SimBackend(SimOptions options)
    : options_(options), global_(std::make_shared<GlobalMemory>()) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (options_.worker_threads == 0) options_.worker_threads = cores;
  options_.max_thread_instructions = limit<std::uint64_t>(
      options_.max_thread_instructions, "WARPFORGE_SIM_MAX_INSTRUCTIONS", std::uint64_t{1} << 40);
  options_.time_limit_seconds =
      limit<double>(options_.time_limit_seconds, "WARPFORGE_SIM_TIME_LIMIT", 1800.0);
  properties_.name = "warpforge simulator";
  const int sm = ptx::sm_number(options_.target);
  properties_.compute_capability_major = sm / 10;
  properties_.compute_capability_minor = sm % 10;
  properties_.sm_count = options_.sm_count > 0 ? options_.sm_count : static_cast<int>(cores);
  properties_.shared_bytes_per_block = 48 * 1024;  // every target: 48 KB without opt-in
  // The opt-in maximum per block is the SM's shared memory less 1 KB (CUDA C++
  // Programming Guide, "Compute Capabilities", technical specifications):
  // 164 KB on 8.0, 100 KB on 8.9, 228 KB on 9.0 and 10.0.
  const std::size_t per_sm_kb = sm == 80 ? 164 : sm == 89 ? 100 : 228;
  properties_.shared_bytes_per_sm = per_sm_kb * 1024;
  properties_.shared_bytes_per_block_optin = (per_sm_kb - 1) * 1024;
  properties_.global_bytes = std::size_t{16} << 30;
  properties_.max_threads_per_block = 1024;
  properties_.warp_size = 32;
  // Each simulator is another device of the process (Device::sim()).
  static std::atomic<int> created{0};
  properties_.ordinal = created++;
  printf_sink_ = std::make_unique<PrintfSink>(options_.printf_output);
}

std::size_t SimBackend::free_bytes() {
  const std::size_t host = runtime::host_available_bytes();
  if (options_.memory_bytes == 0) return host;
  const std::size_t live = global_->live_bytes();
  return std::min(host, options_.memory_bytes > live ? options_.memory_bytes - live : 0);
}

runtime::DevicePtr SimBackend::allocate(std::size_t bytes) {
  return global_->allocate(bytes);
}

void SimBackend::free(runtime::DevicePtr ptr) {
  global_->free(ptr);
}

runtime::DevicePtr SimBackend::map_host(void* host, std::size_t bytes) {
  return global_->map(static_cast<std::byte*>(host), bytes);
}

runtime::DevicePtr SimBackend::map_host_in_place(void* host, std::size_t bytes) {
  // The generic-address windows of the shared, local and param spaces are not
  // global memory (memory_access.hpp); host memory there cannot keep its address.
  const auto address = reinterpret_cast<std::uintptr_t>(host);
  if (address + bytes > kParamWindow && address < kSharedWindow + kWindowSize)
    throw SimError("host memory [" + hex(address) + ", " + hex(address + bytes) +
                   ") cannot be mapped at its own address: it overlaps the simulator's "
                   "generic-address windows [" + hex(kParamWindow) + ", " +
                   hex(kSharedWindow + kWindowSize) + ")");
  return global_->map_in_place(static_cast<std::byte*>(host), bytes);
}

void SimBackend::copy_to_device(runtime::DevicePtr dst, const void* src, std::size_t bytes,
                                runtime::StreamHandle*) {
  if (bytes) std::memcpy(global_->require(dst, bytes, "copy to device"), src, bytes);
}

void SimBackend::copy_to_host(void* dst, runtime::DevicePtr src, std::size_t bytes,
                              runtime::StreamHandle*) {
  if (bytes) std::memcpy(dst, global_->require(src, bytes, "copy to host"), bytes);
}

void SimBackend::copy_device_to_device(runtime::DevicePtr dst, runtime::DevicePtr src,
                                       std::size_t bytes, runtime::StreamHandle*) {
  if (!bytes) return;
  const std::byte* from = global_->require(src, bytes, "device-to-device copy source");
  std::memmove(global_->require(dst, bytes, "device-to-device copy destination"), from, bytes);
}

void SimBackend::fill(runtime::DevicePtr dst, std::uint8_t byte, std::size_t bytes,
                      runtime::StreamHandle*) {
  if (bytes) std::memset(global_->require(dst, bytes, "fill"), byte, bytes);
}

std::unique_ptr<runtime::StreamHandle> SimBackend::create_stream() {
  return std::make_unique<SimStream>();
}

std::unique_ptr<runtime::LoadedModule> SimBackend::load(const ptx::Module& module) {
  return std::make_unique<SimModule>(module, global_);
}

void SimBackend::launch(runtime::LoadedModule& module, const std::string& kernel_name,
                        const runtime::LaunchConfig& config,
                        const std::vector<runtime::KernelArg>& args, runtime::StreamHandle*) {
  auto* sim_module = dynamic_cast<SimModule*>(&module);
  if (!sim_module)
    throw SimError("launch of '" + kernel_name + "' with a module not loaded by the simulator");
  const Kernel& k = sim_module->kernel(kernel_name);
  if (args.size() != k.params.size())
    throw SimError("kernel '" + k.name + "' takes " + std::to_string(k.params.size()) +
                   " arguments, got " + std::to_string(args.size()));
  LaunchState launch{k,
                     config,
                     std::vector<std::byte>(k.param_bytes),
                     *global_,
                     sim_module->const_bank(),
                     properties_.sm_count};
  launch.printf_sink = printf_sink_.get();
  launch.check_shared_races = options_.check_shared_races && config.cluster.count() == 1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamInfo& p = k.params[i];
    if (args[i].bytes.size() != p.size)
      throw SimError("kernel '" + k.name + "' argument " + std::to_string(i) + " ('" + p.name +
                     "') has " + std::to_string(args[i].bytes.size()) +
                     " bytes; the parameter takes " + std::to_string(p.size));
    std::memcpy(launch.params.data() + p.offset, args[i].bytes.data(), p.size);
  }
  last_thread_instructions_ = run_grid(launch, options_).thread_instructions;
}

std::shared_ptr<runtime::DeviceBackend> make_backend(SimOptions options) {
  return std::make_shared<SimBackend>(options);
}

void set_host_memory_handler(const runtime::Device& device, std::function<bool(std::uint64_t, std::size_t)> handler) {
  auto* sim = dynamic_cast<SimBackend*>(&device.backend());
  if (!sim) throw RuntimeError("set_host_memory_handler: " + device.describe() + " is not a simulator");
  sim->global_memory().set_miss_handler(std::move(handler));
}

runtime::TensorMap SimBackend::encode_tensor_map(const runtime::TensorMapDesc& desc) {
  return sim::encode_tensor_map(desc);
}

}  // namespace warpforge::sim
