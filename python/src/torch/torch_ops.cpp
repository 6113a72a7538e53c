// warpforge._warpforge_torch: the C++ kernels of torch.ops.warpforge.gemm_amax,
// torch.ops.warpforge.gemm, torch.ops.warpforge.grouped_mm,
// torch.ops.warpforge.attention_forward (those two with their autograd),
// torch.ops.warpforge.attention_backward and the row ops (row_kernels.inc),
// and warpforge.attention_decode's plain eager call (attention_decode)
// for the CUDA and CPU dispatch keys (the schemas
// and the fake kernels are defined once, in python/warpforge/torch.py, which
// imports this module, grouped_torch.py and torch_attention.py). A Python implementation costs the dispatcher's call
// into Python and torch.empty calls from Python before any launch
// (docs/PERFORMANCE.md, "Python host overhead"); here a call is a look-up by a
// byte key, the outputs' at::empty and one launch through
// warpforge._warpforge's table (torch_bridge.hpp), which holds the compiled
// ops, the devices and the simulator.
//
// Built against the installed torch (python/CMakeLists.txt); it links torch,
// not the warpforge library, and includes no CUDA header: torch's current
// stream comes through c10's device-generic stream interface.
#include <ATen/EmptyTensor.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/empty_strided.h>
#include <Python.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../torch_bridge.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::python {
namespace {

namespace bridge = torch_bridge;
using runtime::DType;

const bridge::Api* api = nullptr;  // set by the module's init, before any kernel is registered

// The Python error the bridge has set, raised as itself by torch's
// translator (python_error, torch/csrc/Exceptions.h), so that a refusal arrives as the same
// warpforge exception the nanobind path raises.
[[noreturn]] void raise_set_error() {
  ::python_error error;
  error.persist();
  throw error;
}

void check(int status) {
  if (status != 0) raise_set_error();
}

// The warpforge dtype of a torch dtype, as warpforge._frameworks names them
// (FP4 travels packed two to a byte: float4_e2m1fn_x2 or uint8).
std::optional<DType> dtype_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return DType::f32;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    case at::kDouble:
      return DType::f64;
    case at::kFloat8_e4m3fn:
      return DType::e4m3;
    case at::kFloat8_e5m2:
      return DType::e5m2;
    case at::kFloat8_e8m0fnu:
      return DType::e8m0;
    case at::kFloat4_e2m1fn_x2:
    case at::kByte:
      return DType::u8;
    case at::kChar:
      return DType::i8;
    case at::kShort:
      return DType::i16;
    case at::kInt:
      return DType::i32;
    case at::kUInt32:
      return DType::u32;
    case at::kLong:
      return DType::i64;
    case at::kUInt64:
      return DType::u64;
    default:
      return std::nullopt;
  }
}

std::int32_t dtype_value(at::ScalarType t, const char* role) {
  const std::optional<DType> d = dtype_of(t);
  if (!d)
    check(api->refuse("RuntimeError",
                      (std::string(role) + ": dtype " + std::string(c10::toString(t)) +
                       " has no warpforge dtype; accepted: float32, float16, bfloat16, float64, "
                       "float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, uint8, "
                       "int8, int16, int32, uint32, int64, uint64")
                          .c_str()));
  return static_cast<std::int32_t>(*d);
}

