#include "wave_program.hpp"

namespace warpforge::sim::amdgpu {
namespace {

using warpforge::amdgpu::Block;
using warpforge::amdgpu::Stmt;

void append(const Block& block, std::vector<Step>& out) {
  for (const auto& s : block) {
    if (s.kind == Stmt::Kind::inst) {
      out.push_back({Step::Kind::inst, &s.inst, nullptr, -1});
    } else if (s.kind == Stmt::Kind::if_) {
      std::size_t begin = out.size();
      out.push_back({Step::Kind::if_begin, nullptr, &s, -1});
      append(s.then_body, out);
      std::size_t else_step = out.size();
      out.push_back({Step::Kind::else_, nullptr, &s, -1});
      append(s.else_body, out);
      out[begin].jump = static_cast<int>(else_step);
      out[else_step].jump = static_cast<int>(out.size());
      out.push_back({Step::Kind::end_if, nullptr, &s, -1});
    } else {
      out.push_back({Step::Kind::loop_init, nullptr, &s, -1});
      std::size_t head = out.size();
      out.push_back({Step::Kind::loop_head, nullptr, &s, -1});
      append(s.body, out);
      out.push_back({Step::Kind::loop_latch, nullptr, &s, static_cast<int>(head)});
      out[head].jump = static_cast<int>(out.size());
      out.push_back({Step::Kind::loop_end, nullptr, &s, -1});
    }
  }
}

}  // namespace

std::vector<Step> flatten(const Block& body) {
  std::vector<Step> out;
  append(body, out);
  return out;
}

}  // namespace warpforge::sim::amdgpu
