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

}  // namespace

std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what) {
  const Driver& d = driver();
  std::vector<char> info(kLogBytes, '\0'), errors(kLogBytes, '\0');
  // CUDA Driver API, cuLinkCreate and CUjit_option: sizes travel as pointers.
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* values[] = {info.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(info.size() - 1)),
                    errors.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(errors.size() - 1)),
                    reinterpret_cast<void*>(std::uintptr_t{1})};
  LinkState link;
  check(d.cuLinkCreate(5, options, values, &link.state), "cuLinkCreate_v2");

  // The PTX is passed with its terminating NUL, as cuLinkAddData expects of text input.
  const CUresult added = d.cuLinkAddData(link.state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()),
                                         ptx.size() + 1, "warpforge.ptx", 0, nullptr, nullptr);
  if (added != CUDA_SUCCESS)
    throw cuda_error(added, "cuLinkAddData_v2(PTX of " + what + ")",
                     "; the JIT says:\n" + explain_jit_log(text_of(errors), ptx));
  void* cubin = nullptr;
  std::size_t cubin_bytes = 0;
  const CUresult linked = d.cuLinkComplete(link.state, &cubin, &cubin_bytes);
  if (linked != CUDA_SUCCESS)
    throw cuda_error(linked, "cuLinkComplete(" + what + ")",
                     "; the JIT says:\n" + explain_jit_log(text_of(errors), ptx));
  const auto* bytes = static_cast<const std::uint8_t*>(cubin);
  return std::vector<std::uint8_t>(bytes, bytes + cubin_bytes);
}

}  // namespace warpforge::runtime::cuda
