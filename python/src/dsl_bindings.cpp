// The DSL from Python: warpforge.Kernel with its instruction wrappers, one
// Python call per PTX instruction as in C++ (dsl/kernel.hpp and isa/*.hpp),
// the handles (Reg, Pred, Label, Shared, ParamRef, Addr), and
// warpforge.Module, which compiles a kernel for a device and launches it with
// tensors and scalars checked against the kernel's parameters.
//
// Sources are Regs, Python ints, or float immediates made with f32(x) / f64(x)
// (a bare Python float is refused: the immediate's width would be a guess).
// Types, spaces and targets are their PTX names ("u32", "global", "sm_80");
// the modifiers are enums (Round, Cmp, ...). Python's `~p` is C++'s `!p`.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <limits>

#include "bindings.hpp"
#include "launch_config.hpp"
#include "tensors.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/module.hpp"

namespace nb = nanobind;
using namespace warpforge::dsl;

namespace warpforge::python {
namespace {

Type type_named(const std::string& text) {
  if (auto t = ptx::parse_type(text)) return *t;
  throw DslError("'" + text +
                 "' is not a PTX type (u32, s32, b64, f32, bf16, f16x2, e4m3, pred, ...)");
}

// "generic" is ld/st with no state-space word (the address is a generic one);
// cvta refuses it itself, naming the windows it takes.
Space space_named(const std::string& text) {
  for (Space s :
       {Space::global, Space::shared, Space::local, Space::param, Space::const_, Space::generic})
    if (ptx::name(s) == text) return s;
  throw DslError("'" + text +
                 "' is not a state space the DSL loads from or stores to: global, shared, local, "
                 "param, const, generic");
}

Src src(nb::handle h) {
  if (nb::isinstance<Reg>(h)) return Src(nb::cast<Reg>(h));
  if (nb::isinstance<Src>(h)) return nb::cast<Src>(h);
  if (PyBool_Check(h.ptr()))
    throw DslError("a bool is not a PTX source: use 0 or 1, or a predicate");
  if (PyLong_Check(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (!overflow) return Src(static_cast<std::int64_t>(v));
    const unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw DslError("integer " + nb::cast<std::string>(nb::str(h)) + " does not fit 64 bits");
    }
    return Src(static_cast<std::uint64_t>(u));
  }
  if (PyFloat_Check(h.ptr()))
    throw DslError(
        "float " + nb::cast<std::string>(nb::str(h)) +
        " as a source: write the immediate's width, warpforge.f32(x) or warpforge.f64(x)");
  throw DslError("a " + nb::cast<std::string>(nb::str(h.type())) +
                 " is not a source: pass a Reg, an int, or warpforge.f32(x) / f64(x)");
}

std::optional<Src> optional_src(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return src(h);
}

Addr addr(nb::handle h) {
  if (nb::isinstance<Addr>(h)) return nb::cast<Addr>(h);
  if (nb::isinstance<Reg>(h)) return Addr(nb::cast<Reg>(h));
  if (nb::isinstance<Shared>(h)) return Addr(nb::cast<Shared>(h));
  if (nb::isinstance<ParamRef>(h)) return Addr(nb::cast<ParamRef>(h));
  throw DslError("a " + nb::cast<std::string>(nb::str(h.type())) +
                 " is not an address: pass a Reg, a Shared, a ParamRef, or at(base, offset)");
}

PredUse pred_use(nb::handle h) {
  if (nb::isinstance<Pred>(h)) return PredUse(nb::cast<Pred>(h));
  if (nb::isinstance<PredUse>(h)) return nb::cast<PredUse>(h);
  throw DslError("a " + nb::cast<std::string>(nb::str(h.type())) +
                 " is not a predicate: pass a Pred or ~pred");
}

// Operands as inst() takes them: registers, predicates (or ~p), labels,
// addresses, a list of registers ({a, b}), ints and float immediates.
template <class Sequence>
std::vector<ptx::Operand> operands_of(const Kernel& k, const Sequence& items) {
  std::vector<ptx::Operand> ops;
  for (nb::handle h : items) {
    if (nb::isinstance<Pred>(h))
      ops.push_back(k.operand_of(nb::cast<Pred>(h)));
    else if (nb::isinstance<PredUse>(h))
      ops.push_back(k.operand_of(nb::cast<PredUse>(h)));
    else if (nb::isinstance<Label>(h))
      ops.push_back(k.operand_of(nb::cast<Label>(h)));
    else if (nb::isinstance<Addr>(h))
      ops.push_back(k.operand_of(nb::cast<Addr>(h)));
    else if (nb::isinstance<nb::list>(h))
      ops.push_back(k.operand_of(nb::cast<Regs>(h)));
    else
      ops.push_back(k.operand_of(src(h)));
  }
  return ops;
}

std::vector<Src> srcs(const nb::sequence& items) {
  std::vector<Src> out;
  for (nb::handle h : items) out.push_back(src(h));
  return out;
}

// A handle as a Python object that keeps its kernel alive (a handle points
// into its kernel, so the kernel must outlive it).
template <class T>
nb::object tied(const KernelCore* owner, T value) {
  nb::object o = nb::cast(std::move(value));
  if (owner) nb::keep_alive_obj(o, nb::find(dynamic_cast<const Kernel*>(owner)));
  return o;
}

nb::object tied(const KernelCore* owner, const Regs& regs) {
  nb::list out;
  for (const Reg& r : regs) out.append(tied(owner, r));
  return out;
}

FloatMode float_mode(std::optional<Round> round, bool ftz, bool sat) {
  return FloatMode{round.value_or(Round::none), ftz, sat};
}

// Python's operator forms: self ⊕ other, and for the commutative + and *
// also other ⊕ self (3 + r), as C++ has them.
template <class F>
void binary(nb::class_<Reg>& c, const char* name, const char* reflected, F f) {
  c.def(name, [f](const Reg& a, nb::handle b) { return tied(a.owner(), f(a, src(b))); });
  if (reflected)
    c.def(reflected, [f](const Reg& a, nb::handle b) { return tied(a.owner(), f(a, src(b))); });
}

// A launch argument for a parameter: a Tensor (its address, on the module's
// device), an int or float of the parameter's type, or bytes.
runtime::Arg launch_arg(nb::handle h, const ptx::Variable& p, const runtime::Device& device,
                        std::size_t index) {
  // Built only for a refusal: a launch builds no strings.
  const auto which = [&] { return "argument " + std::to_string(index) + " ('" + p.name + "')"; };
  if (nb::isinstance<runtime::Tensor>(h)) {
    const auto& t = nb::cast<const runtime::Tensor&>(h);
    if (!(t.device() == device))
      throw RuntimeError(which() + " is a tensor on " +
                         (t.device().is_simulator() ? std::string("the simulator")
                                                    : t.device().properties().name) +
                         "; the module runs on " +
                         (device.is_simulator() ? "the simulator" : device.properties().name));
    return runtime::Arg(static_cast<const runtime::TensorView&>(t));
  }
  if (nb::isinstance<TensorMapArg>(h)) {
    const auto& m = nb::cast<const TensorMapArg&>(h);
    if (!(m.tensor.device() == device))
      throw RuntimeError(which() +
                         " is a tensor map of a tensor on another device than the module's");
    return runtime::Arg::bytes_of(m.map);
  }
  if (nb::isinstance<nb::bytes>(h)) {
    auto b = nb::cast<nb::bytes>(h);
    return runtime::Arg::bytes(b.c_str(), b.size());
  }
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    switch (p.type) {
      case Type::u8:
      case Type::b8:
        return runtime::Arg(nb::cast<std::uint8_t>(h));
      case Type::s8:
        return runtime::Arg(nb::cast<std::int8_t>(h));
      case Type::u16:
      case Type::b16:
        return runtime::Arg(nb::cast<std::uint16_t>(h));
      case Type::s16:
        return runtime::Arg(nb::cast<std::int16_t>(h));
      case Type::u32:
      case Type::b32:
        return runtime::Arg(nb::cast<std::uint32_t>(h));
      case Type::s32:
        return runtime::Arg(nb::cast<std::int32_t>(h));
      case Type::s64:
        return runtime::Arg(nb::cast<std::int64_t>(h));
      default:
        return runtime::Arg(
            nb::cast<std::uint64_t>(h));  // u64/b64; a pointer param refuses it by kind
    }
  }
  if (PyFloat_Check(h.ptr())) {
    if (p.type == Type::f64) return runtime::Arg(nb::cast<double>(h));
    return runtime::Arg(nb::cast<float>(h));
  }
  throw RuntimeError(which() + ": a " + nb::cast<std::string>(nb::str(h.type())) +
                     " is not a launch argument; pass a tensor, an int, a float or bytes");
}

class PyModule {
 public:
  PyModule(const Kernel& kernel, const runtime::Device& device)
      : module_(device, kernel.module()),
        kernel_(module_.prepare(kernel.name())),
        params_(module_.ir().find_function(kernel.name())->params) {}

