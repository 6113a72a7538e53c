"""Which part of the kernel-built tensor map kernel (tests/sim/hopper_kernels.hpp,
kBuiltMapKernel; the difftest unit triton_ptx) an H100/H200 refuses with
CUDA_ERROR_ILLEGAL_INSTRUCTION: the kernel is run as written and in variants
that each change one thing, each in a process of its own (a fault poisons
the context), through the CUDA driver alone (ctypes; nothing to build).

    python3 scripts/tensormap_probe.py          (prints one line per variant)

Variants: as written (the TMA load into .shared::cluster); into
.shared::cta (as the kernel was when the GPU refused it), also with
fence.mbarrier_init; without the TMA load (the map the GPU built is
printed, beside the driver's cuTensorMapEncodeTiled map of the same
tensor); the driver's map instead of the built one (both destinations);
PTX 8.5 with the stride given in 16-byte units (what Triton does for PTX
<= 8.5) and without. Then the ways the difftest unit's launches differed from the first
variant's: the module compiled by cuLinkCreate/AddData/Complete with
CU_JIT_TARGET sm_90a (as warpforge's runtime loads PTX) instead of
cuModuleLoadDataEx; coordinates before the tensor (-4, -4); a box wholly
past its end (27, 13); the unit's 64 launches, the map and output zeroed
between them. An H200 (session 4, window 1) faulted with an illegal
instruction on the last two only (the 64 at the second launch, (11, 1));
so, to tell the causes apart: boxes starting at or past the end in one
dimension, wholly before in both; two launches at the same map address,
with and without zeroing it between, and at fresh addresses; the unit's
launches as it makes them now (inside or before, a map per launch).
"""
import ctypes
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROWS, COLS, BOX_ROWS, BOX_COLS = 10, 24, 4, 8


def kernel_text():
    source = open(os.path.join(ROOT, "tests/sim/hopper_kernels.hpp")).read()
    body = re.search(r'kBuiltMapKernel = R"\((.*?)\)";', source, re.S).group(1)
    return ".version 8.6\n.target sm_90a\n.address_size 64\n" + body.replace("$ELEMTYPE", "7")


def drop(text, *needles):
    return "\n".join(line for line in text.split("\n") if not any(n in line for n in needles))


def variant(text, driver_map=False, coordinates=((20, 8),), linked=False, zeroed=True, fresh=False):
    """A kernel text and how it is launched: the driver's map instead of the
    built one; box corners, one launch each; compiled with cuLink; the map
    and output zeroed between launches; each launch's map at an address of
    its own."""
    return dict(text=text, driver_map=driver_map, coordinates=list(coordinates), linked=linked, zeroed=zeroed,
                fresh=fresh)


def variants():
    k = kernel_text()  # its TMA load writes .shared::cluster
    cta = k.replace("cp.async.bulk.tensor.2d.shared::cluster.global", "cp.async.bulk.tensor.2d.shared::cta.global")
    driver_map = ("tensormap.replace", "tensormap.cp_fenceproxy", "fence.proxy.tensormap")
    init_fence = cta.replace("mbarrier.init.shared::cta.b64 [%r2], 1;",
                             "mbarrier.init.shared::cta.b64 [%r2], 1;\n  fence.mbarrier_init.release.cluster;")
    v85 = k.replace(".version 8.6", ".version 8.5")
    two = [(20, 8), (11, 1)]
    return {
        "as_written": variant(k),
        "shared_cta_destination": variant(cta),
        "no_tma_load": variant(drop(k, "cp.async.bulk.tensor", "mbarrier.arrive.expect_tx", "mbarrier.try_wait",
                                    "bra LOOP")),
        "shared_cta_fence_mbarrier_init": variant(init_fence),
        "driver_map_shared_cta": variant(drop(cta, *driver_map), driver_map=True),
        "driver_map_shared_cluster": variant(drop(k, *driver_map), driver_map=True),
        "ptx85_stride_bytes": variant(v85),
        "ptx85_stride_16B_units": variant(v85.replace("global_stride.shared::cta.b1024.b64 [%rd1], 0, 96",
                                                      "global_stride.shared::cta.b1024.b64 [%rd1], 0, 6")),
        "linked_with_jit_target": variant(k, linked=True),
        "negative_coordinates": variant(k, coordinates=[(-4, -4)]),
        "box_wholly_past_the_end": variant(k, coordinates=[(27, 13)]),
        "x_starts_at_the_end": variant(k, coordinates=[(24, 0)]),
        "y_starts_at_the_end": variant(k, coordinates=[(0, 10)]),
        "x_starts_past_the_end": variant(k, coordinates=[(27, 0)]),
        "wholly_before_both": variant(k, coordinates=[(-8, -4)]),
        "relaunch_same_map": variant(k, coordinates=two, zeroed=False),
        "relaunch_map_zeroed_between": variant(k, coordinates=two),
        "relaunch_fresh_maps": variant(k, coordinates=two, zeroed=False, fresh=True),
        "the_units_64_launches": variant(k, coordinates=UNIT_COORDINATES),
        "64_launches_inside_fresh_maps": variant(k, coordinates=INSIDE_COORDINATES, zeroed=False, fresh=True),
    }


# The difftest unit's box corners before session 4: c0 in [-4, 28), c1 in
# [-4, 14); and corners that start inside the tensor or before it.
UNIT_COORDINATES = [((i * 7919) % 32 - 4, (i * 104729) % 18 - 4) for i in range(64)]
INSIDE_COORDINATES = [((i * 7919) % 28 - 4, (i * 104729) % 14 - 4) for i in range(64)]