// The cache key: the bytes of everything that fixes the compiled op (each
// input's device, dtype, sizes, strides and base alignment up to 256 bytes,
// as op_cache.hpp's key_of counts it, or up to `most` where an op's kernels
// assume no more; then the options). A few hundred bytes, appended without
// formatting.
class Key {
 public:
  Key() { bytes_.reserve(512); }
  void add(std::int64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void add_double(double v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void add(std::string_view s) {
    add(static_cast<std::int64_t>(s.size()));
    bytes_.append(s);
  }
  void add(const at::Tensor& t, std::int32_t dtype, std::uintptr_t most = 256) {
    add(t.is_cuda() ? t.get_device() : -1);
    add(dtype);
    add(t.dim());
    for (std::int64_t s : t.sizes()) add(s);
    for (std::int64_t s : t.strides()) add(s);
    const auto address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
    add(static_cast<std::int64_t>(
        address == 0 ? most : std::min<std::uintptr_t>(address & (~address + 1), most)));
  }
  void add(at::OptionalIntArrayRef values) {
    add(values ? static_cast<std::int64_t>(values->size()) : -1);
    if (values)
      for (std::int64_t v : *values) add(v);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

bridge::Tensor describe(const at::Tensor& t, std::int32_t dtype, const char* role) {
  bridge::Tensor d;
  if (t.dim() > bridge::Tensor::kMaxRank)
    check(api->refuse("RuntimeError", (std::string(role) + " has " + std::to_string(t.dim()) +
                                       " dimensions; warpforge takes at most 8")
                                          .c_str()));
  d.address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  d.dtype = dtype;
  d.rank = static_cast<std::int32_t>(t.dim());
  d.device = t.is_cuda() ? t.get_device() : -1;
  for (std::int64_t i = 0; i < t.dim(); ++i) {
    d.shape[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

void set_pair(at::OptionalIntArrayRef values, const char* name, bool& given,
              std::int64_t (&out)[2]) {
  given = values.has_value();
  if (!given) return;
  if (values->size() != 2)
    check(api->refuse("OpsError", (std::string(name) + " takes two values (M, N), got " +
                                   std::to_string(values->size()))
                                      .c_str()));
  out[0] = (*values)[0];
  out[1] = (*values)[1];
}

// torch's current stream on `a`'s device (at::cuda::getCurrentCUDAStream)
// as a CUstream; 0 for host memory.
std::uintptr_t current_stream(const at::Tensor& a) {
  if (!a.is_cuda()) return 0;
  const c10::Device device = a.device();
  return reinterpret_cast<std::uintptr_t>(
      c10::impl::getDeviceGuardImpl(device.type())->getStream(device).native_handle());
}

// ---- direct calls from Python ------------------------------------------------------
// A public function's eager call (warpforge.torch_rows.rms_norm, warpforge.gemm)
// runs its operator's kernel through _warpforge_torch.<op>(...) rather than
// torch.ops: no Python packet, parsing of the arguments against the schema or
// boxed dispatch, host time that a small or 4096-row call pays. A direct
// entry returns NotImplemented (its caller then calls the operator) wherever
// torch must see the operator: a tensor subclass, a torch function or
// dispatch mode, a functorch transform, the profiler. The caller has checked
// that torch.compile is not tracing.

// Whether this thread runs operators as plain eager code: no Python dispatch
// mode, functorch transform or functionalization (its included keys are
// torch's defaults) and no observer of operator calls (RecordFunction: the
// profiler, which then sees every operator).
bool plain_thread() {
  return (c10::impl::tls_local_dispatch_key_set().included_ - c10::default_included_set).empty() &&
         !at::hasCallbacks();
}

// Whether each (defined) tensor is a dense strided CPU or CUDA tensor
// without the keys of a Python subclass, a functorch or functional wrapper,
// or a conjugate, negative or zero bit.
bool plain_tensors(std::initializer_list<const at::Tensor*> tensors) {
  static const c10::DispatchKeySet wrapped({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
                                            c10::DispatchKey::FuncTorchBatched, c10::DispatchKey::FuncTorchGradWrapper,
                                            c10::DispatchKey::Functionalize, c10::DispatchKey::Conjugate,
                                            c10::DispatchKey::Negative, c10::DispatchKey::ZeroTensor});
  for (const at::Tensor* t : tensors)
    if (t && t->defined() &&
        (t->layout() != at::kStrided || !(t->is_cuda() || t->is_cpu()) || t->key_set().has_any(wrapped)))
      return false;
  return true;
}

// Whether a call below autograd may run the kernel function itself: what
// the dispatcher would reach for it through fallthrough keys (a plain
// thread, plain tensors, autograd and ADInplaceOrView excluded by the
// caller's guard). Saves the dispatcher's boxing of a call, host time that
// a 4096-row call pays; traced, transformed and profiled calls keep it.
bool direct(std::initializer_list<const at::Tensor*> tensors) {
  return c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::ADInplaceOrView) && plain_thread() &&
         plain_tensors(tensors);
}

// `o` as an optional tensor: false where it is neither None nor a torch.Tensor itself.
bool tensor_argument(PyObject* o, std::optional<at::Tensor>& out) {
  if (o == Py_None) return true;
  if (!THPVariable_CheckExact(o)) return false;
  out = THPVariable_Unpack(o);
  return true;
}

// Whether a direct call may run: its first N arguments plain tensors or None
// (in `tensors`), no torch function mode, a plain thread.
template <std::size_t N>
bool plain_call(PyObject* const* args, std::array<std::optional<at::Tensor>, N>& tensors) {
  for (std::size_t i = 0; i < N; ++i)
    if (!tensor_argument(args[i], tensors[i])) return false;
  if (at::impl::torch_function_mode_enabled() || !plain_thread()) return false;
  for (const std::optional<at::Tensor>& t : tensors)
    if (t && !plain_tensors({&*t})) return false;
  return true;
}

bool arguments(const char* name, Py_ssize_t count, Py_ssize_t expected) {
  if (count == expected) return true;
  PyErr_Format(PyExc_TypeError, "_warpforge_torch.%s takes %zd arguments (the operator's), got %zd", name, expected,
               count);
  return false;
}

PyObject* wrap(std::initializer_list<at::Tensor> outputs) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(outputs.size()));
  Py_ssize_t i = 0;
  for (const at::Tensor& t : outputs) {
    PyObject* item = tuple ? THPVariable_Wrap(t) : nullptr;  // None for an undefined tensor
    if (!item) {
      Py_XDECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, i++, item);
  }
  return tuple;
}

c10::string_view text_argument(PyObject* o) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(o, &size);
  return text ? c10::string_view(text, static_cast<std::size_t>(size)) : c10::string_view();
}

// What a cached description allocates and runs.
struct Entry {
  void* op;
  std::int64_t shape[3], strides[3];
};

std::mutex cache_mutex;
auto* cache = new std::unordered_map<std::string, Entry>();  // kept past interpreter exit

at::Tensor empty_c(const at::Tensor& a, const Entry& e, at::ScalarType c_type) {
  return at::empty_strided({e.shape, 3}, {e.strides, 3}, a.options().dtype(c_type));
}

std::tuple<at::Tensor, at::Tensor> gemm_amax(
    const at::Tensor& a, const at::Tensor& b, const at::Tensor& sfa, const at::Tensor& sfb,
    c10::string_view c_major, std::optional<at::ScalarType> c_dtype,
    std::optional<at::ScalarType> acc_dtype, at::OptionalIntArrayRef mma_tiler_mn,
    at::OptionalIntArrayRef cluster_shape_mn, std::int64_t sf_vec_size, c10::string_view precision,
    c10::string_view kernel_name) {
  const at::ScalarType c_type = c_dtype.value_or(at::kFloat);
  const std::int32_t types[4] = {
      dtype_value(a.scalar_type(), "a"), dtype_value(b.scalar_type(), "b"),
      dtype_value(sfa.scalar_type(), "sfa"), dtype_value(sfb.scalar_type(), "sfb")};
  const std::int32_t c_value = dtype_value(c_type, "c_dtype");
  const std::int32_t acc_value = acc_dtype ? dtype_value(*acc_dtype, "acc_dtype") : -1;
  Key key;
  key.add(a, types[0]);
  key.add(b, types[1]);
  key.add(sfa, types[2]);
  key.add(sfb, types[3]);
  key.add(c_major);
  key.add(c_value);
  key.add(acc_value);
  key.add(mma_tiler_mn);
  key.add(cluster_shape_mn);
  key.add(sf_vec_size);
  key.add(precision);
  key.add(kernel_name);

  std::optional<Entry> entry;
  {
    std::lock_guard lock(cache_mutex);
    if (auto it = cache->find(key.bytes()); it != cache->end()) entry = it->second;
  }
  at::Tensor amax = at::empty({1, 1, 1}, a.options().dtype(at::kFloat));
  at::Tensor c;
  if (!entry) {  // the first call of this description: C's layout, then the op
    bridge::GemmAmaxArgs args{.a = describe(a, types[0], "a"),
                              .b = describe(b, types[1], "b"),
                              .sfa = describe(sfa, types[2], "sfa"),
                              .sfb = describe(sfb, types[3], "sfb"),
                              .c_major = c_major,
                              .c_dtype = c_value,
                              .acc_dtype = acc_value,
                              .sf_vec_size = sf_vec_size,
                              .precision = precision,
                              .kernel = kernel_name};
    set_pair(mma_tiler_mn, "mma_tiler_mn", args.has_mma_tiler, args.mma_tiler_mn);
    set_pair(cluster_shape_mn, "cluster_shape_mn", args.has_cluster, args.cluster_shape_mn);
    bridge::CLayout layout;
    check(api->gemm_amax_c_layout(args, layout));
    Entry made{};
    std::memcpy(made.shape, layout.shape, sizeof made.shape);
    std::memcpy(made.strides, layout.strides, sizeof made.strides);
    c = empty_c(a, made, c_type);
    check(api->gemm_amax_op(args, describe(c, c_value, "c"),
                            describe(amax, static_cast<std::int32_t>(DType::f32), "amax"),
                            &made.op));
    std::lock_guard lock(cache_mutex);
    entry = cache->emplace(key.bytes(), made).first->second;
  } else {
    c = empty_c(a, *entry, c_type);
  }
  const std::uint64_t addresses[6] = {reinterpret_cast<std::uintptr_t>(a.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(b.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(sfa.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(sfb.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(c.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(amax.data_ptr())};
  check(api->gemm_amax_run(entry->op, addresses, current_stream(a)));
  return {std::move(c), std::move(amax)};
}

// D's shape for A (.., M, K) and B (.., K, N), as warpforge.ops.gemm_out_shape
// (python/warpforge/ops.py) gives it, which the fake kernel uses (a test
// checks the two agree): the batch of the operand that has one; (1, 1) where
// A or B is not of rank 2 or 3, which the op then refuses, naming it.
c10::SmallVector<std::int64_t, 3> gemm_out_shape(at::IntArrayRef a, at::IntArrayRef b) {
  auto matrix = [](at::IntArrayRef t) { return t.size() == 2 || t.size() == 3; };
  if (!matrix(a) || !matrix(b)) return {1, 1};
  c10::SmallVector<std::int64_t, 3> shape;
  if (a.size() >= b.size()) {
    shape.append(a.begin(), a.end() - 1);
  } else {
    shape.append(b.begin(), b.end() - 2);
    shape.push_back(a[a.size() - 2]);
  }
  shape.push_back(b.back());
  return shape;
}

// The bridge's compiled ops by byte key; make() (a description's first
// call, which compiles) runs unlocked.
class OpCache {
 public:
  template <class Make>
  void* get(const std::string& key, Make make) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = ops_.find(key); it != ops_.end()) return it->second;
    }
    void* op = make();
    std::lock_guard lock(mutex_);
    return ops_.emplace(key, op).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, void*> ops_;
};

auto* gemm_cache = new OpCache();  // kept past interpreter exit

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& c,
                double alpha, double beta, std::optional<at::ScalarType> out_dtype) {
  const at::ScalarType d_type = out_dtype.value_or(a.scalar_type());
  const std::int32_t a_value = dtype_value(a.scalar_type(), "a");
  const std::int32_t b_value = dtype_value(b.scalar_type(), "b");
  const std::int32_t d_value = dtype_value(d_type, "d");
  const std::int32_t c_value = c ? dtype_value(c->scalar_type(), "c") : -1;
  // D row-major, its shape fixed by A's and B's (in the key).
  at::Tensor d = at::empty(gemm_out_shape(a.sizes(), b.sizes()), a.options().dtype(d_type));
  Key key;
  key.add(a, a_value);
  key.add(b, b_value);
  key.add(std::int64_t{c.has_value()});
  if (c) key.add(*c, c_value);
  key.add(d, d_value);  // its alignment: the allocator's, which may vary
  key.add_double(alpha);
  key.add_double(beta);

  void* op = gemm_cache->get(key.bytes(), [&] {
    bridge::GemmArgs args{.a = describe(a, a_value, "a"),
                          .b = describe(b, b_value, "b"),
                          .d = describe(d, d_value, "d"),
                          .has_c = c.has_value(),
                          .alpha = alpha,
                          .beta = beta};
    if (c) args.c = describe(*c, c_value, "c");
    void* made = nullptr;
    check(api->gemm_op(args, &made));
    return made;
  });
  const std::uint64_t addresses[4] = {reinterpret_cast<std::uintptr_t>(a.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(b.data_ptr()),
                                      c ? reinterpret_cast<std::uintptr_t>(c->data_ptr()) : 0,
                                      reinterpret_cast<std::uintptr_t>(d.data_ptr())};
  check(api->gemm_run(op, addresses, current_stream(a)));
  return d;
}

// warpforge._warpforge_torch.gemm(a, b, c, alpha, beta, out_dtype): gemm's
// eager call from warpforge.gemm (the direct calls above); NotImplemented
// also where autograd would see the call (gemm has no autograd: its
// fallback then says so).
PyObject* gemm_direct(PyObject*, PyObject* const* args, Py_ssize_t count) {
  HANDLE_TH_ERRORS
  if (!arguments("gemm", count, 6)) return nullptr;
  std::array<std::optional<at::Tensor>, 3> t;
  if (!plain_call(args, t) || !t[0] || !t[1] || (args[5] != Py_None && !THPDtype_Check(args[5])))
    Py_RETURN_NOTIMPLEMENTED;
  if (at::GradMode::is_enabled())
    for (const auto& operand : t)
      if (operand && operand->requires_grad()) Py_RETURN_NOTIMPLEMENTED;
  const double alpha = PyFloat_AsDouble(args[3]), beta = PyFloat_AsDouble(args[4]);
  if (PyErr_Occurred()) return nullptr;
  std::optional<at::ScalarType> out_dtype;
  if (args[5] != Py_None) out_dtype = reinterpret_cast<THPDtype*>(args[5])->scalar_type;
  return THPVariable_Wrap(gemm(*t[0], *t[1], t[2], alpha, beta, out_dtype));
  END_HANDLE_TH_ERRORS
}

PyMethodDef gemm_methods[] = {
    {"gemm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(gemm_direct)), METH_FASTCALL,
     "gemm(a, b, c, alpha, beta, out_dtype): torch.ops.warpforge.gemm's eager call, or NotImplemented."},
    {nullptr, nullptr, 0, nullptr}};

// grouped_mm's D: (M, N) for A (M, K) with B (G, K, N) or (K, N) without
// offsets; (G, M, N) for A (M, K) with B (K, N) and offsets (ragged K), as
// grouped_torch._shape gives it; (1, 1) for what the op refuses, naming it.
c10::SmallVector<std::int64_t, 3> grouped_out_shape(const at::Tensor& a, const at::Tensor& b,
                                                    const std::optional<at::Tensor>& offs) {
  if (a.dim() == 2 && b.dim() == 3) return {a.size(0), b.size(2)};
  if (a.dim() == 2 && b.dim() == 2 && offs) return {offs->size(0), a.size(0), b.size(1)};
  if (a.dim() == 2 && b.dim() == 2) return {a.size(0), b.size(1)};
  return {1, 1};
}

auto* grouped_cache = new OpCache();  // kept past interpreter exit

// torch.ops.warpforge.grouped_mm's CUDA and CPU kernel (warpforge.grouped_torch
// defines the schema and the fake kernel).
at::Tensor grouped_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                      std::optional<at::ScalarType> out_dtype) {
  const at::ScalarType d_type = out_dtype.value_or(a.scalar_type());
  const std::int32_t a_value = dtype_value(a.scalar_type(), "a");
  const std::int32_t b_value = dtype_value(b.scalar_type(), "b");
  const std::int32_t d_value = dtype_value(d_type, "out_dtype");
  const std::int32_t offs_value = offs ? dtype_value(offs->scalar_type(), "offs") : -1;
  at::Tensor d = at::empty(grouped_out_shape(a, b, offs), a.options().dtype(d_type));
  Key key;
  key.add(a, a_value);
  key.add(b, b_value);
  key.add(std::int64_t{offs.has_value()});
  if (offs) key.add(*offs, offs_value);
  key.add(d, d_value);  // its alignment: the allocator's, which may vary

  void* op = grouped_cache->get(key.bytes(), [&] {
    bridge::GroupedMmArgs args{.a = describe(a, a_value, "a"),
                               .b = describe(b, b_value, "b"),
                               .d = describe(d, d_value, "out"),
                               .has_offs = offs.has_value()};
    if (offs) args.offs = describe(*offs, offs_value, "offs");
    void* made = nullptr;
    check(api->grouped_mm_op(args, &made));
    return made;
  });
  const std::uint64_t addresses[4] = {reinterpret_cast<std::uintptr_t>(a.data_ptr()),
                                      reinterpret_cast<std::uintptr_t>(b.data_ptr()),
                                      offs ? reinterpret_cast<std::uintptr_t>(offs->data_ptr()) : 0,
                                      reinterpret_cast<std::uintptr_t>(d.data_ptr())};
  check(api->grouped_mm_run(op, addresses, current_stream(a)));
  return d;
}

// grouped_mm through the dispatcher (below autograd where a guard says so).
at::Tensor call_grouped_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                           std::optional<at::ScalarType> out_dtype) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("warpforge::grouped_mm", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                            std::optional<at::ScalarType>)>();
  return op.call(a, b, offs, out_dtype);
}

// grouped_mm's autograd in C++: torch.library.register_autograd's Python
// wrapper costs every call (with or without gradients) more host time than
// the rest of it (docs/PERFORMANCE.md, "Grouped GEMM"). The 2-D x 3-D form:
// dA = dD·Bᵀ grouped (ragged M), dB = Aᵀ·dD grouped over the same offsets
// (ragged K).
class GroupedMmFunction : public torch::autograd::Function<GroupedMmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::optional<at::Tensor>& offs, std::optional<at::ScalarType> out_dtype) {
    ctx->save_for_backward({a, b, offs.value_or(at::Tensor())});
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_grouped_mm(a, b, offs, out_dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1];
    const std::optional<at::Tensor> offs = saved[2].defined() ? std::optional(saved[2]) : std::nullopt;
    TORCH_CHECK_NOT_IMPLEMENTED(b.dim() == 3,
                                "torch.ops.warpforge.grouped_mm is differentiable in the 2-D x 3-D form only");
    const at::Tensor grad = grads[0].contiguous().to(a.scalar_type());
    at::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0)) grad_a = call_grouped_mm(grad, b.transpose(-2, -1), offs, a.scalar_type());
    if (ctx->needs_input_grad(1)) {
      if (b.stride(-2) == 1 && b.size(-2) > 1) {
        // B with K contiguous (torch._grouped_mm's weights): dBᵀ = dDᵀ·A per
        // group, so that dB has B's strides (else autograd copies all of dB
        // into B's layout before it reaches .grad, and again each accumulation).
        grad_b = call_grouped_mm(grad.t(), a, offs, b.scalar_type()).transpose(-2, -1);
      } else {
        grad_b = call_grouped_mm(a.t(), grad, offs, b.scalar_type());
      }
      if (!offs) grad_b = grad_b.unsqueeze(0);
    }
    return {grad_a, grad_b, at::Tensor(), at::Tensor()};
  }
};

