#include "warpforge/amdgpu/toolchain.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "warpforge/error.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"

namespace warpforge::amdgpu {
namespace {

namespace fs = std::filesystem;

// Newest first: it knows the most processors.
const char* const kVersions[] = {"-21", "-20", "-19", "-18", "-17", "-16"};

bool executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string find_tool(const std::string& tool) {
  if (const char* bin = std::getenv("WARPFORGE_LLVM_BIN")) {
    std::string p = std::string(bin) + "/" + tool;
    return executable(p) ? p : "";
  }
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  for (const char* v : kVersions) {
    std::istringstream split(dirs);
    for (std::string dir; std::getline(split, dir, ':');)
      if (!dir.empty() && executable(dir + "/" + tool + v)) return dir + "/" + tool + v;
  }
  return "";
}

// The CUDA toolkit's runner starts a program without a shell and collects
// its output; it serves LLVM's tools as well.
using Run = ptx::ToolRun;
Run run(const std::string& program, const std::vector<std::string>& args) { return ptx::run_tool(program, args); }

void run_checked(const std::string& program, const std::vector<std::string>& args) {
  Run r = run(program, args);
  if (r.exit_code != 0) {
    std::string line = program;
    for (const auto& a : args) line += " " + a;
    throw ToolchainError(line + " failed (" + r.status() + "):\n" + r.output);
  }
}

// A private temporary folder, removed when the compilation ends.
class WorkDir {
 public:
  WorkDir() {
    std::string templ = (fs::temp_directory_path() / "warpforge-amdgpu-XXXXXX").string();
    if (!::mkdtemp(templ.data()))
      throw ToolchainError("cannot create a temporary folder under " +
                           fs::temp_directory_path().string());
    path_ = templ;
  }
  ~WorkDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) throw ToolchainError("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ToolchainError("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string mcpu(Target t) {
  return "-mcpu=" + to_string(t);
}

// opt then llc, to `kind` ("asm" or "obj"); returns the output file's path.
std::string compile(const WorkDir& dir, const LlvmTools& tools, const std::string& llvm_ir,
                    Target target, const std::string& kind) {
  write_file(dir.file("kernel.ll"), llvm_ir.data(), llvm_ir.size());
  run_checked(tools.opt, {"-mtriple=amdgcn-amd-amdhsa", mcpu(target), "-O2", dir.file("kernel.ll"),
                          "-o", dir.file("kernel.bc")});
  std::string out = dir.file(kind == "asm" ? "kernel.s" : "kernel.o");
  run_checked(tools.llc, {"-O3", "-mtriple=amdgcn-amd-amdhsa", mcpu(target), "-filetype=" + kind,
                          dir.file("kernel.bc"), "-o", out});
  return out;
}

}  // namespace

LlvmTools find_llvm_tools() {
  LlvmTools t{find_tool("opt"), find_tool("llc"), find_tool("ld.lld"), find_tool("llvm-objdump")};
  std::string missing;
  for (auto [name, path] : {std::pair{"opt", &t.opt},
                            {"llc", &t.llc},
                            {"ld.lld", &t.lld},
                            {"llvm-objdump", &t.objdump}})
    if (path->empty()) missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty()) {
    const char* bin = std::getenv("WARPFORGE_LLVM_BIN");
    throw ToolchainError(
        "LLVM for AMDGPU not found (missing: " + missing + ", " +
        (bin ? "looked in WARPFORGE_LLVM_BIN=" + std::string(bin)
             : std::string("looked on PATH for versions 16 to 21, e.g. llc-19")) +
        "); install it with scripts/install-deps.sh (`make` runs it: apt-get install llvm-19 "
        "lld-19) "
        "or set WARPFORGE_LLVM_BIN to a folder holding opt, llc, ld.lld and llvm-objdump");
  }
  return t;
}

std::string compile_to_assembly(const std::string& llvm_ir, Target target) {
  LlvmTools tools = find_llvm_tools();
  WorkDir dir;
  return read_file(compile(dir, tools, llvm_ir, target, "asm"));
}

std::vector<char> compile_to_code_object(const std::string& llvm_ir, Target target) {
  LlvmTools tools = find_llvm_tools();
  WorkDir dir;
  std::string object = compile(dir, tools, llvm_ir, target, "obj");
  run_checked(tools.lld, {"-shared", object, "-o", dir.file("kernel.hsaco")});
  std::string bytes = read_file(dir.file("kernel.hsaco"));
  return {bytes.begin(), bytes.end()};
}

std::string disassemble(const std::vector<char>& code_object, Target target) {
  LlvmTools tools = find_llvm_tools();
  WorkDir dir;
  write_file(dir.file("kernel.hsaco"), code_object.data(), code_object.size());
  Run r = run(tools.objdump,
              {"-d", "-" + mcpu(target), dir.file("kernel.hsaco")});  // objdump spells it --mcpu
  if (r.exit_code != 0)
    throw ToolchainError(tools.objdump + " -d failed (" + r.status() + "):\n" + r.output);
  return r.output;
}

}  // namespace warpforge::amdgpu
