#include "source_lines.hpp"

#include <cstdlib>

namespace warpforge::sim {
namespace {

// An integer argument of a directive, or -1.
long long integer(const ptx::Directive& d, std::size_t i) {
  if (i >= d.args.size() || d.args[i].kind != ptx::Operand::Kind::imm_int) return -1;
  return std::strtoll(d.args[i].text.c_str(), nullptr, 0);
}

}  // namespace

SourceLines::SourceLines(const ptx::Module& module) {
  // `.file 1 "/dir/name.py"`, or with the directory apart (DWARF 5 style):
  // `.file 1 "/dir" "name.py"`; optional timestamp and size after a comma.
  for (const auto& item : module.items) {
    const auto* d = std::get_if<ptx::Directive>(&item);
    if (!d || d->name != "file") continue;
    std::vector<std::string> names;
    for (std::size_t i = 1; i < d->args.size(); ++i) {
      if (d->args[i].kind != ptx::Operand::Kind::string) break;
      names.push_back(d->args[i].text);
    }
    if (names.empty()) continue;
    std::string path = names.back();
    if (names.size() == 2 && !path.empty() && path.front() != '/') path = names[0] + "/" + path;
    files_[integer(*d, 0)] = path;
  }
}

void SourceLines::see(const ptx::Directive& d) {
  if (d.name != "loc") return;
  const long long file = integer(d, 0), line = integer(d, 1), column = integer(d, 2);
  if (line <= 0) {
    current_ = 0;
    return;
  }
  const auto f = files_.find(file);
  std::string where = (f == files_.end() ? "file " + std::to_string(file) : f->second) + ":" +
                      std::to_string(line);
  if (column > 0) where += ":" + std::to_string(column);
  const auto [it, added] = interned_.emplace(where, static_cast<std::uint32_t>(positions_.size()));
  if (added) positions_.push_back(where);
  current_ = it->second;
}

}  // namespace warpforge::sim
