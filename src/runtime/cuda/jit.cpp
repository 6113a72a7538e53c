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

// The log buffers every JIT call is given (CUDA Driver API, CUjit_option:
// sizes travel as pointers), and CU_JIT_TARGET when the PTX names an
// arch-specific target.
struct JitOptions {
  std::vector<char> info = std::vector<char>(kLogBytes, '\0'), errors = std::vector<char>(kLogBytes, '\0');
  std::vector<CUjit_option> names;
  std::vector<void*> values;
  explicit JitOptions(std::optional<int> jit_target) {
    auto as_value = [](std::uintptr_t v) { return reinterpret_cast<void*>(v); };
    names = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    values = {info.data(), as_value(info.size() - 1), errors.data(), as_value(errors.size() - 1)};
    if (jit_target) {
      names.push_back(CU_JIT_TARGET);
      values.push_back(as_value(static_cast<std::uintptr_t>(*jit_target)));
    }
  }
  unsigned count() const { return static_cast<unsigned>(names.size()); }
};

}  // namespace

std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what,
                                      std::optional<int> jit_target) {
  const Driver& d = driver();
  JitOptions jit(jit_target);
  LinkState link;
  check(d.cuLinkCreate(jit.count(), jit.names.data(), jit.values.data(), &link.state), "cuLinkCreate_v2");

  // The PTX is passed with its terminating NUL, as cuLinkAddData expects of text input.
  const CUresult added = d.cuLinkAddData(link.state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()),
                                         ptx.size() + 1, "warpforge.ptx", 0, nullptr, nullptr);
  if (added != CUDA_SUCCESS)
    throw cuda_error(added, "cuLinkAddData_v2(PTX of " + what + ")", explain(jit.errors, jit.info, ptx));
  void* cubin = nullptr;
  std::size_t cubin_bytes = 0;
  const CUresult linked = d.cuLinkComplete(link.state, &cubin, &cubin_bytes);
  if (linked != CUDA_SUCCESS)
    throw cuda_error(linked, "cuLinkComplete(" + what + ")", explain(jit.errors, jit.info, ptx));
  const auto* bytes = static_cast<const std::uint8_t*>(cubin);
  return std::vector<std::uint8_t>(bytes, bytes + cubin_bytes);
}

bool needs_whole_program(const std::string& ptx) { return ptx.find("setmaxnreg.") != std::string::npos; }

CUmodule load_whole_program(const std::string& ptx, const std::string& what, std::optional<int> jit_target) {
  JitOptions jit(jit_target);
  CUmodule loaded = nullptr;
  const CUresult result =
      driver().cuModuleLoadDataEx(&loaded, ptx.c_str(), jit.count(), jit.names.data(), jit.values.data());
  if (result != CUDA_SUCCESS)
    throw cuda_error(result, "cuModuleLoadDataEx(PTX of " + what + ")", explain(jit.errors, jit.info, ptx));
  return loaded;
}

}  // namespace warpforge::runtime::cuda
