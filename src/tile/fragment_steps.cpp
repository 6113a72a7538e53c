#include "warpforge/tile/fragment_steps.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "warpforge/dsl/operators.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/int_tuple.hpp"

namespace warpforge::tile {
namespace {

using layout::Axis;

std::pair<std::int64_t, std::int64_t> walk(const std::vector<Step>& steps, std::int64_t index) {
  std::int64_t row = 0, col = 0;
  for (const Step& s : steps) {
    std::int64_t c = index % s.extent;
    index /= s.extent;
    row += c * s.row;
    col += c * s.col;
  }
  return {row, col};
}

std::int64_t count(const std::vector<Step>& steps) {
  std::int64_t n = 1;
  for (const Step& s : steps) n *= s.extent;
  return n;
}

std::vector<Step> leaves(const layout::Layout& mode, std::int64_t rows) {
  std::vector<Step> out;
  const auto& shape = mode.flat_shape();
  const auto& stride = mode.flat_stride();
  for (std::size_t i = 0; i < shape.size(); ++i) out.push_back({shape[i], stride[i] % rows, stride[i] / rows});
  return out;
}

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
int log2_exact(std::int64_t x) {
  int n = 0;
  while ((std::int64_t{1} << n) < x) ++n;
  return n;
}

FragmentSteps prove_steps(const layout::NamedLayout& fragment) {
  const auto& domain = fragment.domain();
  if (domain.size() != 2 || domain[0] != Axis::lane || domain[1] != Axis::value)
    throw TileError("fragment '" + fragment.name() + "': expected the domain (lane, value)");
  const auto& codomain = fragment.codomain();
  if (codomain.size() != 2 || codomain[0].axis != Axis::row || codomain[1].axis != Axis::col)
    throw TileError("fragment '" + fragment.name() + "': expected the codomain (row, col)");
  FragmentSteps s;
  s.rows = codomain[0].extent;
  s.cols = codomain[1].extent;
  s.lane = leaves(fragment.mode(Axis::lane), s.rows);
  s.value = leaves(fragment.mode(Axis::value), s.rows);
  for (std::int64_t l = 0; l < s.lanes(); ++l)
    for (std::int64_t v = 0; v < s.values(); ++v) {
      auto point = fragment({{Axis::lane, l}, {Axis::value, v}});
      auto [lr, lc] = s.lane_offset(l);
      auto [vr, vc] = s.value_offset(v);
      if (point.at(Axis::row) != lr + vr || point.at(Axis::col) != lc + vc)
        throw TileError("fragment '" + fragment.name() + "': lane " + std::to_string(l) + ", value " +
                        std::to_string(v) + " does not split into separate row and column steps");
    }
  return s;
}

}  // namespace

std::int64_t FragmentSteps::lanes() const { return count(lane); }
std::int64_t FragmentSteps::values() const { return count(value); }
std::pair<std::int64_t, std::int64_t> FragmentSteps::value_offset(std::int64_t v) const { return walk(value, v); }
std::pair<std::int64_t, std::int64_t> FragmentSteps::lane_offset(std::int64_t l) const { return walk(lane, l); }

// The proof visits every (lane, value) point (256 for an mma operand), and
// each tile allocation and warp::gemm call asks it again of the same few
// atoms' fragments (a third of an sm80 attention backward's simulated test
// was kernel building spent here): the steps of each mapping are proved once
// a process, keyed by what they depend on (the layout and the codomain; the
// name only words a refusal, which is not kept). Kernels may be built on
// several threads at once.
FragmentSteps separate(const layout::NamedLayout& fragment) {
  std::string key = layout::to_string(fragment.layout());
  for (Axis axis : fragment.domain()) key += " " + layout::to_string(axis);
  for (const auto& c : fragment.codomain()) key += " " + layout::to_string(c.axis) + "=" + std::to_string(c.extent);
  static std::mutex mutex;
  static std::map<std::string, FragmentSteps> proved;
  {
    std::lock_guard lock(mutex);
    if (auto it = proved.find(key); it != proved.end()) return it->second;
  }
  FragmentSteps steps = prove_steps(fragment);
  std::lock_guard lock(mutex);
  return proved.emplace(std::move(key), std::move(steps)).first->second;
}

layout::NamedLayout assemble(const std::string& name, const FragmentSteps& steps) {
  auto mode = [&](const std::vector<Step>& list) {
    std::vector<layout::IntTuple> shape, stride;
    for (const Step& st : list) {
      shape.emplace_back(st.extent);
      stride.emplace_back(st.row + steps.rows * st.col);
    }
    return layout::Layout(layout::IntTuple(shape), layout::IntTuple(stride));
  };
  return layout::NamedLayout(name, {Axis::lane, Axis::value},
                             layout::make_layout({mode(steps.lane), mode(steps.value)}),
                             {{Axis::row, steps.rows}, {Axis::col, steps.cols}});
}

bool same_mapping(const layout::NamedLayout& a, const layout::NamedLayout& b) {
  if (a.domain() != b.domain() || a.layout().size() != b.layout().size()) return false;
  if (a.codomain().size() != b.codomain().size()) return false;
  for (std::size_t i = 0; i < a.codomain().size(); ++i)
    if (a.codomain()[i].axis != b.codomain()[i].axis || a.codomain()[i].extent != b.codomain()[i].extent)
      return false;
  // The same shape and strides map alike: no need to visit each point (a
  // tile's layout and the one warp::gemm expects are built alike).
  if (a.layout() == b.layout()) return true;
  for (auto axis : a.domain())
    if (a.extent(axis) != b.extent(axis)) return false;
  for (std::int64_t i = 0; i < a.layout().size(); ++i)
    if (a.layout()(i) != b.layout()(i)) return false;
  return true;
}

LaneCoords emit_lane_coords(dsl::KernelCore& k, const FragmentSteps& steps, const dsl::Reg& lane) {
  using namespace dsl;
  std::optional<Reg> row, col;
  auto accumulate = [&](std::optional<Reg>& acc, const Reg& coord, std::int64_t step) {
    if (step == 0) return;
    Reg scaled = step == 1 ? coord : is_power_of_two(step) ? (coord << log2_exact(step)) : (coord * step);
    if (acc) *acc += scaled;
    else acc = scaled;
  };
  const std::int64_t lanes = steps.lanes();
  std::int64_t prefix = 1;
  for (const Step& s : steps.lane) {
    if (!is_power_of_two(s.extent))
      throw TileError("lane mode extent " + std::to_string(s.extent) + " is not a power of two");
    if (s.extent > 1 && (s.row != 0 || s.col != 0)) {
      // The coordinate is (lane / prefix) % extent; the mask is needless for the last leaf.
      Reg c = prefix == 1 ? lane : (lane >> log2_exact(prefix));
      if (prefix * s.extent < lanes) c = c & (s.extent - 1);
      accumulate(row, c, s.row);
      accumulate(col, c, s.col);
    }
    prefix *= s.extent;
  }
  auto zero_if_unset = [&](std::optional<Reg>& r) {
    if (!r) {
      r = k.reg(u32);
      k.emit({ptx::Opcode::mov, {ptx::mod(u32)}}, {k.operand_of(*r), ptx::Operand::imm(0)});
    }
  };
  zero_if_unset(row);
  zero_if_unset(col);
  return {*row, *col};
}

}  // namespace warpforge::tile