at::Tensor grouped_mm_autograd(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                               std::optional<at::ScalarType> out_dtype) {
  return GroupedMmFunction::apply(a, b, offs, out_dtype);
}

// An uninitialized tensor on `like`'s device straight from torch's allocator
// for that device (what at::empty's CPU and CUDA kernels call; on CUDA the
// caching allocator, on the current stream, a CUDA graph's pool while one is
// captured), without the dispatcher's round trip: host time a call
// (docs/experiments/2026-11-30-attention-host.md). Contiguous unless
// `strides` are given.
at::Tensor uninitialized(const at::Tensor& like, at::IntArrayRef sizes, at::ScalarType dtype,
                         at::OptionalIntArrayRef strides = std::nullopt) {
  const c10::DeviceGuard guard(like.device());
  c10::Allocator* allocator = c10::GetAllocator(like.device().type());
  const c10::DispatchKeySet keys(like.is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU);
  return strides ? at::detail::empty_strided_generic(sizes, *strides, allocator, keys, dtype)
                 : at::detail::empty_generic(sizes, allocator, keys, dtype, std::nullopt);
}

// at::empty_like(t): t's layout where t is dense (as preserve_format keeps
// it, the fake kernels' torch.empty_like too), else at::empty_like itself.
at::Tensor uninitialized_like(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense() ? uninitialized(t, t.sizes(), t.scalar_type(), t.strides())
                                          : at::empty_like(t);
}

