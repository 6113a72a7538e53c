#include "warpforge/runtime/launch_check.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"

namespace warpforge::runtime {
namespace {

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void refuse(const ptx::Function& kernel, const std::string& what) {
  throw RuntimeError("kernel '" + kernel.name + "': " + what);
}

void collect_symbols(const ptx::Operand& op, std::set<std::string>& out) {
  if (op.kind == ptx::Operand::Kind::symbol) out.insert(op.text);
  for (const auto& e : op.elems) collect_symbols(e, out);
}

// Walks a block: shared variables declared in it (summed into `bytes`) and
// the symbols its instructions name.
void scan(const ptx::Block& block, std::int64_t& bytes, std::set<std::string>& symbols) {
  for (const auto& statement : block.body) {
    if (const auto* v = std::get_if<ptx::Variable>(&statement)) {
      const bool sized = !v->dims.empty() ? v->dims.front().has_value() : true;
      if (v->space == ptx::Space::shared && v->linkage != ptx::Linkage::extern_ && sized) bytes += v->size_bytes();
    } else if (const auto* i = std::get_if<ptx::Instruction>(&statement)) {
      for (const auto& op : i->operands) collect_symbols(op, symbols);
    } else if (const auto* b = std::get_if<ptx::Block>(&statement)) {
      scan(*b, bytes, symbols);
    }
  }
}

std::int64_t product_of_args(const ptx::Directive& d) {
  std::int64_t n = 1;
  for (const auto& a : d.args) n *= a.int_value();
  return n;
}

void check_limits(const ptx::Function& kernel, const char* what, const Dim3& d, const Dim3& limit) {
  if (d.x == 0 || d.y == 0 || d.z == 0) refuse(kernel, std::string(what) + " " + dims(d) + " has a zero dimension");
  if (d.x > limit.x || d.y > limit.y || d.z > limit.z)
    refuse(kernel, std::string(what) + " " + dims(d) + " exceeds the limits " + dims(limit));
}

}  // namespace

const ptx::Function& find_kernel(const ptx::Module& module, const std::string& name) {
  const ptx::Function* f = module.find_function(name);
  if (f && f->is_entry && f->body) return *f;
  std::string entries;
  for (const auto* e : module.entries()) entries += (entries.empty() ? "" : ", ") + e->name;
  throw RuntimeError("no kernel '" + name + "' in the module" +
                     (f ? " ('" + name + "' is a " + (f->is_entry ? "prototype" : ".func") + ")" : "") +
                     "; its kernels: " + (entries.empty() ? "none" : entries));
}

std::int64_t static_shared_bytes(const ptx::Module& module, const ptx::Function& kernel) {
  std::int64_t bytes = 0;
  std::set<std::string> symbols;
  if (kernel.body) scan(*kernel.body, bytes, symbols);
  for (const auto& item : module.items) {
    const auto* v = std::get_if<ptx::Variable>(&item);
    if (!v || v->space != ptx::Space::shared || v->linkage == ptx::Linkage::extern_ || !symbols.count(v->name)) continue;
    if (v->dims.empty() || v->dims.front().has_value()) bytes += v->size_bytes();
  }
  return bytes;
}

void check_launch_config(const ptx::Function& kernel, std::int64_t static_bytes, const LaunchConfig& config,
                         const DeviceProperties& device) {
  check_limits(kernel, "grid", config.grid, Dim3{0x7fffffffu, 65535, 65535});
  const std::uint32_t max_threads = device.max_threads_per_block > 0 ? device.max_threads_per_block : 1024;
  check_limits(kernel, "block", config.block, Dim3{1024, 1024, 64});
  if (config.block.count() > max_threads)
    refuse(kernel, "block " + dims(config.block) + " has " + std::to_string(config.block.count()) +
                       " threads; the device allows at most " + std::to_string(max_threads));
  for (const auto& d : kernel.directives) {
    if (d.name == "reqntid") {
      Dim3 required;
      std::uint32_t* fields[] = {&required.x, &required.y, &required.z};
      for (std::size_t i = 0; i < d.args.size() && i < 3; ++i) *fields[i] = static_cast<std::uint32_t>(d.args[i].int_value());
      if (!(required == config.block))
        refuse(kernel, "block " + dims(config.block) + " differs from the kernel's .reqntid " + dims(required));
    } else if (d.name == "maxntid" && static_cast<std::int64_t>(config.block.count()) > product_of_args(d)) {
      refuse(kernel, "block " + dims(config.block) + " has " + std::to_string(config.block.count()) +
                         " threads, more than the kernel's .maxntid allows (" +
                         std::to_string(product_of_args(d)) + ")");
    }
  }

  const std::size_t limit =
      device.shared_bytes_per_block_optin ? device.shared_bytes_per_block_optin : device.shared_bytes_per_block;
  if (static_bytes + static_cast<std::int64_t>(config.dynamic_shared_bytes) > static_cast<std::int64_t>(limit))
    refuse(kernel, std::to_string(config.dynamic_shared_bytes) + " bytes of dynamic shared memory plus " +
                       std::to_string(static_bytes) + " static exceed the " + std::to_string(limit) +
                       " bytes per block that device '" + device.name + "' allows");

  if (config.overlap_previous && device.compute_capability_major < 9)
    refuse(kernel, "overlap_previous (programmatic dependent launch) needs compute capability 9.0 or newer; device '" +
                       device.name + "' is " + std::to_string(device.compute_capability_major) + "." +
                       std::to_string(device.compute_capability_minor));
  const Dim3& c = config.cluster;
  if (c == Dim3{}) return;
  if (c.x == 0 || c.y == 0 || c.z == 0) refuse(kernel, "cluster " + dims(c) + " has a zero dimension");
  if (device.compute_capability_major < 9)
    refuse(kernel, "cluster " + dims(c) + " needs compute capability 9.0 or newer; device '" + device.name + "' is " +
                       std::to_string(device.compute_capability_major) + "." +
                       std::to_string(device.compute_capability_minor));
  if (config.grid.x % c.x || config.grid.y % c.y || config.grid.z % c.z)
    refuse(kernel, "cluster " + dims(c) + " does not divide the grid " + dims(config.grid));
  if (c.count() > 8)
    refuse(kernel, "cluster " + dims(c) + " has " + std::to_string(c.count()) +
                       " CTAs; at most 8 (the portable cluster size) are accepted");
}

namespace {

constexpr std::uint8_t bit(Arg::Kind kind) { return std::uint8_t(1u << static_cast<unsigned>(kind)); }

bool aggregate(const ptx::Variable& p) { return !p.dims.empty() || p.vector_width > 0; }

// The kinds of Arg a parameter takes when the Arg is of its size (the rules
// of pack_arguments, found once per kernel).
std::uint8_t accepted_kinds(const ptx::Variable& p, std::uint32_t size) {
  std::uint8_t kinds = bit(Arg::Kind::bytes);
  if (aggregate(p)) return kinds;
  const ptx::Type t = p.type;
  if (p.ptr || (size == 8 && ptx::is_integer(t))) kinds |= bit(Arg::Kind::pointer);
  if (p.ptr) return kinds;
  if (ptx::is_integer(t)) kinds |= bit(Arg::Kind::integer);
  if (t == ptx::Type::f32 || t == ptx::Type::f64 || ptx::is_bits(t)) kinds |= bit(Arg::Kind::floating);
  return kinds;
}

// Refuses argument i if it does not fit its parameter, saying why.
void check_argument(const ptx::Function& kernel, std::size_t i, const Arg& a, std::size_t size) {
  const ptx::Variable& p = kernel.params[i];
  auto reject = [&](const std::string& expectation) {
    refuse(kernel, "parameter " + std::to_string(i) + " '" + p.name + "' (" + ptx::emit(p) + ") " + expectation +
                       ", got " + a.describe());
  };
  const ptx::Type t = p.type;
  if (a.kind() == Arg::Kind::bytes) {
    if (a.size() != size) reject("takes " + std::to_string(size) + " bytes");
  } else if (aggregate(p)) {
    reject("takes Arg::bytes of " + std::to_string(size) + " bytes");
  } else if (p.ptr) {
    if (a.kind() != Arg::Kind::pointer) reject("takes a device pointer");
  } else if (a.kind() == Arg::Kind::pointer) {
    if (size != 8 || !ptx::is_integer(t)) reject("is not a 64-bit integer and takes no pointer");
  } else if (a.kind() == Arg::Kind::integer) {
    if (!ptx::is_integer(t)) reject("takes a floating-point value");
    if (a.size() != size) reject("takes a " + std::to_string(size * 8) + "-bit integer");
  } else {  // floating
    const bool matches = (t == ptx::Type::f32 && a.size() == 4) || (t == ptx::Type::f64 && a.size() == 8) ||
                         (ptx::is_bits(t) && a.size() == size);
    if (!matches)
      reject(ptx::is_integer(t) ? "takes an integer"
             : t == ptx::Type::f32 || t == ptx::Type::f64
                 ? "takes a " + std::string(t == ptx::Type::f32 ? "float" : "double")
                 : "takes the " + std::to_string(size) + " raw bytes of its value (Arg::bytes_of)");
  }
  if (a.kind() == Arg::Kind::pointer) {
    if (a.address() == 0) reject("takes a non-null pointer");
    if (p.ptr_align > 0 && a.address() % static_cast<std::uint64_t>(p.ptr_align) != 0)
      reject("needs a pointer aligned to " + std::to_string(p.ptr_align) + " bytes");
  }
}

}  // namespace

ParamLayout param_layout(const ptx::Function& kernel) {
  ParamLayout layout;
  for (const ptx::Variable& p : kernel.params) {
    const auto size = static_cast<std::uint32_t>(p.size_bytes());
    const auto align = p.align ? static_cast<std::uint32_t>(p.align)
                               : std::max<std::uint32_t>(1, (ptx::bits(p.type) + 7) / 8);
    layout.bytes = (layout.bytes + align - 1) / align * align;
    layout.offsets.push_back(layout.bytes);
    layout.sizes.push_back(size);
    layout.accepts.push_back(accepted_kinds(p, size));
    layout.bytes += size;
    layout.align = std::max(layout.align, align);
  }
  return layout;
}

void pack_arguments(const ptx::Function& kernel, const ParamLayout& layout, std::span<const Arg> args,
                    std::byte* out) {
  if (args.size() != kernel.params.size()) {
    std::string names;
    for (const auto& p : kernel.params) names += (names.empty() ? "" : ", ") + p.name;
    refuse(kernel, "takes " + std::to_string(kernel.params.size()) + " parameters (" + names + "); " +
                       std::to_string(args.size()) + " arguments given");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    const std::uint32_t size = layout.sizes[i];
    // The common case in a few comparisons; anything else is judged (and
    // refused, with the reason) by check_argument.
    bool fits = (layout.accepts[i] & bit(a.kind())) && a.size() == size;
    if (fits && a.kind() == Arg::Kind::pointer) {
      const auto align = static_cast<std::uint64_t>(std::max(kernel.params[i].ptr_align, 1));
      fits = a.address() != 0 && a.address() % align == 0;
    }
    if (!fits) check_argument(kernel, i, a, size);
    std::byte* to = out + layout.offsets[i];
    switch (size) {  // the common sizes as fixed copies (a move each), the rest through memcpy's call
      case 4:
        std::memcpy(to, a.data(), 4);
        break;
      case 8:
        std::memcpy(to, a.data(), 8);
        break;
      default:
        std::memcpy(to, a.data(), size);
    }
  }
}

}  // namespace warpforge::runtime
