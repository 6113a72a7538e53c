// Tensor maps written by kernels (PTX ISA 9.7.9.27 "tensormap.replace",
// 9.7.9.28 "tensormap.cp_fenceproxy"): a kernel builds a map field by field
// in shared or global memory (Triton's tl.make_tensor_descriptor zeroes 128
// bytes of shared memory, replaces each field, and copies the map to global
// memory with cp_fenceproxy) and its TMA copies then read it there. The
// fields are written into the simulator's own encoding of a map
// (tensor_map_encoding.hpp), which cp.async.bulk.tensor decodes and checks.
// The proxy fences that order the writes before the copies
// (fence.proxy.tensormap::generic, and the release in cp_fenceproxy) have
// nothing to order here: the simulator's copies read memory when issued.
#include "tensormap.hpp"

#include <algorithm>
#include <cstring>

#include "decode_forms.hpp"
#include "execute.hpp"
#include "memory_access.hpp"
#include "tensor_map_encoding.hpp"

namespace warpforge::sim {
namespace {

constexpr std::uint32_t kMapBytes = 128;
constexpr std::uint32_t kMapAlign = 64;  // a CUtensorMap's alignment

// The fields in TensorMapField's order.
constexpr ptx::Mod kFields[] = {ptx::Mod::global_address, ptx::Mod::rank,
                                ptx::Mod::box_dim,        ptx::Mod::global_dim,
                                ptx::Mod::global_stride,  ptx::Mod::element_stride,
                                ptx::Mod::elemtype,       ptx::Mod::interleave_layout,
                                ptx::Mod::swizzle_mode,   ptx::Mod::swizzle_atomicity,
                                ptx::Mod::fill_mode};

bool per_dimension(TensorMapField f) {
  return f == TensorMapField::box_dim || f == TensorMapField::global_dim || f == TensorMapField::global_stride ||
         f == TensorMapField::element_stride;
}

}  // namespace

std::string tensormap_replace(const ptx::Instruction& in, Inst& d, std::vector<ptx::Mod>& rest) {
  // tensormap.replace.tile.<field>.{global,shared::cta}.b1024.{b32,b64} [addr], [ordinal,] value
  if (!take(rest, ptx::Mod::tile)) return "tensormap.replace is simulated in the .tile mode";
  if (!take(rest, ptx::Mod::b1024)) return "tensormap.replace names the map's size, .b1024";
  const auto field = std::find_if(std::begin(kFields), std::end(kFields),
                                  [&](ptx::Mod f) { return in.has(f); });
  if (field == std::end(kFields))
    return "tensormap.replace names one field: ." + std::string(ptx::name(kFields[0])) +
           ", .rank, ...";
  take(rest, *field);
  d.extent = static_cast<std::uint16_t>(field - std::begin(kFields));
  const std::size_t operands = per_dimension(static_cast<TensorMapField>(d.extent)) ? 3 : 2;
  if (in.operands.size() != operands)
    return "tensormap.replace ." + std::string(ptx::name(*field)) + " takes " +
           (operands == 3 ? "[addr], ordinal, value" : "[addr], value");
  return "";
}

std::string tensormap_cp_fenceproxy(const ptx::Instruction& in, Inst&,
                                    std::vector<ptx::Mod>& rest) {
  // tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>.sync.aligned [dst], [src], 128
  if (!in.has(ptx::Mod::global) || !in.has(ptx::Mod::shared_cta))
    return "tensormap.cp_fenceproxy copies from .shared::cta to .global";
  if (in.operands.size() != 3) return "tensormap.cp_fenceproxy takes [dst], [src], size";
  take(rest, ptx::Mod::global);
  take(rest, ptx::Mod::shared_cta);
  return "";
}

void exec_tensormap(const Inst& in, Warp& w, std::uint32_t active) {
  if (static_cast<TensormapOp>(in.mode) == TensormapOp::cp_fenceproxy) {
    // A .sync.aligned copy: every lane names the same map; it is copied once
    // per lane, which leaves the same bytes.
    for_lanes(active, [&](int l) {
      if (read(w, in.op0(2), l) != kMapBytes)
        throw AccessFault{l, "tensormap.cp_fenceproxy copies a 128-byte map; the size operand is " +
                                 std::to_string(read(w, in.op0(2), l))};
      const std::byte* from = access(w, l, Space::shared, address_of(w, in.op0(1), l), kMapBytes, kMapAlign, false);
      std::byte* to = access(w, l, Space::global, address_of(w, in.op0(0), l), kMapBytes, kMapAlign, true);
      std::memmove(to, from, kMapBytes);
    });
    return;
  }
  const auto field = static_cast<TensorMapField>(in.extent);
  const Space space = in.space == Space::global ? Space::global : Space::shared;
  for_lanes(active, [&](int l) {
    std::byte* map = access(w, l, space, address_of(w, in.op0(0), l), kMapBytes, kMapAlign, true);
    const std::uint32_t ordinal = in.ops.size() == 3 ? static_cast<std::uint32_t>(read(w, in.op0(1), l)) : 0;
    const std::uint64_t value = read(w, in.ops.back()[0], l);
    if (std::string why = replace_tensor_map_field(map, field, ordinal, value); !why.empty())
      throw AccessFault{l, "tensormap.replace ." + std::string(ptx::name(kFields[in.extent])) + ": " + why};
  });
}

}  // namespace warpforge::sim
