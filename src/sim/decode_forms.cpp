#include "decode_forms.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "tcgen05_decode.hpp"
#include "tensormap.hpp"

namespace warpforge::sim {
namespace {

using O = ptx::Opcode;
using M = ptx::Mod;

// What a form needs read beyond its words (a shape, a direction, a flag);
// returns the refusal or "".
using Details = std::string (*)(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);

// One form of an opcode: the words that pick it (all present), what it
// executes as, and its mode; or, with `refusal`, a form the simulator does
// not run. The first form of the instruction's opcode whose words it has
// wins; words a form picks are taken out of the rest.
struct Form {
  O opcode;
  std::array<M, 3> words{};
  std::uint8_t word_count = 0;
  Op op = Op::mov;
  std::uint8_t mode = 0;
  const char* refusal = nullptr;
  Details details = nullptr;
  bool hint = false;  // executes as nothing: its modifiers are not read
};

template <class Mode = std::uint8_t>
constexpr Form run(O opcode, Op op, std::initializer_list<M> words = {}, Mode mode = {},
                   Details details = nullptr) {
  Form f{opcode};
  for (M w : words) f.words[f.word_count++] = w;
  f.op = op;
  f.mode = static_cast<std::uint8_t>(mode);
  f.details = details;
  return f;
}
constexpr Form same(O opcode) {
  return run(opcode, op_of(opcode));
}
constexpr Form hint(O opcode, std::initializer_list<M> words = {}) {
  Form f = run(opcode, Op::fence, words);
  f.hint = true;
  return f;
}
constexpr Form refuse(O opcode, std::initializer_list<M> words, const char* why) {
  Form f = run(opcode, Op::trap, words);
  f.refusal = why;
  return f;
}

std::string mbarrier_parity(const ptx::Instruction&, Inst& d, std::vector<M>& rest);
std::string tensor_copy(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);
std::string bulk_copy(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);
std::string bulk_reduce(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);
std::string bulk_wait_read(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);
std::string wgmma_shape(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);
std::string wmma_layouts(const ptx::Instruction& in, Inst& d, std::vector<M>& rest);

constexpr const char* kTexture =
    "textures and surfaces are not simulated; the simulator runs the kernels of this module that "
    "use neither";

constexpr const char* kGriddepcontrolActions = "griddepcontrol takes one action: .wait or .launch_dependents";

// clang-format off
constexpr Form kForms[] = {
    // integer, bit, float and conversion instructions: one way each (PTX ISA 9.7.1-9.7.9)
    same(O::mov), same(O::add), same(O::sub), same(O::mul), same(O::mad), same(O::div),
    same(O::rem), same(O::abs), same(O::neg), same(O::min), same(O::max), same(O::and_),
    same(O::or_), same(O::xor_), same(O::not_), same(O::cnot), same(O::shl), same(O::shr),
    same(O::lop3), same(O::prmt), same(O::bfe), same(O::bfi), same(O::popc), same(O::clz),
    same(O::brev), same(O::setp), same(O::selp), same(O::fma), same(O::rcp), same(O::sqrt),
    same(O::rsqrt), same(O::ex2), same(O::lg2), same(O::sin), same(O::cos), same(O::tanh),
    same(O::cvt), same(O::cvta), same(O::ld), same(O::st), same(O::atom), same(O::red),
    same(O::mapa), same(O::fence),
    run(O::ldu, Op::ld),
    run(O::membar, Op::fence),
    // warp collectives and matrices (9.7.8, 9.7.14)
    same(O::shfl), same(O::vote), same(O::redux), same(O::activemask), same(O::elect),
    same(O::mma), same(O::ldmatrix), same(O::stmatrix),
    // control flow; a kernel's ret (a device function's is decode.cpp's collect_call)
    same(O::bra), same(O::exit), same(O::trap), run(O::ret, Op::exit), run(O::call, Op::vprintf),
    // scheduling and cache hints: nothing a thread can observe. griddepcontrol
    // (9.7.13): the simulator runs a stream's grids one after another, so
    // every grid a wait could name has completed and its memory is visible
    hint(O::nanosleep), hint(O::prefetch), hint(O::prefetchu),
    refuse(O::griddepcontrol, {M::wait, M::launch_dependents}, kGriddepcontrolActions),
    run(O::griddepcontrol, Op::fence, {M::wait}),
    run(O::griddepcontrol, Op::fence, {M::launch_dependents}),
    refuse(O::griddepcontrol, {}, kGriddepcontrolActions),
    // barriers (9.7.13.1) and the cluster barrier (9.7.13.3)
    run(O::barrier, Op::cluster_arrive, {M::cluster, M::arrive}),
    run(O::barrier, Op::cluster_wait, {M::cluster, M::wait}),
    refuse(O::barrier, {M::cluster}, "barrier.cluster takes .arrive or .wait"),
    refuse(O::bar, {M::red}, "bar.red is not simulated"),
    refuse(O::barrier, {M::red}, "bar.red is not simulated"),
    run(O::bar, Op::bar_warp_sync, {M::warp}),
    run(O::bar, Op::bar_arrive, {M::arrive}), run(O::barrier, Op::bar_arrive, {M::arrive}),
    run(O::bar, Op::bar_sync), run(O::barrier, Op::bar_sync),
    // mbarriers (9.7.13.15) and cp.async.mbarrier.arrive (9.7.9.25.3.3)
    run(O::mbarrier, Op::mbarrier, {M::init}, MbarrierOp::init),
    run(O::mbarrier, Op::mbarrier, {M::arrive, M::expect_tx}, MbarrierOp::arrive_expect_tx),
    run(O::mbarrier, Op::mbarrier, {M::arrive}, MbarrierOp::arrive),
    run(O::mbarrier, Op::mbarrier, {M::expect_tx}, MbarrierOp::expect_tx),
    run(O::mbarrier, Op::mbarrier, {M::complete_tx}, MbarrierOp::complete_tx),
    run(O::mbarrier, Op::mbarrier, {M::test_wait}, MbarrierOp::test_wait, mbarrier_parity),
    run(O::mbarrier, Op::mbarrier, {M::try_wait}, MbarrierOp::try_wait, mbarrier_parity),
    run(O::mbarrier, Op::mbarrier, {M::inval}, MbarrierOp::inval),
    refuse(O::mbarrier, {}, "this mbarrier operation is not simulated"),
    run(O::cp, Op::mbarrier, {M::async, M::mbarrier, M::arrive}, MbarrierOp::cp_async_arrive,
        mbarrier_parity),
    // cp.async (9.7.9.25.3), the bulk copies and the tensor memory accelerator (9.7.9.25.4-5)
    run(O::cp, Op::bulk_commit, {M::async, M::bulk, M::commit_group}),
    run(O::cp, Op::bulk_wait, {M::async, M::bulk, M::wait_group}, 0, bulk_wait_read),
    run(O::cp, Op::tensor_copy, {M::async, M::bulk, M::tensor}, 0, tensor_copy),
    run(O::cp, Op::bulk_reduce, {M::reduce, M::async, M::bulk}, 0, bulk_reduce),
    run(O::cp, Op::bulk_copy, {M::async, M::bulk}, 0, bulk_copy),
    run(O::cp, Op::cp_async_commit, {M::async, M::commit_group}),
    run(O::cp, Op::cp_async_wait_group, {M::async, M::wait_group}),
    run(O::cp, Op::cp_async_wait_all, {M::async, M::wait_all}),
    run(O::cp, Op::cp_async, {M::async}),
    // wgmma (9.7.15.5) and setmaxnreg (9.7.19.7)
    refuse(O::wgmma, {M::sp}, "sparse wgmma (.sp) is not simulated"),
    run(O::wgmma, Op::wgmma, {M::fence}, WgmmaOp::fence),
    run(O::wgmma, Op::wgmma, {M::commit_group}, WgmmaOp::commit_group),
    run(O::wgmma, Op::wgmma, {M::wait_group}, WgmmaOp::wait_group),
    run(O::wgmma, Op::wgmma, {M::mma_async}, WgmmaOp::mma_async, wgmma_shape),
    refuse(O::wgmma, {}, "wgmma takes .fence, .commit_group, .wait_group or .mma_async"),
    run(O::setmaxnreg, Op::setmaxnreg, {M::inc}), run(O::setmaxnreg, Op::setmaxnreg, {M::dec}),
    // wmma (9.7.14.4): the operation in Inst::extent, the shape in mode
    refuse(O::wmma, {M::satfinite}, "wmma.mma .satfinite is not simulated"),
    run(O::wmma, Op::wmma, {M::load, M::a}, WmmaOp::load_a, wmma_layouts),
    run(O::wmma, Op::wmma, {M::load, M::b}, WmmaOp::load_b, wmma_layouts),
    run(O::wmma, Op::wmma, {M::load, M::c}, WmmaOp::load_c, wmma_layouts),
    run(O::wmma, Op::wmma, {M::store, M::d}, WmmaOp::store_d, wmma_layouts),
    run(O::wmma, Op::wmma, {M::mma}, WmmaOp::mma, wmma_layouts),
    refuse(O::wmma, {}, "wmma takes .load.a, .load.b, .load.c, .mma or .store.d"),
    // tcgen05 (9.7.16): the warp-wide .sync.aligned operations, then those of one thread
    run(O::tcgen05, Op::tcgen05_sync, {M::alloc}, Tcgen05Op::alloc, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::dealloc}, Tcgen05Op::dealloc, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::relinquish_alloc_permit}, Tcgen05Op::relinquish,
        decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::ld}, Tcgen05Op::ld, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::st}, Tcgen05Op::st, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::wait_ld}, Tcgen05Op::wait, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05_sync, {M::wait_st}, Tcgen05Op::wait, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::mma}, Tcgen05Op::mma, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::cp}, Tcgen05Op::cp, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::shift}, Tcgen05Op::shift, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::commit}, Tcgen05Op::commit, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::fence_before_thread_sync}, Tcgen05Op::fence, decode_tcgen05),
    run(O::tcgen05, Op::tcgen05, {M::fence_after_thread_sync}, Tcgen05Op::fence, decode_tcgen05),
    refuse(O::tcgen05, {}, "this tcgen05 instruction is not simulated"),
    // tensor maps written by the kernel (9.7.9.27-28): the field replaced in Inst::extent
    run(O::tensormap, Op::tensormap, {M::replace}, TensormapOp::replace, tensormap_replace),
    run(O::tensormap, Op::tensormap, {M::cp_fenceproxy}, TensormapOp::cp_fenceproxy,
        tensormap_cp_fenceproxy),
    refuse(O::tensormap, {}, "tensormap takes .replace or .cp_fenceproxy"),
    // textures and surfaces (9.7.10-11)
    refuse(O::tex, {}, kTexture), refuse(O::tld4, {}, kTexture), refuse(O::txq, {}, kTexture),
    refuse(O::istypep, {}, kTexture), refuse(O::suld, {}, kTexture),
    refuse(O::sust, {}, kTexture), refuse(O::sured, {}, kTexture), refuse(O::suq, {}, kTexture),
};
// clang-format on