// attention_forward's operand as the kernels take it (torch_attention._ready):
// head_dim contiguous, the other strides multiples of 8 elements, 16-byte
// aligned; a copy only where it is not.
at::Tensor attention_ready(const at::Tensor& t) {
  bool ready = t.dim() > 0 && t.stride(-1) == 1 && reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0;
  for (std::int64_t i = 0; ready && i + 1 < t.dim(); ++i) ready = t.size(i) <= 1 || t.stride(i) % 8 == 0;
  if (ready) return t;
  return t.is_contiguous() ? t.clone() : t.contiguous();
}

void add_optional(Key& key, const std::optional<at::Tensor>& t, const char* role) {
  key.add(std::int64_t{t.has_value()});
  if (t) key.add(*t, dtype_value(t->scalar_type(), role));
}

auto* attention_cache = new OpCache();  // kept past interpreter exit

std::uint64_t address_of(const at::Tensor& t) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(t.data_ptr()));
}

// What the attention ops share: the operands' key and description (Q, K,
// V, O, lse first, as each op takes them), the sequence offsets and the
// mask options of the schema (torch_attention._MASK).
struct AttentionCall {
  const std::optional<at::Tensor>& cu_q;
  const std::optional<at::Tensor>& cu_k;
  std::int64_t max_q, max_k;
  std::optional<double> scale;
  std::int64_t left, right;
  bool top_left;
  c10::string_view kernel;
  std::vector<const at::Tensor*> tensors;
  std::vector<std::int32_t> types;
  Key key;

