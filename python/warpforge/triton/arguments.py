"""A Triton kernel's arguments as the bytes of its PTX parameters.

Triton's CUDA launcher (triton/backends/nvidia/driver.py and driver.c)
flattens the Python arguments of a launch by the kernel's signature: tuples
are spread, constexprs dropped, a tensor descriptor becomes a TMA map and its
shape and strides (or, where the compiler lowered it to plain loads, a base
pointer, shape, strides and flags), and each scalar is packed at the width
its type names. After them the PTX takes the global scratch pointer and, in
newer Triton, the profile scratch pointer. This module does the same
flattening, so that the simulator's launcher and the GPU recorder
(recording.py) agree with the GPU on every parameter; it checks the result
against the PTX's own parameter list.
"""

import re
import struct

from .errors import LaunchError

# (struct format, bytes) of each scalar type, as driver.c's extractors
# pack them: i1 and u1 go as 32-bit integers, floats are rounded from the
# Python float (bf16 by cutting an f32's low half, as driver.c does).
_SCALARS = {
    "i1": "<i", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q",
    "u1": "<I", "u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q",
    "fp16": "<e", "fp32": "<f", "f32": "<f", "fp64": "<d",
}


class Pointer:
    """A pointer parameter: the Python object passed (a tensor, None, 0)."""

    def __init__(self, value, name):
        self.value, self.name = value, name


class TensorMap:
    """A TMA descriptor parameter: a host-side TensorDescriptor and the
    compiler's description of its TMA map (swizzle, element size, box)."""

    def __init__(self, descriptor, meta, name):
        self.descriptor, self.meta, self.name = descriptor, meta, name


class Scratch:
    """A scratch pointer the launcher allocates: 'global' or 'profile'."""

    def __init__(self, kind):
        self.kind = kind


def _descriptor_rank(type_name):
    match = re.match(r"tensordesc(?:_im2col)?<[^[>]*\[([^\]]*)\]", type_name)
    if not match:
        raise LaunchError(f"cannot read the tensor descriptor type '{type_name}'")
    rank = re.search(r",input_rank=(\d+)", type_name)
    return int(rank.group(1)) if rank else match.group(1).count(",") + 1


def scalar_bytes(type_name, value, name):
    """The bytes of a scalar argument of Triton type `type_name`."""
    if type_name == "bf16":
        f32 = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        return struct.pack("<H", f32 >> 16)
    fmt = _SCALARS.get(type_name)
    if fmt is None:
        raise LaunchError(f"argument '{name}': Triton type '{type_name}' is not one the simulator's launcher packs "
                          f"(accepted: {', '.join(sorted(_SCALARS))}, bf16, pointers, tensor descriptors)")
    try:
        if fmt[1] in "efd":
            return struct.pack(fmt, float(value))
        return struct.pack(fmt, int(value))
    except (struct.error, OverflowError, TypeError, ValueError) as e:
        raise LaunchError(f"argument '{name}' = {value!r} does not fit Triton type '{type_name}': {e}") from None


def flatten(signature, names, args, tensordesc_meta):
    """The kernel's parameters in PTX order (before the scratch pointers):
    bytes for scalars, Pointer and TensorMap for what the launcher resolves.
    `signature` holds each argument's Triton type (tuples for tuple
    arguments), `names` their names, `args` the values of one launch."""
    meta = list(tensordesc_meta or [])
    lowered_to_loads = not meta
    out = []

    def visit(type_name, value, name):
        if isinstance(type_name, tuple):
            for i, (t, v) in enumerate(zip(type_name, value)):
                visit(t, v, f"{name}[{i}]")
        elif type_name == "constexpr":
            return
        elif type_name.startswith("*"):
            out.append(Pointer(value, name))
        elif type_name.startswith("tensordesc"):
            rank = _descriptor_rank(type_name)
            shape, strides = list(value.shape), list(value.strides)
            if len(shape) != rank:
                raise LaunchError(f"argument '{name}': a tensor descriptor of rank {len(shape)} for a "
                                  f"{rank}-dimensional one")
            if lowered_to_loads:
                # Base, shape and strides as 64-bit integers, then the flags:
                # NaN padding, and where the descriptor has the field (Triton
                # 3.9 has it, 3.6 not), rounding f32 to tf32.
                out.append(Pointer(value.base, name))
                out.extend(struct.pack("<q", int(x)) for x in shape + strides)
                out.append(scalar_bytes("i1", value.padding == "nan", name))
                if hasattr(value, "round_f32_to_tf32"):
                    out.append(scalar_bytes("i1", bool(value.round_f32_to_tf32), name))
            else:
                out.append(TensorMap(value, meta.pop(0), name))
            out.extend(struct.pack("<i", int(x)) for x in shape)
            out.extend(struct.pack("<q", int(x)) for x in strides)
        elif type_name == "nvTmaDesc":
            raise LaunchError(f"argument '{name}': a CUtensorMap built on the host for a GPU; pass a "
                              "triton.tools.tensor_descriptor.TensorDescriptor instead")
        else:
            out.append(scalar_bytes(type_name, value, name))

    for type_name, value, name in zip(signature, args, names):
        visit(type_name, value, name)
    return out


def with_scratch(flat, ptx_params, kernel):
    """`flat` followed by the scratch pointers the PTX takes after the
    arguments (global scratch, then profile scratch), checked against the
    PTX's parameter count and sizes."""
    extra = len(ptx_params) - len(flat)
    if not 0 <= extra <= 2:
        raise LaunchError(f"kernel '{kernel}' takes {len(ptx_params)} PTX parameters; its signature gives "
                          f"{len(flat)} (and Triton adds at most 2 scratch pointers): this Triton's launch ABI is "
                          "not one warpforge.triton knows")
    params = list(flat) + [Scratch(kind) for kind in ("global", "profile")[:extra]]
    for i, (p, (pname, size)) in enumerate(zip(params, ptx_params)):
        if isinstance(p, bytes) and len(p) > size:
            # The driver reads the parameter's size from the value Triton
            # packed (an i1 packed as 32 bits for a .u8 parameter): its low
            # bytes, little-endian.
            params[i] = p = p[:size]
        want = 8 if isinstance(p, (Pointer, Scratch)) else 128 if isinstance(p, TensorMap) else len(p)
        if want != size:
            raise LaunchError(f"kernel '{kernel}': PTX parameter '{pname}' takes {size} bytes; the launcher packed "
                              f"{want}")
    return params
