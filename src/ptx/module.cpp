#include "warpforge/ptx/module.hpp"

#include <utility>

#include "warpforge/ptx/emitter.hpp"

namespace warpforge::ptx {

const Variable* Function::find_param(const std::string& param_name) const {
  for (const auto& p : params)
    if (p.name == param_name) return &p;
  return nullptr;
}

const Function* Module::find_function(const std::string& name) const {
  for (const auto& item : items)
    if (const auto* f = std::get_if<Function>(&item); f && f->name == name) return f;
  return nullptr;
}

Function* Module::find_function(const std::string& name) {
  return const_cast<Function*>(std::as_const(*this).find_function(name));
}

std::vector<const Function*> Module::entries() const {
  std::vector<const Function*> out;
  for (const auto& item : items)
    if (const auto* f = std::get_if<Function>(&item); f && f->is_entry && f->body) out.push_back(f);
  return out;
}

std::string Module::to_ptx() const { return emit(*this); }

}  // namespace warpforge::ptx
