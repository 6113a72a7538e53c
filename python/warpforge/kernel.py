"""Kernels written from Python, one call per PTX instruction, as with the
C++ DSL (warpforge.Kernel, bound from C++), and run with warpforge.Module
on a GPU or the simulator:

    k = warpforge.Kernel("fill", "sm_80")
    x = k.param_ptr("x", 4)
    off = k.reg("u64")
    k.mul_wide(off, k.sreg("tid.x"), 4)
    k.st("global", "u32", x + off, 7)
    warpforge.Module(k, warpforge.Device.sim()).launch(1, 32, numpy_uint32_array)

Module.launch takes tensors of any framework (NumPy runs on the simulator)
and Python numbers, and checks each against the kernel's parameters."""

from . import _warpforge
from ._frameworks import current_stream, framework_of, to_tensor


def tensor_map(x, box, swizzle="none", element_strides=()):
    """The TMA tensor map of x (any framework's tensor, its last dimension
    contiguous) on its device, a kernel argument for a `param_bytes(name,
    128, 64)` parameter: box (and element_strides) innermost dimension first,
    as tma_load's coordinates; swizzle 'none', 'b32', 'b64' or 'b128'."""
    return _warpforge.tensor_map(to_tensor(x, "tensor_map"), list(box), swizzle, list(element_strides))


def _dim3(d):
    d = tuple(d) if isinstance(d, (tuple, list)) else (d,)
    if not 1 <= len(d) <= 3:
        raise _warpforge.RuntimeError(f"a grid, block or cluster has 1 to 3 dimensions, got {d}")
    return d + (1,) * (3 - len(d))


def _is_tensor(x):
    return hasattr(x, "__dlpack__")


class Module:
    """A kernel compiled for a device: the first CUDA GPU when there is one,
    else the simulator (or the `device` given)."""

    def __init__(self, kernel, device=None):
        if device is None:
            device = _warpforge.Device.cuda(0) if _warpforge.Device.cuda_count() else _warpforge.Device.sim()
        self._module = _warpforge.Module(kernel, device)

    @property
    def device(self):
        return self._module.device

    def launch(self, grid, block, *args, shared_bytes=0, cluster=(1, 1, 1), stream=None, overlap_previous=False):
        """Runs the kernel: args in the order of its parameters (tensors for
        pointers, ints and floats for scalars), on `stream`, else the current
        stream of the first framework tensor among the args. overlap_previous:
        a programmatic dependent launch (the kernel may start beside the
        stream's previous one; its griddepcontrol.wait orders its memory)."""
        first = next((a for a in args if _is_tensor(a)), None)
        on_device = first is not None and framework_of(first) != "numpy"
        handle = current_stream(first, stream) if on_device or stream is not None else None
        converted = [to_tensor(a, f"argument {i}") if _is_tensor(a) else a for i, a in enumerate(args)]
        self._module.launch(_dim3(grid), _dim3(block), converted, shared_bytes, _dim3(cluster),
                            None if handle is None else int(handle), overlap_previous)

    def max_active_clusters(self, block, cluster=(1, 1, 1), shared_bytes=0):
        """Clusters of `cluster` CTAs of `block` threads and `shared_bytes`
        dynamic shared memory resident on the device at once (one CTA a
        cluster: CTAs): as many as a persistent kernel launches."""
        return self._module.max_active_clusters(_dim3(block), _dim3(cluster), shared_bytes)