bool has_words(const ptx::Instruction& in, const Form& f) {
  for (std::uint8_t i = 0; i < f.word_count; ++i)
    if (!in.has(f.words[i])) return false;
  return true;
}

// .parity for the mbarrier waits, .noinc for cp.async.mbarrier.arrive.
std::string mbarrier_parity(const ptx::Instruction&, Inst& d, std::vector<M>& rest) {
  d.parity = take(rest, M::parity) | take(rest, M::noinc);
  return "";
}

// cp.async.bulk.tensor.Nd.shared::cluster.global[.tile].mbarrier::complete_tx::bytes[.multicast::cluster]
// and cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group (PTX ISA 9.7.9.25.5.1): the
// destination's space comes first; cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add[.tile].bulk_group
// (9.7.9.25.5.2) is a store that adds (its .add taken here: Inst::mode is the direction).
std::string tensor_copy(const ptx::Instruction& in, Inst& d, std::vector<M>& rest) {
  constexpr M kRanks[] = {M::_1d, M::_2d, M::_3d, M::_4d, M::_5d};
  for (int rank = 1; rank <= 5; ++rank)
    if (take(rest, kRanks[rank - 1])) d.extent = static_cast<std::uint16_t>(rank);
  if (d.extent == 0) return "cp.async.bulk.tensor needs a dimension .1d to .5d";
  const auto at = [&](M m) { return std::find(in.modifiers.begin(), in.modifiers.end(), m); };
  const auto global = at(M::global);
  const auto shared = std::min(at(M::shared_cluster), at(M::shared_cta));
  if (global == in.modifiers.end() || shared == in.modifiers.end())
    return "cp.async.bulk.tensor copies between .global and .shared::cluster/.shared::cta";
  const bool load = shared < global;
  const bool reduce = take(rest, M::reduce);
  if (reduce && (load || !take(rest, M::add)))
    return "cp.reduce.async.bulk.tensor is simulated from .shared::cta into .global with .add only";
  d.mode = static_cast<std::uint8_t>(load     ? TensorCopyDir::global_to_shared
                                     : reduce ? TensorCopyDir::shared_to_global_add
                                              : TensorCopyDir::shared_to_global);
  if (load && !take(rest, M::mbarrier_complete_tx_bytes))
    return "a TMA load completes on an mbarrier: .mbarrier::complete_tx::bytes is required";
  if (!load && !take(rest, M::bulk_group))
    return "a TMA store completes through a bulk async-group: .bulk_group is required";
  d.multicast = take(rest, M::multicast_cluster);
  for (M m : {M::global, M::shared_cluster, M::shared_cta, M::tile}) take(rest, m);
  return "";
}

// cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes (9.7.9.25.4.1).
std::string bulk_copy(const ptx::Instruction& in, Inst&, std::vector<M>& rest) {
  const auto at = [&](M m) { return std::find(in.modifiers.begin(), in.modifiers.end(), m); };
  if (at(M::shared_cluster) < at(M::shared_cta) && at(M::shared_cta) != in.modifiers.end() &&
      take(rest, M::mbarrier_complete_tx_bytes)) {
    take(rest, M::shared_cluster);
    take(rest, M::shared_cta);
    return "";
  }
  return "cp.async.bulk without .tensor is simulated from .shared::cta into .shared::cluster only, "
         "completing on an mbarrier (.mbarrier::complete_tx::bytes)";
}

// cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 (9.7.9.25.4.2): the
// operation (.add) and type (.f32) are left for the modifiers' parse, and
// checked with the operands (decode_checks.cpp).
std::string bulk_reduce(const ptx::Instruction& in, Inst&, std::vector<M>& rest) {
  const auto at = [&](M m) { return std::find(in.modifiers.begin(), in.modifiers.end(), m); };
  if (at(M::global) < at(M::shared_cta) && at(M::shared_cta) != in.modifiers.end() && take(rest, M::bulk_group)) {
    take(rest, M::global);
    take(rest, M::shared_cta);
    return "";
  }
  return "cp.reduce.async.bulk is simulated from .shared::cta into .global only, completing through a bulk "
         "async-group (.bulk_group)";
}

