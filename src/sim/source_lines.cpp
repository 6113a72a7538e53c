#include "source_lines.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace warpforge::sim {
namespace {

// An integer argument of a directive, or -1.
long long integer(const ptx::Directive& d, std::size_t i) {
  if (i >= d.args.size() || d.args[i].kind != ptx::Operand::Kind::imm_int) return -1;
  return std::strtoll(d.args[i].text.c_str(), nullptr, 0);
}

}  // namespace

SourceLines::SourceLines(const ptx::Module& module) : calls_(inlined_calls(module)) {
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
  loc_ = Position{integer(d, 0), integer(d, 1), integer(d, 2)};
  for (std::size_t i = 3; i + 3 < d.args.size(); ++i)
    if (d.args[i].text == "inlined_at")
      callers_[loc_] = Position{integer(d, i + 1), integer(d, i + 2), integer(d, i + 3)};
  update();
}

void SourceLines::see_label(const std::string& label) {
  if (calls_.empty()) return;
  std::erase_if(open_, [&](int c) { return calls_[static_cast<std::size_t>(c)].high_label == label; });
  for (std::size_t c = 0; c < calls_.size(); ++c)
    if (calls_[c].low_label == label) open_.push_back(static_cast<int>(c));
  update();
}

void SourceLines::update() {
  if (std::get<1>(loc_) <= 0) {
    current_ = 0;
    return;
  }
  int innermost = -1;  // the open call of the greatest depth
  for (int c : open_)
    if (innermost < 0 || calls_[static_cast<std::size_t>(c)].depth > calls_[static_cast<std::size_t>(innermost)].depth)
      innermost = c;
  const Located here{loc_, innermost};
  const auto [it, added] = interned_.emplace(here, static_cast<std::uint32_t>(positions_.size()));
  if (added) positions_.push_back(here);
  current_ = it->second;
}

std::string SourceLines::describe(const Position& p) const {
  const auto f = files_.find(std::get<0>(p));
  std::string out = (f == files_.end() ? "file " + std::to_string(std::get<0>(p)) : f->second) + ":" +
                    std::to_string(std::get<1>(p));
  if (std::get<2>(p) > 0) out += ":" + std::to_string(std::get<2>(p));
  return out;
}

// The call's position the .loc names (inlined_at), followed outward; else
// that of the outermost inlined call of the debug information around it;
// else the .loc's own.
SourceLines::Position SourceLines::outermost(const Located& at) const {
  Position outer = at.first;
  std::set<Position> seen{outer};  // a malformed chain that loops stops where it repeats
  for (auto c = callers_.find(outer); c != callers_.end() && seen.insert(c->second).second;
       c = callers_.find(outer))
    outer = c->second;
  if (outer != at.first || at.second < 0) return outer;
  std::size_t call = static_cast<std::size_t>(at.second);
  while (calls_[call].parent >= 0) call = static_cast<std::size_t>(calls_[call].parent);
  return calls_[call].call;
}

std::vector<std::string> SourceLines::take_positions() const {
  std::vector<std::string> out{std::string()};
  for (std::size_t i = 1; i < positions_.size(); ++i) {
    const Position& loc = positions_[i].first;
    const Position outer = outermost(positions_[i]);
    out.push_back(outer == loc ? describe(loc) : describe(outer) + " (inlined: " + describe(loc) + ")");
  }
  return out;
}

}  // namespace warpforge::sim