  void launch(std::tuple<std::uint32_t, std::uint32_t, std::uint32_t> grid,
              std::tuple<std::uint32_t, std::uint32_t, std::uint32_t> block,
              const nb::sequence& args, std::uint32_t shared_bytes,
              std::tuple<std::uint32_t, std::uint32_t, std::uint32_t> cluster,
              std::optional<std::uintptr_t> stream, bool overlap_previous) {
    std::vector<runtime::Arg> packed;
    const std::size_t given = nb::len(args);
    if (given != params_.size())
      throw RuntimeError("kernel '" + kernel_.kernel() + "' takes " + std::to_string(params_.size()) +
                         " arguments, got " + std::to_string(given));
    packed.reserve(given);
    std::size_t i = 0;
    for (nb::handle h : args) {
      packed.push_back(launch_arg(h, params_[i], module_.device(), i));
      ++i;
    }
    auto s = caller_stream(module_.device(), stream);
    const runtime::LaunchConfig config =
        launch_config(grid, block, cluster, shared_bytes, overlap_previous);
    nb::gil_scoped_release release;
    kernel_.launch(config, packed, pointer(s));
  }
  // Clusters of `cluster` CTAs of `block` threads and `shared_bytes` that
  // fit on the device at once: what a persistent kernel launches.
  int max_active_clusters(Dim3Tuple block, Dim3Tuple cluster, std::uint32_t shared_bytes) {
    return module_.max_active_clusters(kernel_.kernel(), launch_config(cluster, block, cluster, shared_bytes));
  }
  const runtime::Device& device() const { return module_.device(); }