// cp.async.bulk.wait_group[.read] (9.7.9.25.5.4): .read waits for the
// sources to be read, which the simulator's copies have been at issue.
std::string bulk_wait_read(const ptx::Instruction&, Inst&, std::vector<M>& rest) {
  take(rest, M::read);
  return "";
}

// wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype: N in Inst::extent, K in vec.
std::string wgmma_shape(const ptx::Instruction&, Inst& d, std::vector<M>& rest) {
  for (auto it = rest.begin(); it != rest.end(); ++it)
    if (const auto shape = ptx::wgmma_shape_of(*it)) {
      d.extent = static_cast<std::uint16_t>(shape->n);
      d.vec = static_cast<std::uint8_t>(shape->k);
      rest.erase(it);
      return "";
    }
  return "";  // no shape: the operand checks refuse it
}

// wmma.load.{a,b,c} / .mma / .store.d (PTX ISA 9.7.14.4.2-4): the operation
// moves to Inst::extent (mode holds the shape, read by class), the layouts to
// vec, bit 0 set for .col in the first (a load's or store's only layout, or
// mma's A layout) and bit 1 for .col in mma's B layout.
std::string wmma_layouts(const ptx::Instruction& in, Inst& d, std::vector<M>& rest) {
  d.extent = d.mode;
  d.mode = 0;
  d.vec = 0;
  int layouts = 0;
  for (M m : in.modifiers)
    if (m == M::row || m == M::col) d.vec |= static_cast<std::uint8_t>((m == M::col) << layouts++);
  std::erase_if(rest, [](M m) { return m == M::row || m == M::col; });
  const bool mma = static_cast<WmmaOp>(d.extent) == WmmaOp::mma;
  if (layouts != (mma ? 2 : 1))
    return mma ? "wmma.mma needs A's and B's layouts (.row or .col each)"
               : "a wmma load or store needs one layout, .row or .col";
  return "";
}

}  // namespace

bool take(std::vector<M>& rest, M m) {
  const auto it = std::find(rest.begin(), rest.end(), m);
  if (it == rest.end()) return false;
  rest.erase(it);
  return true;
}

std::string decode_form(const ptx::Instruction& in, Inst& d, std::vector<M>& rest) {
  for (const Form& f : kForms) {
    if (f.opcode != in.opcode || !has_words(in, f)) continue;
    if (f.refusal) return f.refusal;
    d.op = f.op;
    d.mode = f.mode;
    if (f.hint) {
      rest.clear();
      return "";
    }
    for (std::uint8_t w = 0; w < f.word_count; ++w) take(rest, f.words[w]);
    return f.details ? f.details(in, d, rest) : "";
  }
  return "instruction '" + std::string(ptx::name(in.opcode)) + "' is not simulated";
}

}  // namespace warpforge::sim
