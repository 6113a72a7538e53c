// Every modifier word of the PTX instructions (PTX ISA 9.7, each
// instruction's syntax, through ISA 9.0), once: X(enumerator, spelling,
// class, value), the class and value being the word's first meaning
// (modifiers.hpp; a word with a second meaning, such as .and, has it listed
// in modifiers.cpp). ptx::Mod is made from this list; the types (ptx::Type)
// come before it and wgmma's shapes m64nNkK after it, as ranges of Mod.
// Enumerators spell the word with "::" as "_", a leading digit after "_",
// and C++ keywords with a trailing "_".
#pragma once

// clang-format off
#define WARPFORGE_PTX_MODIFIER_WORDS(X) \
  /* rounding (PTX ISA 9.7.3; cvt 9.7.9.21) */ \
  X(rn, "rn", rounding, Rounding::rn) X(rz, "rz", rounding, Rounding::rz) \
  X(rm, "rm", rounding, Rounding::rm) X(rp, "rp", rounding, Rounding::rp) \
  X(rna, "rna", rounding, Rounding::rna) \
  /* integral rounding (cvt's .irnd) */ \
  X(rni, "rni", integral_rounding, Rounding::rn) X(rzi, "rzi", integral_rounding, Rounding::rz) \
  X(rmi, "rmi", integral_rounding, Rounding::rm) X(rpi, "rpi", integral_rounding, Rounding::rp) \
  /* flush to zero */ \
  X(ftz, "ftz", ftz, 0) \
  /* saturation: .sat clamps to [0, 1] (or the integer range), .satfinite to the finite range */ \
  X(sat, "sat", saturation, 0) X(satfinite, "satfinite", saturation, 1) \
  X(relu, "relu", relu, 0) \
  /* .approx or .full (div, rcp, sqrt, ex2 ...) */ \
  X(approx, "approx", approximation, 0) X(full, "full", approximation, 1) \
  /* atom/red's packed halves */ \
  X(noftz, "noftz", noftz, 0) \
  /* comparisons of setp/set (PTX ISA 9.7.7.1) */ \
  X(eq, "eq", comparison, Cmp::eq) X(ne, "ne", comparison, Cmp::ne) \
  X(lt, "lt", comparison, Cmp::lt) X(le, "le", comparison, Cmp::le) \
  X(gt, "gt", comparison, Cmp::gt) X(ge, "ge", comparison, Cmp::ge) \
  X(lo, "lo", comparison, Cmp::lo) X(ls, "ls", comparison, Cmp::ls) \
  X(hi, "hi", comparison, Cmp::hi) X(hs, "hs", comparison, Cmp::hs) \
  X(equ, "equ", comparison, Cmp::equ) X(neu, "neu", comparison, Cmp::neu) \
  X(ltu, "ltu", comparison, Cmp::ltu) X(leu, "leu", comparison, Cmp::leu) \
  X(gtu, "gtu", comparison, Cmp::gtu) X(geu, "geu", comparison, Cmp::geu) \
  X(num, "num", comparison, Cmp::num) X(nan, "nan", comparison, Cmp::nan) \
  /* setp's combining operation */ \
  X(and_, "and", bool_op, BoolOp::and_) X(or_, "or", bool_op, BoolOp::or_) \
  X(xor_, "xor", bool_op, BoolOp::xor_) \
  /* atom/red operations (PTX ISA 9.7.13.5-6; .and .or .xor too) */ \
  X(add, "add", atomic_op, AtomOp::add) X(min, "min", atomic_op, AtomOp::min) \
  X(max, "max", atomic_op, AtomOp::max) X(inc, "inc", atomic_op, AtomOp::inc) \
  X(dec, "dec", atomic_op, AtomOp::dec) X(exch, "exch", atomic_op, AtomOp::exch) \
  X(cas, "cas", atomic_op, AtomOp::cas) \
  /* state spaces (PTX ISA 5.1) */ \
  X(global, "global", space, Space::global) X(shared, "shared", space, Space::shared) \
  X(shared_cta, "shared::cta", space, Space::shared) \
  X(shared_cluster, "shared::cluster", space, Space::shared) \
  X(local, "local", space, Space::local) X(param, "param", space, Space::param) \
  X(param_entry, "param::entry", space, Space::param) \
  X(param_func, "param::func", space, Space::param) X(const_, "const", space, Space::const_) \
  /* vectors */ \
  X(v2, "v2", vector, 2) X(v4, "v4", vector, 4) X(v8, "v8", vector, 8) \
  /* ldmatrix/stmatrix's matrix count, tcgen05.ld/st's .num */ \
  X(x1, "x1", matrix_count, 1) X(x2, "x2", matrix_count, 2) X(x4, "x4", matrix_count, 4) \
  X(x8, "x8", matrix_count, 8) X(x16, "x16", matrix_count, 16) X(x32, "x32", matrix_count, 32) \
  X(x64, "x64", matrix_count, 64) X(x128, "x128", matrix_count, 128) \
  X(trans, "trans", transpose, 0) \
  /* mul/mad's half of the product */ \
  X(wide, "wide", mul_mode, MulMode::wide) \
  /* shfl.sync modes */ \
  X(up, "up", shfl_mode, ShflMode::up) X(down, "down", shfl_mode, ShflMode::down) \
  X(bfly, "bfly", shfl_mode, ShflMode::bfly) X(idx, "idx", shfl_mode, ShflMode::idx) \
  /* vote.sync modes */ \
  X(all, "all", vote_mode, VoteMode::all) X(any, "any", vote_mode, VoteMode::any) \
  X(uni, "uni", vote_mode, VoteMode::uni) X(ballot, "ballot", vote_mode, VoteMode::ballot) \
  /* shapes of mma (9.7.14.5), wmma (9.7.14.4), ldmatrix/stmatrix/movmatrix */ \
  X(m16n8k8, "m16n8k8", shape, MmaShape::m16n8k8) \
  X(m16n8k16, "m16n8k16", shape, MmaShape::m16n8k16) \
  X(m16n8k32, "m16n8k32", shape, MmaShape::m16n8k32) \
  X(m8n8k4, "m8n8k4", shape, MmaShape::m8n8k4) \
  X(m16n16k16, "m16n16k16", shape, MmaShape::m16n16k16) \
  X(m32n8k16, "m32n8k16", shape, MmaShape::m32n8k16) \
  X(m8n32k16, "m8n32k16", shape, MmaShape::m8n32k16) \
  X(m16n16k8, "m16n16k8", shape, MmaShape::m16n16k8) X(m8n8, "m8n8", shape, MmaShape::m8n8) \
  X(m16n8k4, "m16n8k4", shape, MmaShape::m16n8k4) \
  X(m16n8k64, "m16n8k64", shape, MmaShape::m16n8k64) \
  X(m16n8k128, "m16n8k128", shape, MmaShape::m16n8k128) \
  X(m16n8k256, "m16n8k256", shape, MmaShape::m16n8k256) \
  X(m8n8k16, "m8n8k16", shape, MmaShape::m8n8k16) \
  X(m8n8k32, "m8n8k32", shape, MmaShape::m8n8k32) \
  X(m8n8k128, "m8n8k128", shape, MmaShape::m8n8k128) \
  X(m16n16, "m16n16", shape, MmaShape::m16n16) X(m8n16, "m8n16", shape, MmaShape::m8n16) \
  X(m16n8, "m16n8", shape, MmaShape::m16n8) \
  /* matrix layouts */ \
  X(row, "row", layout, 0) X(col, "col", layout, 1) \
  /* cvta's direction */ \
  X(to, "to", convert_to, 0) \
  /* promises about convergence (.uni also: vote.sync.uni is the vote mode) */ \
  X(sync, "sync", sync, 0) X(aligned, "aligned", sync, 0) \
  /* cache operators, eviction priorities and prefetch sizes: hints */ \
  X(ca, "ca", cache, 0) X(cg, "cg", cache, 0) X(cs, "cs", cache, 0) X(lu, "lu", cache, 0) \
  X(cv, "cv", cache, 0) X(wb, "wb", cache, 0) X(wt, "wt", cache, 0) X(nc, "nc", cache, 0) \
  X(volatile_, "volatile", cache, 0) X(unified, "unified", cache, 0) X(L1, "L1", cache, 0) \
  X(L2, "L2", cache, 0) X(L1_no_allocate, "L1::no_allocate", cache, 0) \
  X(L1_evict_normal, "L1::evict_normal", cache, 0) \
  X(L1_evict_first, "L1::evict_first", cache, 0) X(L1_evict_last, "L1::evict_last", cache, 0) \
  X(L1_evict_unchanged, "L1::evict_unchanged", cache, 0) \
  X(L2_evict_normal, "L2::evict_normal", cache, 0) \
  X(L2_evict_first, "L2::evict_first", cache, 0) X(L2_evict_last, "L2::evict_last", cache, 0) \
  X(L2_evict_unchanged, "L2::evict_unchanged", cache, 0) \
  X(L2_cache_hint, "L2::cache_hint", cache, 0) X(L2_64B, "L2::64B", cache, 0) \
  X(L2_128B, "L2::128B", cache, 0) X(L2_256B, "L2::256B", cache, 0) \
  /* memory orders */ \
  X(relaxed, "relaxed", memory_order, 0) X(acquire, "acquire", memory_order, 0) \
  X(release, "release", memory_order, 0) X(acq_rel, "acq_rel", memory_order, 0) \
  X(weak, "weak", memory_order, 0) X(sc, "sc", memory_order, 0) \
  X(mmio, "mmio", memory_order, 0) \
  /* scopes */ \
  X(cta, "cta", scope, 0) X(cluster, "cluster", scope, 0) X(gpu, "gpu", scope, 0) \
  X(sys, "sys", scope, 0) X(gl, "gl", scope, 0) \
  /* proxies of fence.proxy and prefetch.tensormap (PTX ISA 9.7.13.4) */ \
  X(proxy, "proxy", proxy, 0) X(alias, "alias", proxy, 0) X(async, "async", proxy, 0) \
  X(async_generic, "async::generic", proxy, 0) X(mbarrier_init, "mbarrier_init", proxy, 0) \
  X(tensormap, "tensormap", proxy, 0) X(tensormap_generic, "tensormap::generic", proxy, 0) \
  X(sync_restrict_shared_cta, "sync_restrict::shared::cta", proxy, 0) \
  X(sync_restrict_shared_cluster, "sync_restrict::shared::cluster", proxy, 0) \
  /* element types no ptx::Type stands for (sub-byte, packed and scale-factor formats) */ \
  X(b1, "b1", element_type, 0) X(u2, "u2", element_type, 0) X(s2, "s2", element_type, 0) \
  X(u4, "u4", element_type, 0) X(s4, "s4", element_type, 0) X(u16x2, "u16x2", element_type, 0) \
  X(s16x2, "s16x2", element_type, 0) X(f32x2, "f32x2", element_type, 0) \
  X(e2m1, "e2m1", element_type, 0) X(e2m3, "e2m3", element_type, 0) \
  X(e3m2, "e3m2", element_type, 0) X(e2m3x2, "e2m3x2", element_type, 0) \
  X(e3m2x2, "e3m2x2", element_type, 0) X(e2m1x4, "e2m1x4", element_type, 0) \
  X(e2m3x4, "e2m3x4", element_type, 0) X(e3m2x4, "e3m2x4", element_type, 0) \
  X(e4m3x4, "e4m3x4", element_type, 0) X(e5m2x4, "e5m2x4", element_type, 0) \
  X(ue8m0, "ue8m0", element_type, 0) X(ue8m0x2, "ue8m0x2", element_type, 0) \
  X(ue4m3, "ue4m3", element_type, 0) X(b8x16, "b8x16", element_type, 0) \
  X(b6x16_p32, "b6x16_p32", element_type, 0) X(b4x16_p64, "b4x16_p64", element_type, 0) \
  X(b1024, "b1024", element_type, 0) \
  /* barriers, mbarriers, grid dependency (9.7.13) */ \
  X(arrive, "arrive", form, 0) X(wait, "wait", form, 0) X(red, "red", form, 0) \
  X(warp, "warp", form, 0) X(init, "init", form, 0) X(inval, "inval", form, 0) \
  X(arrive_drop, "arrive_drop", form, 0) X(expect_tx, "expect_tx", form, 0) \
  X(complete_tx, "complete_tx", form, 0) X(test_wait, "test_wait", form, 0) \
  X(try_wait, "try_wait", form, 0) X(parity, "parity", form, 0) \
  X(pending_count, "pending_count", form, 0) X(noComplete, "noComplete", form, 0) \
  X(noinc, "noinc", form, 0) X(launch_dependents, "launch_dependents", form, 0) \
  X(popc, "popc", form, 0) \
  /* asynchronous copies and the tensor memory accelerator (9.7.9.25) */ \
  X(fence, "fence", form, 0) X(commit_group, "commit_group", form, 0) \
  X(wait_group, "wait_group", form, 0) X(wait_all, "wait_all", form, 0) \
  X(bulk, "bulk", form, 0) X(tensor, "tensor", form, 0) X(mbarrier, "mbarrier", form, 0) \
  X(mbarrier_complete_tx_bytes, "mbarrier::complete_tx::bytes", form, 0) \
  X(mbarrier_arrive_one, "mbarrier::arrive::one", form, 0) \
  X(multicast_cluster, "multicast::cluster", form, 0) \
  X(multicast_cluster_all, "multicast::cluster::all", form, 0) \
  X(bulk_group, "bulk_group", form, 0) X(read, "read", form, 0) \
  X(prefetch, "prefetch", form, 0) X(reduce, "reduce", form, 0) X(cp_mask, "cp_mask", form, 0) \
  X(tile, "tile", form, 0) X(tile_gather4, "tile::gather4", form, 0) \
  X(tile_scatter4, "tile::scatter4", form, 0) X(im2col, "im2col", form, 0) \
  X(im2col_w, "im2col::w", form, 0) X(im2col_w_128, "im2col::w::128", form, 0) \
  X(im2col_no_offs, "im2col_no_offs", form, 0) \
  /* geometries of tensors, textures and surfaces */ \
  X(_1d, "1d", form, 0) X(_2d, "2d", form, 0) X(_3d, "3d", form, 0) X(_4d, "4d", form, 0) \
  X(_5d, "5d", form, 0) X(a1d, "a1d", form, 0) X(a2d, "a2d", form, 0) X(cube, "cube", form, 0) \
  X(acube, "acube", form, 0) X(_2dms, "2dms", form, 0) X(a2dms, "a2dms", form, 0) \
  /* textures and surfaces (9.7.10-11) */ \
  X(base, "base", form, 0) X(level, "level", form, 0) X(grad, "grad", form, 0) \
  X(r, "r", form, 0) X(g, "g", form, 0) X(a, "a", form, 0) X(b, "b", form, 0) \
  X(c, "c", form, 0) X(d, "d", form, 0) X(p, "p", form, 0) X(trap, "trap", form, 0) \
  X(clamp, "clamp", form, 0) X(zero, "zero", form, 0) X(texref, "texref", form, 0) \
  X(samplerref, "samplerref", form, 0) X(surfref, "surfref", form, 0) \
  X(width, "width", form, 0) X(height, "height", form, 0) X(depth, "depth", form, 0) \
  X(channel_data_type, "channel_data_type", form, 0) X(channel_order, "channel_order", form, 0) \
  X(normalized_coords, "normalized_coords", form, 0) X(filter_mode, "filter_mode", form, 0) \
  X(addr_mode_0, "addr_mode_0", form, 0) X(addr_mode_1, "addr_mode_1", form, 0) \
  X(addr_mode_2, "addr_mode_2", form, 0) \
  X(force_unnormalized_coords, "force_unnormalized_coords", form, 0) \
  X(array_size, "array_size", form, 0) X(num_mipmap_levels, "num_mipmap_levels", form, 0) \
  X(num_samples, "num_samples", form, 0) X(memory_layout, "memory_layout", form, 0) \
  /* tensormap.replace and .cp_fenceproxy (9.7.9.26) */ \
  X(replace, "replace", form, 0) X(cp_fenceproxy, "cp_fenceproxy", form, 0) \
  X(global_address, "global_address", form, 0) X(rank, "rank", form, 0) \
  X(box_dim, "box_dim", form, 0) X(global_dim, "global_dim", form, 0) \
  X(global_stride, "global_stride", form, 0) X(element_stride, "element_stride", form, 0) \
  X(elemtype, "elemtype", form, 0) X(interleave_layout, "interleave_layout", form, 0) \
  X(swizzle_mode, "swizzle_mode", form, 0) X(swizzle_atomicity, "swizzle_atomicity", form, 0) \
  X(fill_mode, "fill_mode", form, 0) \
  /* matrix instructions: wmma, mma, wgmma (9.7.14-15) */ \
  X(load, "load", form, 0) X(store, "store", form, 0) X(mma, "mma", form, 0) \
  X(mma_async, "mma_async", form, 0) X(sp, "sp", form, 0) \
  X(sp_ordered_metadata, "sp::ordered_metadata", form, 0) X(kind_f16, "kind::f16", form, 0) \
  X(kind_tf32, "kind::tf32", form, 0) X(kind_f8f6f4, "kind::f8f6f4", form, 0) \
  X(kind_i8, "kind::i8", form, 0) X(kind_mxf8f6f4, "kind::mxf8f6f4", form, 0) \
  X(kind_mxf4, "kind::mxf4", form, 0) X(kind_mxf4nvf4, "kind::mxf4nvf4", form, 0) \
  X(block_scale, "block_scale", form, 0) X(scale_vec_1X, "scale_vec::1X", form, 0) \
  X(scale_vec_2X, "scale_vec::2X", form, 0) X(scale_vec_4X, "scale_vec::4X", form, 0) \
  X(block16, "block16", form, 0) X(block32, "block32", form, 0) \
  /* tcgen05 (9.7.16) */ \
  X(alloc, "alloc", form, 0) X(dealloc, "dealloc", form, 0) \
  X(relinquish_alloc_permit, "relinquish_alloc_permit", form, 0) X(ld, "ld", form, 0) \
  X(st, "st", form, 0) X(cp, "cp", form, 0) X(shift, "shift", form, 0) \
  X(commit, "commit", form, 0) X(wait_ld, "wait::ld", form, 0) X(wait_st, "wait::st", form, 0) \
  X(fence_before_thread_sync, "fence::before_thread_sync", form, 0) \
  X(fence_after_thread_sync, "fence::after_thread_sync", form, 0) \
  X(cta_group_1, "cta_group::1", form, 0) X(cta_group_2, "cta_group::2", form, 0) \
  X(_32x32b, "32x32b", form, 0) X(_16x64b, "16x64b", form, 0) X(_16x128b, "16x128b", form, 0) \
  X(_16x256b, "16x256b", form, 0) X(_16x32bx2, "16x32bx2", form, 0) \
  X(_128x256b, "128x256b", form, 0) X(_4x256b, "4x256b", form, 0) \
  X(_128x128b, "128x128b", form, 0) X(_64x128b, "64x128b", form, 0) \
  X(_32x128b, "32x128b", form, 0) X(warpx2_02_13, "warpx2::02_13", form, 0) \
  X(warpx2_01_23, "warpx2::01_23", form, 0) X(warpx4, "warpx4", form, 0) \
  X(pack_16b, "pack::16b", form, 0) X(unpack_16b, "unpack::16b", form, 0) \
  X(ashift, "ashift", form, 0) X(ws, "ws", form, 0) \
  X(collector_a_fill, "collector::a::fill", form, 0) \
  X(collector_a_use, "collector::a::use", form, 0) \
  X(collector_a_lastuse, "collector::a::lastuse", form, 0) \
  X(collector_a_discard, "collector::a::discard", form, 0) \
  X(collector_b0_fill, "collector::b0::fill", form, 0) \
  X(collector_b0_use, "collector::b0::use", form, 0) \
  X(collector_b0_lastuse, "collector::b0::lastuse", form, 0) \
  X(collector_b0_discard, "collector::b0::discard", form, 0) \
  X(collector_b1_fill, "collector::b1::fill", form, 0) \
  X(collector_b1_use, "collector::b1::use", form, 0) \
  X(collector_b1_lastuse, "collector::b1::lastuse", form, 0) \
  X(collector_b1_discard, "collector::b1::discard", form, 0) \
  X(collector_b2_fill, "collector::b2::fill", form, 0) \
  X(collector_b2_use, "collector::b2::use", form, 0) \
  X(collector_b2_lastuse, "collector::b2::lastuse", form, 0) \
  X(collector_b2_discard, "collector::b2::discard", form, 0) \
  X(collector_b3_fill, "collector::b3::fill", form, 0) \
  X(collector_b3_use, "collector::b3::use", form, 0) \
  X(collector_b3_lastuse, "collector::b3::lastuse", form, 0) \
  X(collector_b3_discard, "collector::b3::discard", form, 0) \
  /* the bit-field, permute and funnel-shift forms (9.7.1, 9.7.8) */ \
  X(shiftamt, "shiftamt", form, 0) X(f4e, "f4e", form, 0) X(b4e, "b4e", form, 0) \
  X(rc8, "rc8", form, 0) X(ecl, "ecl", form, 0) X(ecr, "ecr", form, 0) X(rc16, "rc16", form, 0) \
  X(l, "l", form, 0) X(wrap, "wrap", form, 0) X(cc, "cc", form, 0) \
  /* testp's classes, min/max's .NaN .xorsign .abs, fma's .oob, cvt's .rs */ \
  X(finite, "finite", form, 0) X(infinite, "infinite", form, 0) X(number, "number", form, 0) \
  X(notanumber, "notanumber", form, 0) X(normal, "normal", form, 0) \
  X(subnormal, "subnormal", form, 0) X(NaN, "NaN", form, 0) X(xorsign, "xorsign", form, 0) \
  X(abs, "abs", form, 0) X(oob, "oob", form, 0) X(rs, "rs", form, 0) \
  /* multimem, createpolicy, cluster launch control, video and the rest */ \
  X(ld_reduce, "ld_reduce", form, 0) X(acc_f16, "acc::f16", form, 0) \
  X(acc_f32, "acc::f32", form, 0) X(fractional, "fractional", form, 0) \
  X(range, "range", form, 0) X(cvt, "cvt", form, 0) X(try_cancel, "try_cancel", form, 0) \
  X(query_cancel, "query_cancel", form, 0) X(is_canceled, "is_canceled", form, 0) \
  X(get_first_ctaid, "get_first_ctaid", form, 0) \
  X(get_first_ctaid_x, "get_first_ctaid::x", form, 0) \
  X(get_first_ctaid_y, "get_first_ctaid::y", form, 0) \
  X(get_first_ctaid_z, "get_first_ctaid::z", form, 0) X(mask, "mask", form, 0) \
  X(po, "po", form, 0) X(shr7, "shr7", form, 0) X(shr15, "shr15", form, 0) \
  X(pack, "pack", form, 0)
// clang-format on
