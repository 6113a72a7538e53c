#include "gemm_problem.hpp"

namespace warpforge::ops {

std::string GemmProblem::describe() const {
  auto major = [](const MatrixLayout& m) { return m.row_major ? "row" : "col"; };
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " L" +
         std::to_string(l) + " " + std::string(runtime::name(ab_dtype)) + "->" +
         std::string(runtime::name(d_dtype)) + " A " + major(a) + " B " + major(b) +
         (has_c ? std::string(" C ") + major(c) : std::string()) + " D " + major(d) +
         (amax ? " amax" : "");
}

}  // namespace warpforge::ops