  AttentionCall(std::initializer_list<std::pair<const at::Tensor*, const char*>> operands,
                const std::optional<at::Tensor>& cu_seqlens_q, const std::optional<at::Tensor>& cu_seqlens_k,
                std::int64_t max_seqlen_q, std::int64_t max_seqlen_k, std::optional<double> scale_in,
                std::int64_t window_left, std::int64_t window_right, bool top_left_in, c10::string_view kernel_name)
      : cu_q(cu_seqlens_q), cu_k(cu_seqlens_k), max_q(max_seqlen_q), max_k(max_seqlen_k), scale(scale_in),
        left(window_left), right(window_right), top_left(top_left_in), kernel(kernel_name) {
    for (const auto& [t, role] : operands) {
      tensors.push_back(t);
      types.push_back(dtype_value(t->scalar_type(), role));
      key.add(*t, types.back());
    }
    add_optional(key, cu_q, "cu_seqlens_q");
    add_optional(key, cu_k, "cu_seqlens_k");
    key.add(std::int64_t{scale.has_value()});
    key.add_double(scale.value_or(0.0));
    for (std::int64_t value : {max_q, max_k, left, right, std::int64_t{top_left}}) key.add(value);
    key.add(kernel);
  }

  bridge::Tensor described(std::size_t i, const char* role) const { return describe(*tensors[i], types[i], role); }

  // The forward's arguments: Q, K, V, O, lse and the options.
  bridge::AttentionForwardArgs forward_args() const {
    bridge::AttentionForwardArgs args{.q = described(0, "q"),
                                      .k = described(1, "k"),
                                      .v = described(2, "v"),
                                      .o = described(3, "o"),
                                      .lse = described(4, "lse"),
                                      .has_cu_seqlens_q = cu_q.has_value(),
                                      .has_cu_seqlens_k = cu_k.has_value(),
                                      .has_scale = scale.has_value(),
                                      .top_left = top_left,
                                      .scale = scale.value_or(0.0),
                                      .window_left = left,
                                      .window_right = right,
                                      .max_seqlen_q = max_q,
                                      .max_seqlen_k = max_k,
                                      .kernel = kernel};
    if (cu_q) args.cu_seqlens_q = describe(*cu_q, dtype_value(cu_q->scalar_type(), "cu_seqlens_q"), "cu_seqlens_q");
    if (cu_k) args.cu_seqlens_k = describe(*cu_k, dtype_value(cu_k->scalar_type(), "cu_seqlens_k"), "cu_seqlens_k");
    return args;
  }

  // The tensors' data addresses, then the sequence offsets' (0 without them).
  template <std::size_t N>
  void addresses(std::uint64_t (&out)[N]) const {
    for (std::size_t i = 0; i < tensors.size(); ++i) out[i] = address_of(*tensors[i]);
    out[N - 2] = cu_q ? address_of(*cu_q) : 0;
    out[N - 1] = cu_k ? address_of(*cu_k) : 0;
  }
};

// torch.ops.warpforge.attention_forward's CUDA and CPU kernel
// (warpforge.torch_attention defines the schema, the fake kernel and the
// Python kernel this replaces): O like q, lse (batch, heads, seq) or varlen
// (heads, total) in f32, one launch. A window side of -1 is unbounded
// (causal: window_right 0); deterministic is the backward's.
std::tuple<at::Tensor, at::Tensor> attention_forward(
    const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
    const std::optional<at::Tensor>& cu_seqlens_q, const std::optional<at::Tensor>& cu_seqlens_k,
    std::int64_t max_seqlen_q, std::int64_t max_seqlen_k, std::optional<double> scale, std::int64_t window_left,
    std::int64_t window_right, bool top_left, bool /*deterministic*/, c10::string_view kernel_name) {
  const at::Tensor q = attention_ready(q_in), k = attention_ready(k_in), v = attention_ready(v_in);
  // lse: (batch, heads, seq), or (heads, total) for a varlen batch (torch_attention._lse_shape).
  at::Tensor o = uninitialized_like(q);
  at::Tensor lse = cu_seqlens_q || q.dim() != 4
                       ? uninitialized(q, {q.dim() > 1 ? q.size(1) : 1, q.dim() > 0 ? q.size(0) : 1}, at::kFloat)
                       : uninitialized(q, {q.size(0), q.size(1), q.size(2)}, at::kFloat);
  const AttentionCall call({{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "o"}, {&lse, "lse"}}, cu_seqlens_q, cu_seqlens_k,
                           max_seqlen_q, max_seqlen_k, scale, window_left, window_right, top_left, kernel_name);
  void* op = attention_cache->get(call.key.bytes(), [&] {
    void* made = nullptr;
    check(api->attention_forward_op(call.forward_args(), &made));
    return made;
  });
  std::uint64_t addresses[7];
  call.addresses(addresses);
  check(api->attention_forward_run(op, addresses, current_stream(q)));
  return {std::move(o), std::move(lse)};
}

