// The compiled ops the extension keeps, one per description, so that the
// package's one-call functions (warpforge.gemm_amax, the torch operators, the
// XLA FFI handlers) compile a problem once.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "warpforge/runtime/tensor.hpp"

namespace warpforge::python {

// A cache key: every view's description, device and base alignment (up to
// 256 bytes: the kernel chosen may depend on it; null views count as absent),
// then the options.
inline std::string key_of(std::initializer_list<const runtime::TensorView*> views,
                          const std::string& options) {
  std::string key = options;
  for (const runtime::TensorView* v : views) {
    key += '|';
    if (!v) continue;
    const std::uint64_t address = v->address();
    const std::uint64_t alignment =
        address == 0 ? 256 : std::min<std::uint64_t>(address & (~address + 1), 256);
    key += v->describe() + " @" +
           std::to_string(reinterpret_cast<std::uintptr_t>(&v->device().backend())) + " %" +
           std::to_string(alignment);
  }
  return key;
}

// The op under `key`, made by `make` and compiled the first time (a refusal
// throws and caches nothing).
template <class Op>
std::shared_ptr<Op> cached(const std::string& key,
                           const std::function<std::shared_ptr<Op>()>& make) {
  static std::mutex mutex;
  static auto* cache =
      new std::map<std::string, std::shared_ptr<Op>>();  // kept past interpreter exit
  {
    std::lock_guard lock(mutex);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  std::shared_ptr<Op> op = make();
  op->compile();
  std::lock_guard lock(mutex);
  return cache->emplace(key, op).first->second;
}

}  // namespace warpforge::python
