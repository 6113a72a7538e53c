#include "warpforge/ptx/scopes.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace warpforge::ptx {
namespace {

// `.reg .T prefix<count>` declares prefix0 .. prefix(count-1), PTX ISA 5.4.1.
struct Range {
  std::string prefix;
  int count = 0;
  std::string renamed;  // the prefix its elements get in the result
};

// The digits after the range's prefix in `name` when it is an element.
std::optional<std::string> element_digits(const std::string& name, const Range& r) {
  auto index = range_index(name, r.prefix, r.count);
  if (!index) return std::nullopt;
  return std::to_string(*index);
}

struct Frame {
  std::map<std::string, std::string> scalars;  // declared name -> name in the result
  std::vector<Range> ranges;
  std::map<std::string, std::string> labels;

  bool declares_register(const std::string& name) const {
    return scalars.count(name) || std::any_of(ranges.begin(), ranges.end(), [&](const Range& r) {
             return element_digits(name, r);
           });
  }
};

class Resolver {
 public:
  Resolver(const Function& f, std::vector<std::string>& problems)
      : function_(f), problems_(problems) {
    collect_labels(*f.body);
  }

  Block run() {
    frames_.emplace_back();
    for (const auto* list : {&function_.params, &function_.returns})
      for (const auto& v : *list)
        if (v.space == Space::reg) declare_register(v);
    Block out = block(*function_.body, false);
    frames_.pop_back();
    return out;
  }

 private:
  void problem(const std::string& what) {
    problems_.push_back("function " + function_.name + ": " + what);
  }

  void collect_labels(const Block& b) {
    for (const auto& s : b.body) {
      if (const auto* l = std::get_if<Label>(&s)) all_labels_.insert(l->name);
      if (const auto* nested = std::get_if<Block>(&s)) collect_labels(*nested);
    }
  }

  // Whether a name is given to a register (or register range) already.
  bool register_taken(const std::string& name) const {
    return given_scalars_.count(name) ||
           std::any_of(given_ranges_.begin(), given_ranges_.end(), [&](const Range& r) {
             return element_digits(name, Range{r.renamed, r.count, {}}).has_value();
           });
  }
  bool range_taken(const Range& r) const {
    return std::any_of(given_ranges_.begin(), given_ranges_.end(),
                       [&](const Range& g) { return g.renamed == r.prefix; }) ||
           std::any_of(given_scalars_.begin(), given_scalars_.end(),
                       [&](const std::string& s) { return element_digits(s, r); });
  }

  void declare_register(const Variable& v) {
    Frame& frame = frames_.back();
    if (!v.range) {
      if (frame.declares_register(v.name))
        return problem("declares register " + v.name + " twice in one block");
      std::string name = v.name;
      for (int n = 1; register_taken(name); ++n) name = v.name + "$" + std::to_string(n);
      given_scalars_.insert(name);
      frame.scalars[v.name] = name;
      return;
    }
    Range r{v.name, *v.range, v.name};
    const bool twice = std::any_of(frame.ranges.begin(), frame.ranges.end(),
                                   [&](const Range& o) { return o.prefix == r.prefix; }) ||
                       std::any_of(frame.scalars.begin(), frame.scalars.end(),
                                   [&](const auto& s) { return element_digits(s.first, r); });
    if (twice)
      return problem("declares registers " + v.name + "<" + std::to_string(r.count) +
                     "> twice in one block");
    for (int n = 1; range_taken(Range{r.renamed, r.count, {}}); ++n)
      r.renamed = v.name + "$" + std::to_string(n) + "_";
    given_ranges_.push_back(r);
    frame.ranges.push_back(r);
  }

  void declare_label(const std::string& label) {
    Frame& frame = frames_.back();
    if (frame.labels.count(label)) return problem("defines label " + label + " twice");
    std::string name = label;
    for (int n = 1; given_labels_.count(name); ++n) name = label + "$" + std::to_string(n);
    given_labels_.insert(name);
    frame.labels[label] = name;
  }

  // The name in the result of the register `name` used here; `%v.x` selects
  // an element of a vector register.
  std::optional<std::string> find_register(const std::string& name) const {
    const std::size_t dot = name.find('.');
    const std::string base = name.substr(0, dot),
                      suffix = dot == std::string::npos ? "" : name.substr(dot);
    for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
      if (auto it = frame->scalars.find(base); it != frame->scalars.end())
        return it->second + suffix;
      for (const auto& r : frame->ranges)
        if (auto digits = element_digits(base, r)) return r.renamed + *digits + suffix;
    }
    return std::nullopt;
  }

  std::optional<std::string> find_label(const std::string& name) const {
    for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame)
      if (auto it = frame->labels.find(name); it != frame->labels.end()) return it->second;
    return std::nullopt;
  }

  void rename(Operand& op) {
    if (op.kind == Operand::Kind::reg) {
      if (auto name = find_register(op.text))
        op.text = *name;
      else
        problem("uses register " + op.text + " that is not declared");
    } else if (op.kind == Operand::Kind::label && all_labels_.count(op.text)) {
      if (auto name = find_label(op.text))
        op.text = *name;
      else
        problem("uses label " + op.text +
                ", which is defined only in a block that does not enclose the use");
    }
    for (auto& e : op.elems) rename(e);
  }

  Block block(const Block& b, bool opens_scope) {
    if (opens_scope) frames_.emplace_back();
    // A block's declarations hold in all of it: a branch may name a label
    // placed further down.
    for (const auto& s : b.body) {
      if (const auto* v = std::get_if<Variable>(&s); v && v->space == Space::reg)
        declare_register(*v);
      if (const auto* l = std::get_if<Label>(&s)) declare_label(l->name);
    }
    Block out;
    for (const auto& s : b.body) {
      if (const auto* inst = std::get_if<Instruction>(&s)) {
        Instruction renamed = *inst;
        if (renamed.guard) {
          if (auto name = find_register(renamed.guard->pred))
            renamed.guard->pred = *name;
          else
            problem("guards with predicate " + renamed.guard->pred + " that is not declared");
        }
        for (auto& op : renamed.operands) rename(op);
        out.body.push_back(std::move(renamed));
      } else if (const auto* l = std::get_if<Label>(&s)) {
        out.body.push_back(Label{frames_.back().labels.at(l->name)});
      } else if (const auto* v = std::get_if<Variable>(&s); v && v->space == Space::reg) {
        Variable renamed = *v;
        const Frame& frame = frames_.back();
        if (!v->range && frame.scalars.count(v->name)) renamed.name = frame.scalars.at(v->name);
        for (const auto& r : frame.ranges)
          if (v->range && r.prefix == v->name) renamed.name = r.renamed;
        out.body.push_back(std::move(renamed));
      } else if (const auto* nested = std::get_if<Block>(&s)) {
        out.body.push_back(block(*nested, true));
      } else {
        out.body.push_back(s);
      }
    }
    if (opens_scope) frames_.pop_back();
    return out;
  }

  const Function& function_;
  std::vector<std::string>& problems_;
  std::vector<Frame> frames_;
  std::set<std::string> all_labels_;
  std::set<std::string> given_scalars_;
  std::vector<Range> given_ranges_;
  std::set<std::string> given_labels_;
};

}  // namespace

std::optional<int> range_index(std::string_view name, std::string_view prefix, int count) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  int index = 0;
  for (char c : digits) index = index * 10 + (c - '0');
  if (index >= count) return std::nullopt;
  return index;
}

Block with_unique_names(const Function& f, std::vector<std::string>& problems) {
  return Resolver(f, problems).run();
}

}  // namespace warpforge::ptx
