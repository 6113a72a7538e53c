#include "warpforge/layout/int_tuple.hpp"

#include <algorithm>

#include "warpforge/error.hpp"

namespace warpforge::layout {

int64_t IntTuple::value() const {
  if (!leaf_)
    throw LayoutError("IntTuple::value: " + to_string(*this) + " is a tuple, not an integer");
  return value_;
}

int IntTuple::depth() const {
  if (leaf_) return 0;
  int deepest = 0;
  for (const IntTuple& m : modes_) deepest = std::max(deepest, m.depth());
  return deepest + 1;
}

const IntTuple& IntTuple::operator[](int i) const {
  if (i < 0 || i >= rank()) {
    throw LayoutError("IntTuple: mode " + std::to_string(i) + " of " + to_string(*this) +
                      " does not exist; modes 0.." + std::to_string(rank() - 1) + " do");
  }
  return leaf_ ? *this : modes_[i];
}

int64_t product(const IntTuple& t) {
  if (t.is_leaf()) return t.value();
  int64_t p = 1;
  for (const IntTuple& m : t.modes()) p *= product(m);
  return p;
}

namespace {
void append_leaves(const IntTuple& t, std::vector<int64_t>& out) {
  if (t.is_leaf()) {
    out.push_back(t.value());
    return;
  }
  for (const IntTuple& m : t.modes()) append_leaves(m, out);
}
}  // namespace

std::vector<int64_t> flatten(const IntTuple& t) {
  std::vector<int64_t> out;
  append_leaves(t, out);
  return out;
}

bool congruent(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf() || b.is_leaf()) return a.is_leaf() && b.is_leaf();
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!congruent(a[i], b[i])) return false;
  }
  return true;
}

std::string to_string(const IntTuple& t) {
  if (t.is_leaf()) return std::to_string(t.value());
  std::string s = "(";
  for (size_t i = 0; i < t.modes().size(); ++i) {
    if (i) s += ",";
    s += to_string(t.modes()[i]);
  }
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const IntTuple& t) {
  return os << to_string(t);
}

}  // namespace warpforge::layout
