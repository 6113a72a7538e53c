"""The epilogue of a row-parallel GEMM + amax, as one kernel written with
warpforge.Kernel: C = convert(S) and amax = max |S| over an f32 tensor S
(the partial products of the ranks, summed by the collective), with the
single-device op's semantics: C rounded to nearest even, amax taken on the
f32 values before the conversion, NaN above every number.

One thread per element, 256 to a CTA: the maximum of |S| goes warp
(redux.sync) -> CTA (red.shared.max) -> amax (red.global.max), on the bits of
|S|, whose unsigned order is the order of the magnitudes (the single-device
op folds its amax the same way). amax must hold 0 before the launch."""

from . import _warpforge
from ._warpforge import Kernel, Redux, Round, at, f32

THREADS = 256

# The C dtypes this kernel writes, with each one's element size in bytes.
# FP8 and FP4 need a minifloat encoder (sm_80 has no cvt to them; PTX ISA
# 9.7.9.21 puts e4m3x2 at sm_89 and e2m1x2 at sm_100a), not written here yet.
C_BYTES = {"f32": 4, "bf16": 2, "f16": 2}


def check_c_dtype(c_name):
    if c_name not in C_BYTES:
        raise _warpforge.OpsError(
            f"c_dtype {c_name}: the row-parallel conversion writes f32, bf16 or f16 C (e4m3, e5m2 and FP4 C "
            "are left to the single-device op and column-parallel)")


def build(c_name):
    """The kernel for C of warpforge dtype c_name (f32, bf16 or f16); its
    parameters: S (f32*), C, amax (f32*, zeroed), count (u32, elements of S
    and C, which share one layout)."""
    check_c_dtype(c_name)
    k = Kernel(f"convert_amax_{c_name}", "sm_80")
    summed, c, amax = k.param_ptr("summed", 4), k.param_ptr("c", C_BYTES[c_name]), k.param_ptr("amax", 4)
    count = k.param("u32", "count")
    k.reqntid(THREADS)
    cta_max = k.shared("cta_max", 4, 4)
    tid = k.sreg("tid.x")
    first_thread = tid.eq(0)
    k.guarded(first_thread, lambda: k.st("shared", "u32", k.address_of(cta_max), 0))

    i = k.reg("u32")
    k.mad(i, k.sreg("ctaid.x"), THREADS, tid)
    inside = i < count
    v = k.mov("f32", f32(0.0))
    offset = k.reg("u64")
    k.mul_wide(offset, i, 4)
    k.guarded(inside, lambda: k.ld("global", "f32", v, summed + offset))

    bits = k.reg("b32")
    k.mov(bits, v)
    magnitude = k.reg("u32")
    k.and_(magnitude, bits, 0x7FFFFFFF)
    kept = k.selp(magnitude, 0, inside)
    # Every lane takes part in redux.sync, those past the end with 0.
    warp_max = k.reg("u32")
    k.redux_sync(Redux.max, warp_max, kept)
    k.bar_sync()  # cta_max is zero before any warp folds into it
    k.guarded(k.sreg("laneid").eq(0), lambda: k.inst("red.shared.max.u32", at(k.address_of(cta_max)), warp_max))

    element_bytes = C_BYTES[c_name]
    c_offset = k.reg("u64")
    k.mul_wide(c_offset, i, element_bytes)
    if c_name == "f32":
        k.guarded(inside, lambda: k.st("global", "f32", c + c_offset, v))
    else:
        narrow = k.reg(c_name)
        k.cvt(narrow, v, round=Round.rn)
        k.guarded(inside, lambda: k.st("global", "b16", c + c_offset, narrow))

    k.bar_sync()  # every warp has folded its maximum into cta_max

    def flush():
        total = k.reg("u32")
        k.ld("shared", "u32", total, k.address_of(cta_max))
        k.inst("red.global.max.u32", at(amax), total)

    k.guarded(first_thread, flush)
    return k


def grid(count):
    return (max(1, -(-count // THREADS)),)
