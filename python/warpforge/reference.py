"""CPU references of warpforge's operations (the C++ library's own, exact:
products decoded exactly, summed in double, rounded once to f32)."""

import numpy as np

from . import _warpforge
from ._frameworks import dtype_name, from_host, to_host


def _bytes(x):
    """x's bytes on the host as uint8 of x's shape and element strides."""
    host = to_host(x)
    return host.view(np.uint8) if host.dtype.itemsize == 1 else host


def gemm_amax(a, b, sfa, sfb, sf_vec_size=32):
    """The f32 accumulator C (M, N, L) and amax of gemm_amax on the same
    inputs, before C's conversion: returned as (c, amax), c of a's framework
    and device, amax a float (NaN when any accumulator is NaN)."""
    acc, batches, rows, cols, amax = _warpforge.gemm_amax_reference(
        _bytes(a), dtype_name(a.dtype), _layout_bytes(sfa), _bytes(b), dtype_name(b.dtype), _layout_bytes(sfb),
        dtype_name(sfa.dtype), sf_vec_size)
    c = np.moveaxis(np.frombuffer(acc, dtype=np.float32).reshape(batches, rows, cols), 0, 2)
    return from_host(a, np.ascontiguousarray(c), "f32"), amax


def _layout_bytes(scales):
    """The 128x4 layout's bytes in memory order, from its 1-D form or the
    6-D view (32, 4, RM, 4, RK, L) with strides (16, 4, RK·512, 1, 512, RM·RK·512)."""
    host = to_host(scales).view(np.uint8)
    order = np.argsort(host.strides)[::-1]
    return np.ascontiguousarray(host.transpose(order)).reshape(-1)
