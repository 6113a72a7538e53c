#include "jit.hpp"

#include <cstring>

#include "driver.hpp"
#include "warpforge/runtime/jit_log.hpp"

namespace warpforge::runtime::cuda {
namespace {

constexpr std::size_t kLogBytes = 64 * 1024;

// Destroys the link state on every path; the cubin it owns must be copied out first.
struct LinkState {
  CUlinkState state = nullptr;
  ~LinkState() {
    if (state) driver().cuLinkDestroy(state);
  }
};

std::string text_of(const std::vector<char>& log) { return std::string(log.data(), strnlen(log.data(), log.size())); }

// The error log with the PTX lines it names quoted, then any warnings the
// info log holds.
std::string explain(const std::vector<char>& errors, const std::vector<char>& info, const std::string& ptx) {
  std::string out = "; the JIT says:\n" + explain_jit_log(text_of(errors), ptx);
  if (const std::string warnings = text_of(info); !warnings.empty()) out += "JIT info log:\n" + explain_jit_log(warnings, ptx);
  return out;
}

}  // namespace

std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what,
                                      std::optional<int> jit_target) {
  const Driver& d = driver();
  std::vector<char> info(kLogBytes, '\0'), errors(kLogBytes, '\0');
  // CUDA Driver API, cuLinkCreate and CUjit_option: sizes travel as pointers.
  auto as_value = [](std::uintptr_t v) { return reinterpret_cast<void*>(v); };
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_TARGET};
  void* values[] = {info.data(), as_value(info.size() - 1), errors.data(), as_value(errors.size() - 1),
                    as_value(static_cast<std::uintptr_t>(jit_target.value_or(0)))};
  const unsigned count = jit_target ? 5 : 4;
  LinkState link;
  check(d.cuLinkCreate(count, options, values, &link.state), "cuLinkCreate_v2");

  // The PTX is passed with its terminating NUL, as cuLinkAddData expects of text input.
  const CUresult added = d.cuLinkAddData(link.state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()),
                                         ptx.size() + 1, "warpforge.ptx", 0, nullptr, nullptr);
  if (added != CUDA_SUCCESS)
    throw cuda_error(added, "cuLinkAddData_v2(PTX of " + what + ")",
                     explain(errors, info, ptx));
  void* cubin = nullptr;
  std::size_t cubin_bytes = 0;
  const CUresult linked = d.cuLinkComplete(link.state, &cubin, &cubin_bytes);
  if (linked != CUDA_SUCCESS)
    throw cuda_error(linked, "cuLinkComplete(" + what + ")",
                     explain(errors, info, ptx));
  const auto* bytes = static_cast<const std::uint8_t*>(cubin);
  return std::vector<std::uint8_t>(bytes, bytes + cubin_bytes);
}

}  // namespace warpforge::runtime::cuda