 private:
  runtime::Module module_;
  runtime::PreparedLaunch kernel_;             // the kernel, found once
  const std::vector<ptx::Variable>& params_;  // its parameters, in module_'s IR
};

// A DSL enum whose values are modifier words of the vocabulary, first ..
// last, each named as name() spells its word (Round.rn for .rn).
template <class E>
void words_enum(nb::module_& m, const char* python_name, E first, E last) {
  nb::enum_<E> e(m, python_name);
  for (int i = static_cast<int>(first); i <= static_cast<int>(last); ++i)
    e.value(std::string(name(static_cast<E>(i))).c_str(), static_cast<E>(i));
}

// The register instructions `op d, a, b` and `op d, a` with nothing more to
// say than their operands: bound from these tables, each named as the
// vocabulary names its opcode (ptx::enumerator: and_ for and).
void bind_register_ops(nb::class_<Kernel>& k) {
  using Binary = void (*)(Kernel&, const Reg&, const Src&, const Src&);
  using Unary = void (*)(Kernel&, const Reg&, const Src&);
  const std::pair<ptx::Opcode, Binary> binary_ops[] = {
      {ptx::Opcode::rem,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.rem(d, a, b); }},
      {ptx::Opcode::and_,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.and_(d, a, b); }},
      {ptx::Opcode::or_,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.or_(d, a, b); }},
      {ptx::Opcode::xor_,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.xor_(d, a, b); }},
      {ptx::Opcode::shl,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.shl(d, a, b); }},
      {ptx::Opcode::shr,
       [](Kernel& k, const Reg& d, const Src& a, const Src& b) { k.shr(d, a, b); }}};
  const std::pair<ptx::Opcode, Unary> unary_ops[] = {
      {ptx::Opcode::popc, [](Kernel& k, const Reg& d, const Src& a) { k.popc(d, a); }},
      {ptx::Opcode::clz, [](Kernel& k, const Reg& d, const Src& a) { k.clz(d, a); }},
      {ptx::Opcode::brev, [](Kernel& k, const Reg& d, const Src& a) { k.brev(d, a); }},
      {ptx::Opcode::not_, [](Kernel& k, const Reg& d, const Src& a) { k.not_(d, a); }}};
  for (const auto& [opcode, f] : binary_ops)
    k.def(
        std::string(ptx::enumerator(opcode)).c_str(),
        [f](Kernel& k, const Reg& d, nb::handle a, nb::handle b) { f(k, d, src(a), src(b)); },
        nb::arg("d"), nb::arg("a"), nb::arg("b"));
  for (const auto& [opcode, f] : unary_ops)
    k.def(
        std::string(ptx::enumerator(opcode)).c_str(),
        [f](Kernel& k, const Reg& d, nb::handle a) { f(k, d, src(a)); }, nb::arg("d"),
        nb::arg("a"));
}

}  // namespace

