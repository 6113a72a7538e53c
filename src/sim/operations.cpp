#include "operations.hpp"

#include <array>
#include <utility>

namespace warpforge::sim {
namespace {

using R = Runner;

// clang-format off
constexpr std::pair<Op, Operation> kOperations[] = {
    {Op::mov, {R::integer, 1}},
    {Op::add, {R::integer_or_float, 2}}, {Op::sub, {R::integer_or_float, 2}},
    {Op::mul, {R::integer_or_float, 2}}, {Op::mad, {R::integer_or_float, 3}},
    {Op::div, {R::integer_or_float, 2}}, {Op::rem, {R::integer_or_float, 2}},
    {Op::abs, {R::integer_or_float, 1}}, {Op::neg, {R::integer_or_float, 1}},
    {Op::min, {R::integer_or_float, 2}}, {Op::max, {R::integer_or_float, 2}},
    {Op::fma, {R::integer_or_float, 3}},
    {Op::and_, {R::integer, 2}}, {Op::or_, {R::integer, 2}}, {Op::xor_, {R::integer, 2}},
    {Op::not_, {R::integer, 1}}, {Op::cnot, {R::integer, 1}}, {Op::shl, {R::integer, 2}},
    {Op::shr, {R::integer, 2}}, {Op::lop3, {R::integer, 4}}, {Op::prmt, {R::integer, 3}},
    {Op::bfe, {R::integer, 3}}, {Op::bfi, {R::integer, 4}}, {Op::popc, {R::integer, 1}},
    {Op::clz, {R::integer, 1}}, {Op::brev, {R::integer, 1}},
    {Op::rcp, {R::float_function, 1}}, {Op::sqrt, {R::float_function, 1}},
    {Op::rsqrt, {R::float_function, 1}}, {Op::ex2, {R::float_function, 1}},
    {Op::lg2, {R::float_function, 1}}, {Op::sin, {R::float_function, 1}},
    {Op::cos, {R::float_function, 1}}, {Op::tanh, {R::float_function, 1}},
    {Op::setp, {R::compare, 2}}, {Op::selp, {R::compare, 3}},
    {Op::cvt, {R::convert, 1}},
    {Op::cvta, {R::memory, 1}}, {Op::mapa, {R::memory, 2}}, {Op::ld, {R::memory, 1}},
    {Op::st, {R::memory, 2}},
    {Op::atom, {R::atomic}}, {Op::red, {R::atomic}},
    {Op::cp_async, {R::async_copy}}, {Op::cp_async_commit, {R::async_copy}},
    {Op::cp_async_wait_group, {R::async_copy}}, {Op::cp_async_wait_all, {R::async_copy}},
    {Op::mbarrier, {R::mbarrier}},
    {Op::activemask, {R::lane_mask}},
    {Op::tensormap, {R::tensormap}},
    {Op::tensor_copy, {R::tensor_copy}}, {Op::bulk_copy, {R::bulk_copy}},
    {Op::bulk_reduce, {R::bulk_copy}},
    {Op::bulk_commit, {R::bulk_group}}, {Op::bulk_wait, {R::bulk_group}},
    {Op::tcgen05, {R::tcgen05}},
    {Op::vprintf, {R::vprintf}}, {Op::frame_copy, {R::frame_copy}},
    {Op::fence, {R::nothing}},
    {Op::bra, {R::scheduler}}, {Op::exit, {R::scheduler}}, {Op::call, {R::scheduler}},
    {Op::ret, {R::scheduler}}, {Op::trap, {R::scheduler}}, {Op::bar_sync, {R::scheduler}},
    {Op::bar_arrive, {R::scheduler}}, {Op::cluster_arrive, {R::scheduler}},
    {Op::cluster_wait, {R::scheduler}},
    {Op::shfl, {R::warp}}, {Op::vote, {R::warp}}, {Op::redux, {R::warp}}, {Op::elect, {R::warp}},
    {Op::mma, {R::warp}}, {Op::wmma, {R::warp}}, {Op::ldmatrix, {R::warp}},
    {Op::stmatrix, {R::warp}}, {Op::bar_warp_sync, {R::warp}}, {Op::tcgen05_sync, {R::warp}},
    {Op::wgmma, {R::warpgroup}}, {Op::setmaxnreg, {R::warpgroup}},
};
// clang-format on

constexpr std::size_t kOps = static_cast<std::size_t>(Op::frame_copy) + 1;

constexpr std::array<Operation, kOps> kByOp = [] {
  std::array<Operation, kOps> by_op{};
  for (const auto& [op, operation] : kOperations) by_op[static_cast<std::size_t>(op)] = operation;
  return by_op;
}();

}  // namespace

const Operation& operation(Op op) {
  return kByOp[static_cast<std::size_t>(op)];
}

}  // namespace warpforge::sim