def run_one(name):
    v = variants()[name]
    text, driver_map, coordinates, linked = v["text"], v["driver_map"], v["coordinates"], v["linked"]
    cu = ctypes.CDLL("libcuda.so.1")

    def check(rc, what):
        if rc:
            s = ctypes.c_char_p()
            cu.cuGetErrorName(rc, ctypes.byref(s))
            raise RuntimeError(f"{what}: {s.value.decode()}")

    check(cu.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    log = ctypes.create_string_buffer(8192)
    opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, _SIZE_BYTES
    vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    image = text.encode() + b"\0"
    if linked:  # as src/runtime/cuda/jit.cpp compiles: a cubin for CU_JIT_TARGET sm_90a, then loaded
        link, cubin, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
        lopts = (ctypes.c_int * 3)(5, 6, 9)  # ..., CU_JIT_TARGET
        lvals = (ctypes.c_void_p * 3)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192),
                                      ctypes.c_void_p(0x10000 + 90))
        check(cu.cuLinkCreate_v2(3, lopts, lvals, ctypes.byref(link)), "cuLinkCreate")
        check(cu.cuLinkAddData_v2(link, 1, image, ctypes.c_size_t(len(image)), b"probe.ptx", 0, None, None),
              "cuLinkAddData (" + log.value.decode(errors="replace").strip()[:300] + ")")
        check(cu.cuLinkComplete(link, ctypes.byref(cubin), ctypes.byref(size)), "cuLinkComplete")
        image = ctypes.string_at(cubin, size.value)
    rc = cu.cuModuleLoadDataEx(ctypes.byref(module), image, 2, opts, vals)
    if rc:
        check(rc, "cuModuleLoadDataEx (" + log.value.decode(errors="replace").strip()[:300] + ")")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), module, b"built_map"), "cuModuleGetFunction")

    def alloc(data):
        p = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(len(data))), "cuMemAlloc")
        check(cu.cuMemcpyHtoD_v2(p, data, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")
        return p

    import array
    src_host = array.array("f", [float(i) + 0.5 for i in range(ROWS * COLS)])
    src = alloc(src_host.tobytes())
    maps = alloc(bytes(128 * len(coordinates)))
    out = alloc(b"\xff" * (BOX_ROWS * BOX_COLS * 4))
    holder = ctypes.create_string_buffer(256)  # a CUtensorMap is 64-byte aligned
    encoded = ctypes.c_void_p((ctypes.addressof(holder) + 63) // 64 * 64)
    u64s, u32s = ctypes.c_uint64 * 2, ctypes.c_uint32 * 2
    check(cu.cuTensorMapEncodeTiled(encoded, 7, 2, ctypes.c_void_p(src.value), u64s(COLS, ROWS),
                                    (ctypes.c_uint64 * 1)(COLS * 4), u32s(BOX_COLS, BOX_ROWS), u32s(1, 1), 0, 0, 0, 0),
          "cuTensorMapEncodeTiled")
    if driver_map:
        check(cu.cuMemcpyHtoD_v2(maps, encoded, ctypes.c_size_t(128)), "cuMemcpyHtoD map")
    tile = (ctypes.c_float * (BOX_ROWS * BOX_COLS))()
    wrong = []
    for n, (x, y) in enumerate(coordinates):
        if n and v["zeroed"]:  # as the unit did between its launches
            check(cu.cuMemsetD8_v2(maps, 0, ctypes.c_size_t(128)), "cuMemsetD8 map")
            check(cu.cuMemsetD8_v2(out, 0xFF, ctypes.c_size_t(len(tile) * 4)), "cuMemsetD8 out")
        c0, c1 = ctypes.c_int32(x), ctypes.c_int32(y)
        args = [src, ctypes.c_uint64(maps.value + (128 * n if v["fresh"] else 0)), out, c0, c1]
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        check(cu.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, None, params, None), f"cuLaunchKernel {n} ({x}, {y})")
        check(cu.cuCtxSynchronize(), f"kernel {n} at ({x}, {y})")
        check(cu.cuMemcpyDtoH_v2(tile, out, ctypes.c_size_t(len(tile) * 4)), "cuMemcpyDtoH")
        want = [src_host[(y + r) * COLS + x + c] if 0 <= y + r < ROWS and 0 <= x + c < COLS else 0.0
                for r in range(BOX_ROWS) for c in range(BOX_COLS)]
        if list(tile) != want:
            wrong.append(f"({x}, {y}): {list(tile)[:8]}")
    built = (ctypes.c_uint8 * 128)()
    check(cu.cuMemcpyDtoH_v2(built, maps, ctypes.c_size_t(128)), "cuMemcpyDtoH map")
    loaded = f"{len(coordinates)} tiles as expected" if not wrong else f"tiles differ: {wrong[:2]}"
    print(f"{name}: ok, {loaded}")
    print(f"  map in global memory: {bytes(built).hex()}")
    print(f"  cuTensorMapEncodeTiled: {ctypes.string_at(encoded, 128).hex()}  (global address {src.value:#x})")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        try:
            run_one(sys.argv[1])
        except (RuntimeError, OSError) as e:
            print(f"{sys.argv[1]}: FAILED at {e}")
        sys.exit(0)
    for name in variants():
        try:
            r = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, timeout=10)
            print((r.stdout + r.stderr[-500:]).rstrip())
        except subprocess.TimeoutExpired:
            print(f"{name}: HUNG (10 s)")