// The compiled backward and the workspace bytes its runs take.
struct AttentionBackwardEntry {
  void* op;
  std::uint64_t workspace_bytes;
};

// torch.ops.warpforge.attention_backward's CUDA and CPU kernel (as the
// forward's above): dQ, dK, dV like q, k, v, the workspace from torch's
// allocator (so CUDA graphs capture it), the backward's launches.
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward(
    const at::Tensor& grad_out, const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
    const at::Tensor& out, const at::Tensor& lse, const std::optional<at::Tensor>& cu_seqlens_q,
    const std::optional<at::Tensor>& cu_seqlens_k, std::int64_t max_seqlen_q, std::int64_t max_seqlen_k,
    std::optional<double> scale, std::int64_t window_left, std::int64_t window_right, bool top_left,
    bool deterministic, c10::string_view kernel_name) {
  const at::Tensor q = attention_ready(q_in), k = attention_ready(k_in), v = attention_ready(v_in),
                   o = attention_ready(out), d_o = attention_ready(grad_out);
  at::Tensor dq = at::empty_like(q), dk = at::empty_like(k), dv = at::empty_like(v);
  AttentionCall call({{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "out"}, {&lse, "lse"}, {&d_o, "grad_out"}, {&dq, "dq"},
                      {&dk, "dk"}, {&dv, "dv"}},
                     cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left, window_right, top_left,
                     kernel_name);
  call.key.add(std::int64_t{deterministic});
  const auto* entry = static_cast<const AttentionBackwardEntry*>(attention_cache->get(call.key.bytes(), [&] {
    bridge::AttentionBackwardArgs args{.forward = call.forward_args(),
                                       .d_o = call.described(5, "grad_out"),
                                       .dq = call.described(6, "dq"),
                                       .dk = call.described(7, "dk"),
                                       .dv = call.described(8, "dv"),
                                       .deterministic = deterministic};
    auto made = std::make_unique<AttentionBackwardEntry>();  // kept, as the op
    check(api->attention_backward_op(args, &made->op, &made->workspace_bytes));
    return static_cast<void*>(made.release());
  }));
  const at::Tensor workspace =
      at::empty({static_cast<std::int64_t>(entry->workspace_bytes)}, q.options().dtype(at::kByte));
  std::uint64_t addresses[11];
  call.addresses(addresses);
  check(api->attention_backward_run(entry->op, addresses, address_of(workspace), current_stream(q)));
  return {std::move(dq), std::move(dk), std::move(dv)};
}

// A compiled decode, the workspace bytes its runs take, and the workspace
// of each stream it ran on (zero-filled once: every run leaves it so).
struct DecodeEntry {
  void* op = nullptr;
  std::uint64_t workspace_bytes = 0;
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, at::Tensor> workspaces;
};

auto* decode_cache = new OpCache();  // kept past interpreter exit

// warpforge.attention_decode where torch keeps no record of the call (plain
// eager, no CUDA graph being captured: torch_attention.attention_decode
// decides): (O, lse) as the Python kernel, _decode, returns them (no lse
// without with_lse), one launch; a call's host time is a look-up by a byte
// key, O's allocation and the launch (docs/PERFORMANCE.md, "Decode at the
// read floor").
std::pair<at::Tensor, std::optional<at::Tensor>> attention_decode(
    const at::Tensor& q_in, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& block_table,
    const at::Tensor& kv_lens, std::optional<double> scale, bool causal, std::int64_t window_left,
    std::int64_t splits, bool with_lse) {
  const at::Tensor q = attention_ready(q_in);
  at::Tensor o = uninitialized_like(q);
  std::optional<at::Tensor> lse;
  if (with_lse) lse = uninitialized(q, q.sizes().slice(0, std::min<std::size_t>(3, q.sizes().size())), at::kFloat);
  const std::array<std::pair<const at::Tensor*, const char*>, 5> inputs = {
      {{&q, "q"}, {&k_cache, "k_cache"}, {&v_cache, "v_cache"}, {&block_table, "block_table"}, {&kv_lens, "kv_lens"}}};
  std::array<std::int32_t, 5> types{};
  Key key;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    types[i] = dtype_value(inputs[i].first->scalar_type(), inputs[i].second);
    key.add(*inputs[i].first, types[i]);
  }
  key.add(std::int64_t{scale.has_value()});
  key.add_double(scale.value_or(0.0));
  for (std::int64_t value : {std::int64_t{causal}, window_left, splits, std::int64_t{with_lse}}) key.add(value);
  auto* entry = static_cast<DecodeEntry*>(decode_cache->get(key.bytes(), [&] {
    bridge::AttentionDecodeArgs args{.q = describe(q, types[0], "q"),
                                     .k_cache = describe(k_cache, types[1], "k_cache"),
                                     .v_cache = describe(v_cache, types[2], "v_cache"),
                                     .block_table = describe(block_table, types[3], "block_table"),
                                     .kv_lens = describe(kv_lens, types[4], "kv_lens"),
                                     .o = describe(o, types[0], "o"),
                                     .has_lse = with_lse,
                                     .has_scale = scale.has_value(),
                                     .causal = causal,
                                     .scale = scale.value_or(0.0),
                                     .window_left = window_left,
                                     .splits = splits};
    if (lse) args.lse = describe(*lse, static_cast<std::int32_t>(DType::f32), "lse");
    auto made = std::make_unique<DecodeEntry>();  // kept, as the op
    check(api->attention_decode_op(args, &made->op, &made->workspace_bytes));
    return static_cast<void*>(made.release());
  }));
  const std::uintptr_t stream = current_stream(q);
  at::Tensor workspace;
  {
    std::lock_guard lock(entry->mutex);
    auto it = entry->workspaces.find(stream);
    if (it == entry->workspaces.end())
      it = entry->workspaces
               .emplace(stream, at::zeros({static_cast<std::int64_t>(entry->workspace_bytes)}, q.options().dtype(at::kByte)))
               .first;
    workspace = it->second;
  }
  const std::uint64_t addresses[7] = {address_of(q),           address_of(k_cache), address_of(v_cache),
                                      address_of(block_table), address_of(kv_lens), address_of(o),
                                      lse ? address_of(*lse) : 0};
  check(api->attention_decode_run(entry->op, addresses, address_of(workspace), stream));
  return {std::move(o), std::move(lse)};
}

