// warpforge::Error and its subclasses as a Python exception hierarchy of the
// same names and shape, rooted in warpforge.Error (itself a RuntimeError),
// each carrying the C++ message unchanged; ParseError and CudaError also carry
// their fields as attributes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "warpforge/error.hpp"

namespace nb = nanobind;

namespace warpforge::python {
namespace {

// The Python classes, by C++ type; kept for the translator below.
// (Handles: the module's attributes own them; a static nb::object would
// outlive the interpreter.)
struct Classes {
  nb::handle error, dsl, target, ptx, parse, layout, runtime, tile, cuda, ops, sim, toolchain;
};
Classes classes;

nb::handle define(nb::module_& m, const char* name, nb::handle base, const char* doc) {
  nb::object type = nb::steal(PyErr_NewExceptionWithDoc((std::string("warpforge.") + name).c_str(),
                                                        doc, base.ptr(), nullptr));
  if (!type.is_valid()) throw nb::python_error();
  m.attr(name) = type;
  return type;  // the module's attribute keeps it alive
}

void raise(nb::handle type, const Error& e) {
  PyErr_SetString(type.ptr(), e.what());
}

void raise_with(nb::handle type, const Error& e, const nb::dict& fields) {
  nb::object instance = type(nb::str(e.what()));
  for (auto [key, value] : fields) nb::setattr(instance, key, value);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

// Most derived first: the first matching handler wins.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const ParseError& e) {
    nb::dict fields;
    fields["line"] = e.line();
    fields["column"] = e.column();
    fields["token"] = e.token();
    fields["expected"] = e.expected();
    raise_with(classes.parse, e, fields);
  } catch (const CudaError& e) {
    nb::dict fields;
    fields["call"] = e.call();
    fields["code"] = e.code();
    fields["error_name"] = e.error_name();
    fields["description"] = e.description();
    raise_with(classes.cuda, e, fields);
  } catch (const TargetError& e) {
    raise(classes.target, e);
  } catch (const DslError& e) {
    raise(classes.dsl, e);
  } catch (const PtxError& e) {
    raise(classes.ptx, e);
  } catch (const LayoutError& e) {
    raise(classes.layout, e);
  } catch (const RuntimeError& e) {
    raise(classes.runtime, e);
  } catch (const TileError& e) {
    raise(classes.tile, e);
  } catch (const OpsError& e) {
    raise(classes.ops, e);
  } catch (const SimError& e) {
    raise(classes.sim, e);
  } catch (const ToolchainError& e) {
    raise(classes.toolchain, e);
  } catch (const Error& e) {
    raise(classes.error, e);
  }
}

}  // namespace

void set_python_error(const std::exception_ptr& p) {
  try {
    translate(p, nullptr);
  } catch (const std::exception& e) {  // not a warpforge::Error
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "warpforge: an unknown C++ exception");
  }
}

void bind_errors(nb::module_& m) {
  nb::handle builtin_runtime_error(PyExc_RuntimeError);
  Classes& c = classes;
  c.error = define(m, "Error", builtin_runtime_error,
                   "Every refusal of warpforge: what was wrong, with which values, "
                   "and what would have been accepted.");
  c.dsl = define(m, "DslError", c.error,
                 "Misuse of the DSL: wrong operand count or type, foreign register.");
  c.target =
      define(m, "TargetError", c.dsl, "An instruction used on a target that does not have it.");
  c.ptx = define(m, "PtxError", c.error, "A structurally invalid PTX module.");
  c.parse = define(m, "ParseError", c.ptx,
                   "PTX text the parser cannot read (line, column, token, expected).");
  c.layout = define(m, "LayoutError", c.error, "A layout-algebra refusal.");
  c.runtime = define(
      m, "RuntimeError", c.error,
      "A refusal of the runtime: a tensor or launch that does not fit the kernel or the device.");
  c.tile = define(m, "TileError", c.error,
                  "A tile primitive no candidate instruction sequence implements.");
  c.cuda = define(m, "CudaError", c.error,
                  "A CUDA driver call that failed (call, code, error_name, description).");
  c.ops = define(m, "OpsError", c.error,
                 "An operation asked for something it does not support; every reason.");
  c.sim = define(m, "SimError", c.error,
                 "A kernel the simulator refused or stopped (a bad access, a deadlock).");
  c.toolchain =
      define(m, "ToolchainError", c.error, "An external compiler that is missing or failed.");
  nb::register_exception_translator(translate);
}

}  // namespace warpforge::python