void bind_dsl(nb::module_& m) {
  words_enum(m, "Round", Round::rn, Round::rpi);
  words_enum(m, "Cmp", Cmp::eq, Cmp::nan);
  words_enum(m, "MmaShape", MmaShape::m16n8k8, MmaShape::m16n8k32);
  nb::enum_<Cache>(m, "Cache")
      .value("none", Cache::none)
      .value("ca", Cache::ca)
      .value("cg", Cache::cg)
      .value("cs", Cache::cs)
      .value("lu", Cache::lu)
      .value("cv", Cache::cv)
      .value("wb", Cache::wb)
      .value("wt", Cache::wt);
  nb::enum_<CpAsyncCache>(m, "CpAsyncCache")
      .value("ca", CpAsyncCache::ca)
      .value("cg", CpAsyncCache::cg);
  nb::enum_<Shfl>(m, "Shfl")
      .value("up", Shfl::up)
      .value("down", Shfl::down)
      .value("bfly", Shfl::bfly)
      .value("idx", Shfl::idx);
  nb::enum_<Redux>(m, "Redux")
      .value("add", Redux::add)
      .value("min", Redux::min)
      .value("max", Redux::max)
      .value("and_", Redux::and_)
      .value("or_", Redux::or_)
      .value("xor_", Redux::xor_);
  nb::enum_<MembarLevel>(m, "MembarLevel")
      .value("cta", MembarLevel::cta)
      .value("gl", MembarLevel::gl)
      .value("sys", MembarLevel::sys);
  nb::enum_<FenceSem>(m, "FenceSem").value("sc", FenceSem::sc).value("acq_rel", FenceSem::acq_rel);
  nb::enum_<Scope>(m, "Scope")
      .value("cta", Scope::cta)
      .value("cluster", Scope::cluster)
      .value("gpu", Scope::gpu)
      .value("sys", Scope::sys);
  nb::enum_<WgmmaMajor>(m, "WgmmaMajor").value("k", WgmmaMajor::k).value("mn", WgmmaMajor::mn);

  nb::class_<Src>(m, "Imm",
                  "A float immediate of a stated width: warpforge.f32(x), warpforge.f64(x).");
  m.def(
      "f32", [](float v) { return imm_f32(v); }, "An f32 immediate (exact).");
  m.def(
      "f64", [](double v) { return imm_f64(v); }, "An f64 immediate (exact).");

  nb::class_<Pred>(m, "Pred", "A predicate register; ~p is its negation.")
      .def_prop_ro("name", &Pred::name)
      .def("__invert__", [](const Pred& p) { return !p; })
      .def("__and__",
           [](const Pred& a, nb::handle b) { return tied(a.owner(), PredUse(a) && pred_use(b)); })
      .def("__or__",
           [](const Pred& a, nb::handle b) { return tied(a.owner(), PredUse(a) || pred_use(b)); })
      .def("__repr__", [](const Pred& p) { return "Pred(" + p.name() + ")"; });
  nb::class_<PredUse>(m, "PredUse", "A predicate or its negation, as a guard or a source.")
      .def("__invert__", [](const PredUse& p) { return !p; })
      .def("__and__",
           [](const PredUse& a, nb::handle b) { return tied(a.pred.owner(), a && pred_use(b)); })
      .def("__or__",
           [](const PredUse& a, nb::handle b) { return tied(a.pred.owner(), a || pred_use(b)); });

  nb::class_<Reg> reg(
      m, "Reg",
      "A typed register. Integer operators emit one instruction each (+ - * & | ^ << >> ~, "
      "< <= > >= and eq()/ne() give predicates); float arithmetic is written with Kernel's "
      "wrappers, so rounding stays visible.");
  reg.def_prop_ro("type", [](const Reg& r) { return std::string(ptx::name(r.type())); })
      .def_prop_ro("name", &Reg::name)
      .def(
          "as_",
          [](const Reg& r, const std::string& t) { return tied(r.owner(), r.as(type_named(t))); },
          nb::arg("type"), "The same register read as another type of its width (emits nothing).")
      .def("eq", [](const Reg& a, nb::handle b) { return tied(a.owner(), a == src(b)); })
      .def("ne", [](const Reg& a, nb::handle b) { return tied(a.owner(), a != src(b)); })
      .def("__lt__", [](const Reg& a, nb::handle b) { return tied(a.owner(), a < src(b)); })
      .def("__le__", [](const Reg& a, nb::handle b) { return tied(a.owner(), a <= src(b)); })
      .def("__gt__", [](const Reg& a, nb::handle b) { return tied(a.owner(), a > src(b)); })
      .def("__ge__", [](const Reg& a, nb::handle b) { return tied(a.owner(), a >= src(b)); })
      .def("__invert__", [](const Reg& a) { return tied(a.owner(), ~a); })
      .def("__neg__", [](const Reg& a) { return tied(a.owner(), -a); })
      .def("__iadd__", [](Reg& a, nb::handle b) { return a += src(b); })
      .def("__isub__", [](Reg& a, nb::handle b) { return a -= src(b); })
      .def("__imul__", [](Reg& a, nb::handle b) { return a *= src(b); })
      .def("__iand__", [](Reg& a, nb::handle b) { return a &= src(b); })
      .def("__ior__", [](Reg& a, nb::handle b) { return a |= src(b); })
      .def("__ixor__", [](Reg& a, nb::handle b) { return a ^= src(b); })
      .def("__ilshift__", [](Reg& a, nb::handle b) { return a <<= src(b); })
      .def("__irshift__", [](Reg& a, nb::handle b) { return a >>= src(b); })
      .def("__repr__", [](const Reg& r) {
        return "Reg(" + r.name() + ": " + std::string(ptx::name(r.type())) + ")";
      });
  binary(reg, "__add__", "__radd__", [](const Reg& a, const Src& b) { return a + b; });
  binary(reg, "__sub__", nullptr, [](const Reg& a, const Src& b) { return a - b; });
  binary(reg, "__mul__", "__rmul__", [](const Reg& a, const Src& b) { return a * b; });
  binary(reg, "__and__", nullptr, [](const Reg& a, const Src& b) { return a & b; });
  binary(reg, "__or__", nullptr, [](const Reg& a, const Src& b) { return a | b; });
  binary(reg, "__xor__", nullptr, [](const Reg& a, const Src& b) { return a ^ b; });
  binary(reg, "__lshift__", nullptr, [](const Reg& a, const Src& b) { return a << b; });
  binary(reg, "__rshift__", nullptr, [](const Reg& a, const Src& b) { return a >> b; });

  nb::class_<Label>(m, "Label").def_prop_ro("name", &Label::name);
  nb::class_<Shared>(m, "Shared", "A shared-memory variable.")
      .def_ro("name", &Shared::name)
      .def_ro("bytes", &Shared::bytes);
  nb::class_<ParamRef>(m, "ParamRef", "A byte-array kernel parameter (a TMA descriptor), by name.")
      .def_ro("name", &ParamRef::name);
  nb::class_<Addr>(m, "Addr", "[base + offset]");
  m.def(
      "at",
      [](nb::handle base, std::int64_t offset) {
        Addr a = addr(base);
        a.offset += offset;
        return a;
      },
      nb::arg("base"), nb::arg("offset") = 0, "[base + offset]: base a Reg, Shared or ParamRef.");

  nb::class_<Kernel> k(m, "Kernel",
                       "A kernel written one PTX instruction per call (the C++ dsl::Kernel).");
  k.def(
       "__init__",
       [](Kernel* self, const std::string& name, const std::string& target) {
         auto t = ptx::parse_target(target);
         if (!t) throw DslError("target '" + target + "': accepted sm_80, sm_89, sm_90a, sm_100a");
         new (self) Kernel(name, *t);
       },
       nb::arg("name"), nb::arg("target") = "sm_80")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro(
          "param_count", [](const Kernel& k) { return k.function().params.size(); },
          "The number of the kernel's parameters.")
      .def("ptx", &Kernel::ptx, "The PTX text of the module holding this kernel.")
      // registers, labels, parameters, shared memory
      .def(
          "reg",
          [](Kernel& k, const std::string& t, std::string name) {
            return tied(&k, k.reg(type_named(t), name));
          },
          nb::arg("type"), nb::arg("name") = "")
      .def(
          "regs",
          [](Kernel& k, const std::string& t, int n, std::string name) {
            return tied(&k, k.regs(type_named(t), n, name));
          },
          nb::arg("type"), nb::arg("count"), nb::arg("name") = "")
      .def(
          "pred", [](Kernel& k, std::string name) { return tied(&k, k.pred(name)); },
          nb::arg("name") = "")
      .def(
          "label", [](Kernel& k, const std::string& hint) { return tied(&k, k.label(hint)); },
          nb::arg("hint") = "L")
      .def("place", &Kernel::place)
      .def("reqntid", &Kernel::reqntid, nb::arg("x"), nb::arg("y") = 1, nb::arg("z") = 1)
      .def("maxntid", &Kernel::maxntid, nb::arg("x"), nb::arg("y") = 1, nb::arg("z") = 1)
      .def(
          "param",
          [](Kernel& k, const std::string& t, std::string name) {
            return tied(&k, k.param(type_named(t), name));
          },
          nb::arg("type"), nb::arg("name"))
      .def(
          "param_ptr",
          [](Kernel& k, std::string name, int align) { return tied(&k, k.param_ptr(name, align)); },
          nb::arg("name"), nb::arg("align") = 0)
      .def("param_bytes", &Kernel::param_bytes, nb::arg("name"), nb::arg("bytes"), nb::arg("align"))
      .def("shared", &Kernel::shared, nb::arg("name"), nb::arg("bytes"), nb::arg("align") = 16)
      .def("dynamic_shared", &Kernel::dynamic_shared, nb::arg("name") = "dynamic_smem",
           nb::arg("align") = 16)
      .def("address_of", [](Kernel& k, const Shared& v) { return tied(&k, k.address_of(v)); })
      .def(
          "sreg",
          [](Kernel& k, const std::string& name) {
            return tied(&k, k.sreg(std::string_view(name)));
          },
          nb::arg("name"), "mov of a special register by its PTX name: 'tid.x', 'laneid', ...")
      .def(
          "inst",
          [](Kernel& k, const std::string& opcode, nb::args operands) {
            k.inst(opcode, operands_of(k, operands));
          },
          nb::arg("opcode"), nb::arg("operands"),
          "Any PTX instruction, unwrapped: inst('prmt.b32', d, a, b, sel); its words read "
          "through the PTX vocabulary, its operand count and target checked.")
      .def(
          "instruction",
          [](Kernel& k, ptx::Opcode op, const std::vector<ptx::Mod>& modifiers,
             const nb::sequence& operands) {
            k.inst(ptx::Instruction{
                .opcode = op, .modifiers = modifiers, .operands = operands_of(k, operands)});
          },
          nb::arg("opcode"), nb::arg("modifiers"), nb::arg("operands"),
          "The instruction opcode.modifiers (warpforge.Opcode, warpforge.Mod) with these operands, "
          "checked as inst() checks: what k.op.<opcode>.<modifier>...(operands) calls.")
      .def("guarded", [](Kernel& k, nb::handle p,
                         const std::function<void()>& body) { k.guarded(pred_use(p), body); })
      .def(
          "scope", [](Kernel& k, const std::function<void()>& body) { k.scope(body); },
          "Emits { ... }: named registers and labels made inside are local to it (PTX block "
          "scoping).")
      // moves and arithmetic
      .def(
          "mov",
          [](Kernel& k, nb::handle d, nb::handle s) -> nb::object {
            if (nb::isinstance<nb::str>(d)) {
              const Type t = type_named(nb::cast<std::string>(d));
              return tied(&k, k.mov(t, src(s)));
            }
            if (nb::isinstance<Pred>(d)) {
              k.mov(nb::cast<Pred>(d), pred_use(s));
              return nb::none();
            }
            k.mov(nb::cast<Reg>(d), src(s));
            return nb::none();
          },
          nb::arg("d"), nb::arg("s"), "mov(d, s), or mov(type, s) returning a new register")
      .def(
          "add",
          [](Kernel& k, const Reg& d, nb::handle a, nb::handle b, std::optional<Round> r, bool ftz,
             bool sat) { k.add(d, src(a), src(b), float_mode(r, ftz, sat)); },
          nb::arg("d"), nb::arg("a"), nb::arg("b"), nb::arg("round") = nb::none(),
          nb::arg("ftz") = false, nb::arg("sat") = false)
      .def(
          "sub",
          [](Kernel& k, const Reg& d, nb::handle a, nb::handle b, std::optional<Round> r, bool ftz,
             bool sat) { k.sub(d, src(a), src(b), float_mode(r, ftz, sat)); },
          nb::arg("d"), nb::arg("a"), nb::arg("b"), nb::arg("round") = nb::none(),
          nb::arg("ftz") = false, nb::arg("sat") = false)
      .def(
          "mul",
          [](Kernel& k, const Reg& d, nb::handle a, nb::handle b, std::optional<Round> r, bool ftz,
             bool sat) { k.mul(d, src(a), src(b), float_mode(r, ftz, sat)); },
          nb::arg("d"), nb::arg("a"), nb::arg("b"), nb::arg("round") = nb::none(),
          nb::arg("ftz") = false, nb::arg("sat") = false)
      .def("mul_hi",
           [](Kernel& k, const Reg& d, nb::handle a, nb::handle b) { k.mul_hi(d, src(a), src(b)); })
      .def("mul_wide",
           [](Kernel& k, const Reg& d, const Reg& a, nb::handle b) { k.mul_wide(d, a, src(b)); })
      .def("mad", [](Kernel& k, const Reg& d, nb::handle a, nb::handle b,
                     nb::handle c) { k.mad(d, src(a), src(b), src(c)); })
      .def(
          "fma",
          [](Kernel& k, const Reg& d, nb::handle a, nb::handle b, nb::handle c,
             std::optional<Round> r, bool ftz, bool sat) {
            k.fma(d, src(a), src(b), src(c), FloatMode{r.value_or(Round::rn), ftz, sat});
          },
          nb::arg("d"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("round") = nb::none(),
          nb::arg("ftz") = false, nb::arg("sat") = false)
      .def(
          "abs",
          [](Kernel& k, const Reg& d, nb::handle a, std::optional<Round> r, bool ftz) {
            k.abs(d, src(a), float_mode(r, ftz, false));
          },
          nb::arg("d"), nb::arg("a"), nb::arg("round") = nb::none(), nb::arg("ftz") = false)
      .def("neg", [](Kernel& k, const Reg& d, nb::handle a) { k.neg(d, src(a)); })
      .def(
          "rcp",
          [](Kernel& k, const Reg& d, nb::handle a, std::optional<Round> r, bool ftz) {
            k.rcp(d, src(a), float_mode(r, ftz, false));
          },
          nb::arg("d"), nb::arg("a"), nb::arg("round") = nb::none(), nb::arg("ftz") = false)
      .def(
          "sqrt",
          [](Kernel& k, const Reg& d, nb::handle a, std::optional<Round> r, bool ftz) {
            k.sqrt(d, src(a), float_mode(r, ftz, false));
          },
          nb::arg("d"), nb::arg("a"), nb::arg("round") = nb::none(), nb::arg("ftz") = false)
      .def(
          "ex2_approx",
          [](Kernel& k, const Reg& d, nb::handle a, bool ftz) { k.ex2_approx(d, src(a), ftz); },
          nb::arg("d"), nb::arg("a"), nb::arg("ftz") = false)
      // the value-returning forms and their destination-first twins
      .def(
          "div",
          [](Kernel& k, nb::args args, std::optional<Round> r, bool ftz) -> nb::object {
            const FloatMode mode = float_mode(r, ftz, false);
            if (args.size() == 2) return tied(&k, k.div(src(args[0]), src(args[1]), mode));
            if (args.size() != 3) throw DslError("div takes (a, b) or (d, a, b)");
            k.div(nb::cast<Reg>(args[0]), src(args[1]), src(args[2]), mode);
            return nb::none();
          },
          nb::arg("args"), nb::arg("round") = nb::none(), nb::arg("ftz") = false,
          "q = div(a, b), or div(d, a, b); floats round to nearest unless told.")
      .def(
          "min",
          [](Kernel& k, nb::args args, bool ftz) -> nb::object {
            if (args.size() == 2)
              return tied(&k, k.min(src(args[0]), src(args[1]), float_mode({}, ftz, false)));
            if (args.size() != 3) throw DslError("min takes (a, b) or (d, a, b)");
            k.min(nb::cast<Reg>(args[0]), src(args[1]), src(args[2]), float_mode({}, ftz, false));
            return nb::none();
          },
          nb::arg("args"), nb::arg("ftz") = false)
      .def(
          "max",
          [](Kernel& k, nb::args args, bool ftz) -> nb::object {
            if (args.size() == 2)
              return tied(&k, k.max(src(args[0]), src(args[1]), float_mode({}, ftz, false)));
            if (args.size() != 3) throw DslError("max takes (a, b) or (d, a, b)");
            k.max(nb::cast<Reg>(args[0]), src(args[1]), src(args[2]), float_mode({}, ftz, false));
            return nb::none();
          },
          nb::arg("args"), nb::arg("ftz") = false)
      .def(
          "selp",
          [](Kernel& k, nb::args args) -> nb::object {
            if (args.size() == 3)
              return tied(&k, k.selp(src(args[0]), src(args[1]), pred_use(args[2])));
            if (args.size() != 4) throw DslError("selp takes (a, b, p) or (d, a, b, p)");
            k.selp(nb::cast<Reg>(args[0]), src(args[1]), src(args[2]), pred_use(args[3]));
            return nb::none();
          },
          nb::arg("args"), "v = selp(a, b, p): a where p, else b; or selp(d, a, b, p).")
      .def("setp", [](Kernel& k, Cmp c, nb::handle a,
                      nb::handle b) { return tied(&k, k.setp(c, src(a), src(b))); })
      // conversions
      .def(
          "cvt",
          [](Kernel& k, const Reg& d, const Reg& a, std::optional<Round> r, bool ftz, bool sat,
             bool satfinite, bool relu) {
            k.cvt(d, a, CvtMode{r.value_or(Round::none), ftz, sat, satfinite, relu});
          },
          nb::arg("d"), nb::arg("a"), nb::arg("round") = nb::none(), nb::arg("ftz") = false,
          nb::arg("sat") = false, nb::arg("satfinite") = false, nb::arg("relu") = false)
      .def("cvt_pack", [](Kernel& k, const std::string& packed, const Reg& d, nb::handle hi,
                          nb::handle lo) { k.cvt_pack(type_named(packed), d, src(hi), src(lo)); })
      // control flow (bodies are Python callables)
      .def("bra", [](Kernel& k, const Label& l) { k.bra(l); })
      .def("bra_if", [](Kernel& k, nb::handle p, const Label& l) { k.bra_if(pred_use(p), l); })
      .def("ret", &Kernel::ret)
      .def("exit", &Kernel::exit)
      .def("if_then", [](Kernel& k, nb::handle p,
                         const std::function<void()>& then) { k.if_then(pred_use(p), then); })
      .def("if_else",
           [](Kernel& k, nb::handle p, const std::function<void()>& then,
              const std::function<void()>& otherwise) { k.if_else(pred_use(p), then, otherwise); })
      .def(
          "for_range",
          [](Kernel& k, nb::handle begin, nb::handle end, nb::handle step,
             const std::function<void(Reg)>& body) {
            k.for_range(src(begin), src(end), src(step), body);
          },
          nb::arg("begin"), nb::arg("end"), nb::arg("step"), nb::arg("body"),
          "A runtime loop over [begin, end) by step; body(i) receives the counter register.")
      .def("while_loop", [](Kernel& k, const std::function<Pred()>& condition,
                            const std::function<void()>& body) { k.while_loop(condition, body); })
      // memory
      .def(
          "ld",
          [](Kernel& k, const std::string& space, const std::string& t, nb::handle d, nb::handle a,
             Cache cache, bool nc) {
            const LdOpts o{.cache = cache, .nc = nc};
            if (nb::isinstance<Reg>(d))
              k.ld(space_named(space), type_named(t), nb::cast<Reg>(d), addr(a), o);
            else
              k.ld(space_named(space), type_named(t), nb::cast<Regs>(d), addr(a), o);
          },
          nb::arg("space"), nb::arg("type"), nb::arg("d"), nb::arg("a"),
          nb::arg("cache") = Cache::none, nb::arg("nc") = false,
          "ld.space.type d, [a]; d a Reg or a list of 2 or 4 (vector load)")
      .def(
          "st",
          [](Kernel& k, const std::string& space, const std::string& t, nb::handle a, nb::handle v,
             Cache cache) {
            const StOpts o{.cache = cache};
            if (nb::isinstance<nb::list>(v))
              k.st(space_named(space), type_named(t), addr(a), nb::cast<Regs>(v), o);
            else
              k.st(space_named(space), type_named(t), addr(a), src(v), o);
          },
          nb::arg("space"), nb::arg("type"), nb::arg("a"), nb::arg("v"),
          nb::arg("cache") = Cache::none)
      .def("cvta_to", [](Kernel& k, const std::string& space, const Reg& d,
                         const Reg& a) { k.cvta_to(space_named(space), d, a); })
      .def("cvta_from", [](Kernel& k, const std::string& space, const Reg& d,
                           const Reg& a) { k.cvta_from(space_named(space), d, a); })
      .def(
          "ldmatrix",
          [](Kernel& k, const Regs& d, nb::handle a, bool trans) { k.ldmatrix(d, addr(a), trans); },
          nb::arg("d"), nb::arg("a"), nb::arg("trans") = false)
      .def(
          "stmatrix",
          [](Kernel& k, nb::handle a, const Regs& s, bool trans) { k.stmatrix(addr(a), s, trans); },
          nb::arg("a"), nb::arg("s"), nb::arg("trans") = false)
      .def(
          "cp_async",
          [](Kernel& k, CpAsyncCache c, int bytes, nb::handle dst, nb::handle from,
             nb::handle src_bytes) {
            k.cp_async(c, bytes, addr(dst), addr(from), optional_src(src_bytes));
          },
          nb::arg("cache"), nb::arg("bytes"), nb::arg("shared_dst"), nb::arg("global_src"),
          nb::arg("src_bytes") = nb::none())
      .def("cp_async_commit", &Kernel::cp_async_commit)
      .def("cp_async_wait", &Kernel::cp_async_wait)
      .def("cp_async_wait_all", &Kernel::cp_async_wait_all)
      // synchronisation and warp collectives
      .def(
          "bar_sync",
          [](Kernel& k, nb::handle id, nb::handle count) {
            k.bar_sync(src(id), optional_src(count));
          },
          nb::arg("id") = 0, nb::arg("count") = nb::none())
      .def(
          "bar_warp_sync", [](Kernel& k, nb::handle mask) { k.bar_warp_sync(src(mask)); },
          nb::arg("member_mask") = 0xffffffffu)
      .def("membar", &Kernel::membar)
      .def("fence", &Kernel::fence)
      .def(
          "shfl_sync",
          [](Kernel& k, Shfl mode, const Reg& d, nb::handle a, nb::handle b, nb::handle c,
             nb::handle mask) { k.shfl_sync(mode, d, src(a), src(b), src(c), src(mask)); },
          nb::arg("mode"), nb::arg("d"), nb::arg("a"), nb::arg("b"), nb::arg("c"),
          nb::arg("member_mask") = 0xffffffffu)
      .def(
          "redux_sync",
          [](Kernel& k, Redux op, const Reg& d, nb::handle a, nb::handle mask) {
            k.redux_sync(op, d, src(a), src(mask));
          },
          nb::arg("op"), nb::arg("d"), nb::arg("a"), nb::arg("member_mask") = 0xffffffffu)
      .def(
          "elect_sync",
          [](Kernel& k, const Reg& d, const Pred& p, nb::handle mask) {
            k.elect_sync(d, p, src(mask));
          },
          nb::arg("d"), nb::arg("p"), nb::arg("member_mask") = 0xffffffffu)
      // matrix multiply-accumulate
      .def("mma_sync",
           [](Kernel& k, MmaShape shape, const std::string& a_type, const std::string& b_type,
              const std::string& acc_type, const Regs& d, const Regs& a, const Regs& b,
              const Regs& c) {
             k.mma_sync(shape, type_named(a_type), type_named(b_type), type_named(acc_type), d, a,
                        b, c);
           })
      .def("wgmma_fence", &Kernel::wgmma_fence)
      .def("wgmma_commit_group", &Kernel::wgmma_commit_group)
      .def("wgmma_wait_group", &Kernel::wgmma_wait_group)
      .def(
          "wgmma_mma_async",
          [](Kernel& k, const std::string& a_type, const std::string& b_type, const Regs& d,
             nb::handle a, const Reg& desc_b, nb::handle scale_d, WgmmaMajor a_major,
             WgmmaMajor b_major) {
            std::variant<bool, PredUse> scale;
            if (PyBool_Check(scale_d.ptr()))
              scale = nb::cast<bool>(scale_d);
            else
              scale = pred_use(scale_d);
            if (nb::isinstance<Reg>(a))
              k.wgmma_mma_async(type_named(a_type), type_named(b_type), d, nb::cast<Reg>(a), desc_b,
                                scale, a_major, b_major);
            else
              k.wgmma_mma_async(type_named(a_type), type_named(b_type), d, nb::cast<Regs>(a),
                                desc_b, scale, b_major);
          },
          nb::arg("a_type"), nb::arg("b_type"), nb::arg("d"), nb::arg("a"), nb::arg("desc_b"),
          nb::arg("scale_d"), nb::arg("a_major") = WgmmaMajor::k,
          nb::arg("b_major") = WgmmaMajor::k,
          "wgmma.mma_async: a is A's shared-memory descriptor (a Reg) or its registers (a list of "
          "4)")
      // mbarriers
      .def("mbarrier_init", [](Kernel& k, nb::handle bar,
                               nb::handle count) { k.mbarrier_init(addr(bar), src(count)); })
      .def("mbarrier_arrive", [](Kernel& k, nb::handle bar) { k.mbarrier_arrive(addr(bar)); })
      .def("mbarrier_arrive_expect_tx",
           [](Kernel& k, nb::handle bar, nb::handle bytes) {
             k.mbarrier_arrive_expect_tx(addr(bar), src(bytes));
           })
      .def("mbarrier_try_wait_parity",
           [](Kernel& k, const Pred& ready, nb::handle bar, nb::handle parity) {
             k.mbarrier_try_wait_parity(ready, addr(bar), src(parity));
           })
      .def("mbarrier_wait_parity",
           [](Kernel& k, nb::handle bar, nb::handle parity) {
             k.mbarrier_wait_parity(addr(bar), src(parity));
           })
      .def("fence_mbarrier_init", &Kernel::fence_mbarrier_init)
      // TMA
      .def("param_generic_address",
           [](Kernel& k, const ParamRef& p) { return tied(&k, k.param_generic_address(p)); })
      .def(
          "tma_load",
          [](Kernel& k, nb::handle dst, const Reg& map, const nb::sequence& coords, nb::handle bar,
             nb::handle multicast) {
            k.tma_load(addr(dst), map, srcs(coords), addr(bar), optional_src(multicast));
          },
          nb::arg("shared_dst"), nb::arg("tensor_map"), nb::arg("coords"), nb::arg("bar"),
          nb::arg("multicast_mask") = nb::none())
      .def("tma_store", [](Kernel& k, const Reg& map, const nb::sequence& coords,
                           nb::handle from) { k.tma_store(map, srcs(coords), addr(from)); })
      .def("bulk_commit_group", &Kernel::bulk_commit_group)
      .def("bulk_wait_group", &Kernel::bulk_wait_group)
      .def("bulk_wait_group_read", &Kernel::bulk_wait_group_read)
      .def("prefetch_tensormap", &Kernel::prefetch_tensormap)
      .def("fence_proxy_async_shared", &Kernel::fence_proxy_async_shared)
      // bits
      .def("prmt", [](Kernel& k, const Reg& d, nb::handle a, nb::handle b,
                      nb::handle sel) { k.prmt(d, src(a), src(b), src(sel)); })
      .def("lop3", [](Kernel& k, const Reg& d, nb::handle a, nb::handle b, nb::handle c,
                      std::uint8_t lut) { k.lop3(d, src(a), src(b), src(c), lut); });
  bind_register_ops(k);

  nb::class_<PyModule>(m, "Module",
                       "A kernel compiled for a device (the GPU's driver JIT, or the simulator).")
      .def(nb::init<const Kernel&, const runtime::Device&>(), nb::arg("kernel"), nb::arg("device"))
      .def_prop_ro("device", &PyModule::device)
      .def("launch", &PyModule::launch, nb::arg("grid"), nb::arg("block"), nb::arg("args"),
           nb::arg("shared_bytes") = 0, nb::arg("cluster") = std::make_tuple(1u, 1u, 1u),
           nb::arg("stream") = nb::none(), nb::arg("overlap_previous") = false)
      .def("max_active_clusters", &PyModule::max_active_clusters, nb::arg("block"),
           nb::arg("cluster"), nb::arg("shared_bytes"));
}

}  // namespace warpforge::python