// warpforge._warpforge_torch.attention_decode(q, k_cache, v_cache,
// block_table, kv_lens, scale, causal, window_left, splits, with_lse) ->
// (O, lse or None): the kernel above called from Python without the
// dispatcher's round trip, or NotImplemented where torch must see the
// operator (plain_call: a tensor subclass, a mode; the caller has checked
// torch.compile's tracing, CUDA graph capture and requires_grad).
PyObject* attention_decode_method(PyObject*, PyObject* const* args, Py_ssize_t count) {
  HANDLE_TH_ERRORS
  if (!arguments("attention_decode", count, 10)) return nullptr;
  std::array<std::optional<at::Tensor>, 5> t;
  if (!plain_call(args, t) || !t[0] || !t[1] || !t[2] || !t[3] || !t[4]) Py_RETURN_NOTIMPLEMENTED;
  std::optional<double> scale;
  if (args[5] != Py_None) scale = PyFloat_AsDouble(args[5]);
  const int causal = PyObject_IsTrue(args[6]), with_lse = PyObject_IsTrue(args[9]);
  const long long window_left = PyLong_AsLongLong(args[7]), splits = PyLong_AsLongLong(args[8]);
  if (PyErr_Occurred()) return nullptr;
  auto [o, lse] = attention_decode(*t[0], *t[1], *t[2], *t[3], *t[4], scale, causal != 0, window_left, splits,
                                   with_lse != 0);
  PyObject* first = THPVariable_Wrap(std::move(o));
  PyObject* second = lse ? THPVariable_Wrap(std::move(*lse)) : Py_NewRef(Py_None);
  PyObject* result = first && second ? PyTuple_Pack(2, first, second) : nullptr;
  Py_XDECREF(first);
  Py_XDECREF(second);
  return result;
  END_HANDLE_TH_ERRORS
}

PyMethodDef decode_methods[] = {
    {"attention_decode", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(attention_decode_method)),
     METH_FASTCALL,
     "attention_decode(q, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits, with_lse) "
     "-> (O, lse or None): warpforge.attention_decode's plain eager call (torch_attention.attention_decode)."},
    {nullptr, nullptr, 0, nullptr}};

// attention_forward and attention_backward through the dispatcher.
std::tuple<at::Tensor, at::Tensor> call_attention_forward(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& cu_q,
    const std::optional<at::Tensor>& cu_k, std::int64_t max_q, std::int64_t max_k, std::optional<double> scale,
    std::int64_t left, std::int64_t right, bool top_left, bool deterministic, c10::string_view kernel_name) {
  if (direct({&q, &k, &v, cu_q ? &*cu_q : nullptr, cu_k ? &*cu_k : nullptr}))
    return attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, left, right, top_left, deterministic,
                             kernel_name);
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("warpforge::attention_forward", "")
          .typed<std::tuple<at::Tensor, at::Tensor>(
              const at::Tensor&, const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
              const std::optional<at::Tensor>&, std::int64_t, std::int64_t, std::optional<double>, std::int64_t,
              std::int64_t, bool, bool, c10::string_view)>();
  return op.call(q, k, v, cu_q, cu_k, max_q, max_k, scale, left, right, top_left, deterministic, kernel_name);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> call_attention_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& out,
    const at::Tensor& lse, const std::optional<at::Tensor>& cu_q, const std::optional<at::Tensor>& cu_k,
    std::int64_t max_q, std::int64_t max_k, std::optional<double> scale, std::int64_t left, std::int64_t right,
    bool top_left, bool deterministic, c10::string_view kernel_name) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("warpforge::attention_backward", "")
          .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
              const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
              const at::Tensor&, const std::optional<at::Tensor>&, const std::optional<at::Tensor>&, std::int64_t,
              std::int64_t, std::optional<double>, std::int64_t, std::int64_t, bool, bool, c10::string_view)>();
  return op.call(grad_out, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale, left, right, top_left, deterministic,
                 kernel_name);
}

// attention_forward's autograd in C++ (as grouped_mm's: the Python
// register_autograd wrapper costs a call ~40 us of host time): dQ, dK, dV
// from attention_backward; lse is not differentiable (as in FlashAttention).
class AttentionFunction : public torch::autograd::Function<AttentionFunction> {
 public:
  static torch::autograd::variable_list forward(
      torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
      const std::optional<at::Tensor>& cu_q, const std::optional<at::Tensor>& cu_k, std::int64_t max_q,
      std::int64_t max_k, std::optional<double> scale, std::int64_t left, std::int64_t right, bool top_left,
      bool deterministic, c10::string_view kernel_name) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [out, lse] = call_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, left, right, top_left,
                                             deterministic, kernel_name);
    ctx->save_for_backward({q, k, v, out, lse, cu_q.value_or(at::Tensor()), cu_k.value_or(at::Tensor())});
    ctx->saved_data["max_q"] = max_q;
    ctx->saved_data["max_k"] = max_k;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["left"] = left;
    ctx->saved_data["right"] = right;
    ctx->saved_data["top_left"] = top_left;
    ctx->saved_data["deterministic"] = deterministic;
    ctx->saved_data["kernel_name"] = std::string(kernel_name);
    ctx->mark_non_differentiable({lse});
    return {out, lse};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    auto optional = [](const at::Tensor& t) { return t.defined() ? std::optional(t) : std::nullopt; };
    const auto& d = ctx->saved_data;
    const std::string kernel_name = d.at("kernel_name").toStringRef();
    auto [dq, dk, dv] = call_attention_backward(
        grads[0], saved[0], saved[1], saved[2], saved[3], saved[4], optional(saved[5]), optional(saved[6]),
        d.at("max_q").toInt(), d.at("max_k").toInt(), d.at("scale").toOptional<double>(), d.at("left").toInt(),
        d.at("right").toInt(), d.at("top_left").toBool(), d.at("deterministic").toBool(), kernel_name);
    torch::autograd::variable_list grad_inputs(13);
    grad_inputs[0] = dq;
    grad_inputs[1] = dk;
    grad_inputs[2] = dv;
    return grad_inputs;
  }
};

