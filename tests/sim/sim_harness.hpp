// Test helpers for the simulator: build a kernel's IR from PTX-like lines (a
// small reader for the instruction syntax used in these tests only; the
// project's PTX parser lives in ptx/), and launch it on a SimBackend.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/sim/sim_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::sim::testing {

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t;");
  return s.substr(b, e - b + 1);
}

// Splits at commas outside brackets and braces.
inline std::vector<std::string> split_operands(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

inline bool is_special_register(const std::string& s) {
  static const char* prefixes[] = {"%tid",
                                   "%ntid",
                                   "%ctaid",
                                   "%nctaid",
                                   "%laneid",
                                   "%warpid",
                                   "%nwarpid",
                                   "%clock",
                                   "%smid",
                                   "%nsmid",
                                   "%dynamic_smem_size",
                                   "%lanemask",
                                   "%cluster",
                                   "%is_explicit_cluster",
                                   "%total_smem_size"};
  for (const char* p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

inline ptx::Operand parse_operand(const std::string& text, bool label) {
  const std::string s = trim(text);
  using K = ptx::Operand::Kind;
  if (s == "_") return ptx::Operand::sink();
  if (s.front() == '{') {
    std::vector<ptx::Operand> elems;
    for (const auto& e : split_operands(s.substr(1, s.size() - 2)))
      elems.push_back(parse_operand(e, false));
    return ptx::Operand::vector(elems);
  }
  if (s.front() == '[') {
    const std::string inner = s.substr(1, s.size() - 2);
    const auto plus = inner.find('+');
    std::int64_t offset = plus == std::string::npos ? 0 : std::stoll(inner.substr(plus + 1));
    return ptx::Operand::address(parse_operand(inner.substr(0, plus), false), offset);
  }
  if (const auto bar = s.find('|'); bar != std::string::npos)
    return ptx::Operand::pair(parse_operand(s.substr(0, bar), false),
                              parse_operand(s.substr(bar + 1), false));
  if (s.front() == '!') return ptx::Operand::reg(s.substr(1), true);
  if (s.front() == '%')
    return is_special_register(s) ? ptx::Operand::sreg(s) : ptx::Operand::reg(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'd'))
    return ptx::Operand::imm_text(K::imm_float, s);
  if (s.find('.') != std::string::npos) return ptx::Operand::imm_text(K::imm_float, s);
  if (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')
    return ptx::Operand::imm_text(K::imm_int, s);
  return label ? ptx::Operand::label(s) : ptx::Operand::symbol(s);
}

inline ptx::Instruction parse_instruction(const std::string& line) {
  std::string s = trim(line);
  std::optional<ptx::Guard> guard;
  if (s.front() == '@') {
    const auto sp = s.find(' ');
    std::string g = s.substr(1, sp - 1);
    const bool neg = g.front() == '!';
    guard = ptx::Guard{neg ? g.substr(1) : g, neg};
    s = trim(s.substr(sp + 1));
  }
  const auto sp = s.find_first_of(" \t");
  ptx::Instruction inst = ptx::Instruction::parse_opcode(s.substr(0, sp));
  inst.guard = guard;
  if (sp != std::string::npos) {
    const auto ops = split_operands(s.substr(sp + 1));
    for (std::size_t i = 0; i < ops.size(); ++i)
      inst.operands.push_back(parse_operand(ops[i], inst.opcode == ptx::Opcode::bra && i + 1 == ops.size()));
  }
  return inst;
}

// A one-kernel module under construction.
class KernelSource {
 public:
  explicit KernelSource(std::string name) {
    module_.version_major = 8;
    module_.version_minor = 0;
    module_.target = {"sm_90a"};
    function_.name = std::move(name);
  }

  KernelSource& param(ptx::Type t, const std::string& name) {
    function_.params.push_back(ptx::Variable{.space = ptx::Space::param, .type = t, .name = name});
    return *this;
  }
  KernelSource& regs(ptx::Type t, const std::string& prefix, int n) {
    statements_.push_back(
        ptx::Variable{.space = ptx::Space::reg, .type = t, .name = prefix, .range = n});
    return *this;
  }
  KernelSource& shared(ptx::Type t, const std::string& name, std::int64_t count, int align = 16) {
    statements_.push_back(ptx::Variable{
        .space = ptx::Space::shared, .type = t, .name = name, .align = align, .dims = {count}});
    return *this;
  }
  KernelSource& extern_shared(const std::string& name) {
    module_.items.push_back(ptx::Variable{.space = ptx::Space::shared,
                                          .linkage = ptx::Linkage::extern_,
                                          .type = ptx::Type::b8,
                                          .name = name,
                                          .align = 16,
                                          .dims = {std::nullopt}});
    return *this;
  }
  KernelSource& module_variable(ptx::Variable v) {
    module_.items.push_back(std::move(v));
    return *this;
  }
  KernelSource& local(ptx::Type t, const std::string& name, std::int64_t count) {
    statements_.push_back(ptx::Variable{
        .space = ptx::Space::local, .type = t, .name = name, .align = 8, .dims = {count}});
    return *this;
  }
  // PTX instructions (ended by ';' or a newline) and `label:` lines.
  KernelSource& code(const std::string& text) {
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find_first_of(";\n", start);
      if (end == std::string::npos) end = text.size();
      const std::string line = trim(text.substr(start, end - start));
      start = end + 1;
      if (line.empty()) continue;
      if (line.back() == ':')
        add_label(line.substr(0, line.size() - 1));
      else
        add_instruction(parse_instruction(line));
    }
    return *this;
  }

  void add_label(std::string name) { statements_.push_back(ptx::Label{std::move(name)}); }
  void add_instruction(ptx::Instruction inst) { statements_.push_back(std::move(inst)); }

  ptx::Module module() const {
    ptx::Module m = module_;
    ptx::Function f = function_;
    // Sized once and assigned: GCC 12 warns falsely (-Wmaybe-uninitialized)
    // when a vector of the recursive Statement variant grows.
    std::vector<ptx::Statement> body(statements_.size());
    for (std::size_t i = 0; i < statements_.size(); ++i)
      std::visit([&](const auto& s) { body[i] = s; }, statements_[i]);
    f.body = ptx::Block{std::move(body)};
    m.items.push_back(f);
    return m;
  }
  const std::string& name() const { return function_.name; }

 private:
  ptx::Module module_;
  ptx::Function function_;
  std::vector<std::variant<ptx::Instruction, ptx::Label, ptx::Variable>> statements_;
};

inline runtime::KernelArg arg_u64(std::uint64_t v) {
  runtime::KernelArg a;
  a.bytes.resize(8);
  std::memcpy(a.bytes.data(), &v, 8);
  return a;
}

inline runtime::KernelArg arg_u32(std::uint32_t v) {
  runtime::KernelArg a;
  a.bytes.resize(4);
  std::memcpy(a.bytes.data(), &v, 4);
  return a;
}

// A simulator with helpers for buffers and one-line launches.
class SimTest : public ::testing::Test {
 protected:
  SimBackend sim{SimOptions{.worker_threads = 2}};

  template <class T>
  runtime::DevicePtr upload(const std::vector<T>& host) {
    const runtime::DevicePtr p = sim.allocate(host.size() * sizeof(T));
    sim.copy_to_device(p, host.data(), host.size() * sizeof(T), nullptr);
    return p;
  }
  template <class T>
  runtime::DevicePtr zeros(std::size_t n) {
    return upload(std::vector<T>(n));
  }
  template <class T>
  std::vector<T> download(runtime::DevicePtr p, std::size_t n) {
    std::vector<T> host(n);
    sim.copy_to_host(host.data(), p, n * sizeof(T), nullptr);
    return host;
  }

  void run(const KernelSource& k, runtime::Dim3 grid, runtime::Dim3 block,
           const std::vector<runtime::KernelArg>& args, std::uint32_t dynamic_shared = 0) {
    auto loaded = sim.load(k.module());
    sim.launch(*loaded, k.name(),
               {.grid = grid, .block = block, .dynamic_shared_bytes = dynamic_shared}, args,
               nullptr);
  }

  // The message of the SimError that running `k` throws (fails the test if none).
  std::string error_of(const KernelSource& k, runtime::Dim3 grid, runtime::Dim3 block,
                       const std::vector<runtime::KernelArg>& args) {
    try {
      run(k, grid, block, args);
    } catch (const SimError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return "";
  }
};

// Line of the first emitted line containing `needle`, 1-based.
inline int line_of(const ptx::Module& m, const std::string& needle) {
  const std::string text = ptx::emit(m);
  const auto pos = text.find(needle);
  if (pos == std::string::npos) return -1;
  return 1 + static_cast<int>(
                 std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

}  // namespace warpforge::sim::testing