std::tuple<at::Tensor, at::Tensor> attention_forward_autograd(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& cu_q,
    const std::optional<at::Tensor>& cu_k, std::int64_t max_q, std::int64_t max_k, std::optional<double> scale,
    std::int64_t left, std::int64_t right, bool top_left, bool deterministic, c10::string_view kernel_name) {
  // A call that records no graph (grad mode off, or no input requiring a
  // gradient) goes below autograd directly: no node, no saved tensors (an
  // inference call's host time).
  if (!at::GradMode::is_enabled() || !(q.requires_grad() || k.requires_grad() || v.requires_grad())) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, left, right, top_left, deterministic,
                                  kernel_name);
  }
  const torch::autograd::variable_list r = AttentionFunction::apply(q, k, v, cu_q, cu_k, max_q, max_k, scale, left,
                                                                    right, top_left, deterministic, kernel_name);
  return {r[0], r[1]};
}

// warpforge._warpforge_torch.attention_forward(q, k, v, cu_seqlens_q,
// cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left, window_right,
// top_left, deterministic, kernel) -> (O, lse): warpforge.attention's eager
// call (torch_attention.attention; the direct calls above).
PyObject* attention_forward_direct(PyObject*, PyObject* const* args, Py_ssize_t count) {
  HANDLE_TH_ERRORS
  if (!arguments("attention_forward", count, 13)) return nullptr;
  std::array<std::optional<at::Tensor>, 5> t;
  if (!plain_call(args, t) || !t[0] || !t[1] || !t[2]) Py_RETURN_NOTIMPLEMENTED;
  const long long max_q = PyLong_AsLongLong(args[5]), max_k = PyLong_AsLongLong(args[6]);
  std::optional<double> scale;
  if (args[7] != Py_None) scale = PyFloat_AsDouble(args[7]);
  const long long left = PyLong_AsLongLong(args[8]), right = PyLong_AsLongLong(args[9]);
  const int top_left = PyObject_IsTrue(args[10]), deterministic = PyObject_IsTrue(args[11]);
  const c10::string_view kernel = text_argument(args[12]);
  if (PyErr_Occurred()) return nullptr;
  const auto [out, lse] = attention_forward_autograd(*t[0], *t[1], *t[2], t[3], t[4], max_q, max_k, scale, left, right,
                                                     top_left != 0, deterministic != 0, kernel);
  return wrap({out, lse});
  END_HANDLE_TH_ERRORS
}

PyMethodDef attention_forward_methods[] = {
    {"attention_forward", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(attention_forward_direct)),
     METH_FASTCALL, "attention_forward(...): torch.ops.warpforge.attention_forward's eager call, or NotImplemented."},
    {nullptr, nullptr, 0, nullptr}};

#include "row_kernels.inc"
#include "attention_steps.inc"

// Registered once the bridge is in hand (not by static TORCH_LIBRARY_IMPL
// objects, which would register at load time, before a failed import could
// refuse): a failed import leaves the Python kernels in place.
void register_kernels() {
  for (c10::DispatchKey k : {c10::DispatchKey::CUDA, c10::DispatchKey::CPU}) {
    auto* library = new torch::Library(torch::Library::IMPL, "warpforge", k, __FILE__,
                                       __LINE__);  // kept: torch drops kernels with their library
    library->impl("gemm_amax", TORCH_FN(gemm_amax));
    library->impl("gemm", TORCH_FN(gemm));
    library->impl("grouped_mm", TORCH_FN(grouped_mm));
    library->impl("attention_forward", TORCH_FN(attention_forward));
    library->impl("attention_backward", TORCH_FN(attention_backward));
    register_row_kernels(*library);
  }
  auto* autograd = new torch::Library(torch::Library::IMPL, "warpforge", c10::DispatchKey::Autograd, __FILE__,
                                      __LINE__);  // kept, as above
  autograd->impl("grouped_mm", TORCH_FN(grouped_mm_autograd));
  autograd->impl("attention_forward", TORCH_FN(attention_forward_autograd));
  register_row_autograd(*autograd);
}

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_warpforge_torch",
                          "The C++ kernels of torch.ops.warpforge.gemm_amax, .gemm, .grouped_mm, "
                          ".attention_forward, .attention_backward and the row ops "
                          "(warpforge.torch imports this module).",
                          -1, row_methods};

}  // namespace
}  // namespace warpforge::python

PyMODINIT_FUNC PyInit__warpforge_torch() {
  namespace wp = warpforge::python;
  // torch's C++ ABI changes between releases: only the torch built against.
  PyObject* torch = PyImport_ImportModule("torch");
  if (!torch) return nullptr;
  PyObject* version = PyObject_GetAttrString(torch, "__version__");
  Py_DECREF(torch);
  if (!version) return nullptr;
  const char* running = PyUnicode_AsUTF8(version);
  const bool same = running && std::strcmp(running, WARPFORGE_TORCH_VERSION) == 0;
  if (!same) {
    if (running)
      PyErr_Format(PyExc_ImportError,
                   "warpforge._warpforge_torch was built against torch %s, this is torch %s: "
                   "rebuild the package",
                   WARPFORGE_TORCH_VERSION, running);
    Py_DECREF(version);
    return nullptr;
  }
  Py_DECREF(version);
  PyObject* core = PyImport_ImportModule("warpforge._warpforge");
  if (!core) return nullptr;
  PyObject* capsule = PyObject_GetAttrString(core, "_torch_bridge");
  Py_DECREF(core);
  if (!capsule) return nullptr;
  const auto* table =
      static_cast<const wp::bridge::Api*>(PyCapsule_GetPointer(capsule, wp::bridge::kCapsuleName));
  Py_DECREF(capsule);
  if (!table) return nullptr;
  if (table->version != wp::bridge::kVersion) {
    PyErr_Format(PyExc_ImportError,
                 "warpforge._warpforge_torch speaks bridge version %d, warpforge._warpforge %d: "
                 "rebuild the package",
                 wp::bridge::kVersion, table->version);
    return nullptr;
  }
  wp::api = table;
  try {
    wp::register_kernels();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ImportError, e.what());
    return nullptr;
  }
  PyObject* module = PyModule_Create(&wp::module_def);
  if (module && (PyModule_AddFunctions(module, wp::decode_methods) != 0 ||
                 PyModule_AddFunctions(module, wp::gemm_methods) != 0 ||
                 PyModule_AddFunctions(module, wp::attention_forward_methods) != 0 ||
                 PyModule_AddFunctions(module, wp::attention_steps_methods) != 0))
    Py_CLEAR(module);
  return module;
}
