"""The launcher of a compiled Triton kernel on a warpforge device: the role
of Triton's CudaLauncher (triton/backends/nvidia/driver.py). Triton's
runtime calls it with the grid and the launch's Python arguments; it loads
the PTX that Triton's CUDA backend wrote for the kernel, places the
arguments in the device's memory and runs the grid there. The device is the
simulator; recording.py also runs it on a GPU (the PTX through the CUDA
driver's JIT), to record what the GPU computes for the same PTX."""

import os

from .. import _warpforge
from . import arguments
from .errors import LaunchError
from .faults import kernel_fault
from .memory import Allocations, live_tensor_storage

# The byte the simulator fills scratch memory with: on a GPU it holds
# whatever was there, and a kernel that reads its scratch before writing it
# should not find zeros.
_SCRATCH_FILL = 0xFF

# Triton's TMA swizzle enum (CUtensorMapSwizzle) in the tensor descriptor
# metadata, as bytes.
_SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
_ELEMENT_DTYPE = {1: "u8", 2: "i16", 4: "u32", 8: "u64"}


def compiled_ptx(metadata):
    """The PTX of a kernel Triton compiled, from Triton's cache, where
    compile() stored each stage of the kernel's lowering beside its cubin."""
    from triton.runtime.cache import get_cache_manager

    cache = get_cache_manager(metadata.hash)
    path = cache.get_file(f"{metadata.name}.ptx")
    if path is None:
        directory = getattr(cache, "cache_dir", None) or ""
        found = [f for f in os.listdir(directory) if f.endswith(".ptx")] if os.path.isdir(directory) else []
        if len(found) != 1:
            raise LaunchError(f"the PTX of Triton kernel '{metadata.name}' is not in Triton's cache "
                              f"({directory or 'no cache directory'}); the simulator runs the PTX, so "
                              "TRITON_STORE_BINARY_ONLY must be unset")
        path = os.path.join(directory, found[0])
    with open(path) as f:
        return f.read(), path


def tensor_map_layout(descriptor, meta, name):
    """What a host-side TensorDescriptor's TMA map holds, from the compiler's
    description of the map: (dtype, dims, strides in bytes, box, swizzle
    bytes), dimensions innermost first as the map orders them."""
    if descriptor.padding != "zero":
        raise LaunchError(f"argument '{name}': TMA padding '{descriptor.padding}' is not simulated (only 'zero')")
    if getattr(descriptor, "round_f32_to_tf32", False) or meta.get("fp4_padded") or meta.get("is_im2col"):
        raise LaunchError(f"argument '{name}': TMA maps rounding to tf32, of padded FP4 or in im2col mode are not "
                          "simulated")
    swizzle = _SWIZZLE_BYTES.get(meta["swizzle"])
    element = meta["elem_size"]
    if swizzle is None or element not in _ELEMENT_DTYPE:
        raise LaunchError(f"argument '{name}': a TMA map with swizzle mode {meta['swizzle']} and {element}-byte "
                          "elements is not simulated")
    shape = [int(x) for x in descriptor.shape]
    strides = [int(x) for x in descriptor.strides]
    return (_ELEMENT_DTYPE[element], shape[::-1], [s * element for s in strides[:-1]][::-1],
            [int(b) for b in meta["block_size"]][::-1], swizzle)


def tensor_map(device, descriptor, meta, name):
    """The 128 bytes of the device's TMA map for a host-side TensorDescriptor."""
    return _warpforge.encode_tensor_map(device, descriptor.base.data_ptr(), *tensor_map_layout(descriptor, meta, name))


class Launcher:
    """Runs one compiled kernel (Triton's `src`, `metadata`) on `device`.
    `observer`, where given, is called before each launch with the launcher,
    the grid and the parameters (arguments.flatten's, then the scratch
    pointers) with their bytes."""

    def __init__(self, src, metadata, device, observer=None):
        self.device = device
        self.observer = observer
        self.name = metadata.name
        self.ptx, ptx_path = compiled_ptx(metadata)
        self.module = _warpforge.PtxModule(self.ptx, ptx_path, device)
        self.ptx_params = self.module.params(self.name)
        self.signature = list(src.signature.values())
        self.arg_names = list(src.signature.keys())
        self.tensordesc_meta = getattr(metadata, "tensordesc_meta", None)
        self.num_ctas = getattr(metadata, "num_ctas", 1)
        self.block = (32 * metadata.num_warps, 1, 1)
        self.shared = metadata.shared
        self.scratch = {"global": getattr(metadata, "global_scratch_size", 0),
                        "profile": getattr(metadata, "profile_scratch_size", 0)}

    def __call__(self, grid_x, grid_y, grid_z, stream, function, packed_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        if grid_x * grid_y * grid_z == 0:
            return  # as the CUDA launcher: an empty grid launches nothing
        if launch_enter_hook is not None:
            launch_enter_hook(launch_metadata)
        programs = grid_x * grid_y * grid_z * self.num_ctas
        grid = (grid_x * self.num_ctas, grid_y, grid_z)
        memory = _warpforge.LaunchMemory(self.device)
        if self.device.is_simulator:
            memory.map_on_demand(live_tensor_storage)
        try:
            params, packed = self.param_bytes(args, memory, programs)
            if self.observer is not None:
                self.observer(self, grid, params, packed)
            self.module.launch(self.name, grid, self.block, self.shared, (self.num_ctas, 1, 1), packed)
        except _warpforge.SimError as e:
            fault = kernel_fault(e)
            if fault is None:
                raise  # not a fault of a running thread: a refusal of the PTX, with its own message
            raise fault from None
        finally:
            if not self.device.is_simulator:
                self.device.synchronize()  # a GPU's launch is queued: its scratch memory is freed after it
            memory.close()
        if launch_exit_hook is not None:
            launch_exit_hook(launch_metadata)

    def param_bytes(self, args, memory, programs):
        """The PTX parameters (arguments.with_scratch's) of a launch of
        `programs` programs, and each one's bytes."""
        flat = arguments.flatten(self.signature, self.arg_names, args, self.tensordesc_meta)
        placed = Allocations(memory, self.device)
        params = arguments.with_scratch(flat, self.ptx_params, self.name)
        out = []
        for p in params:
            if isinstance(p, arguments.Pointer):
                out.append(placed.pointer(p.value, p.name).to_bytes(8, "little"))
            elif isinstance(p, arguments.TensorMap):
                placed.pointer(p.descriptor.base, p.name)
                out.append(tensor_map(self.device, p.descriptor, p.meta, p.name))
            elif isinstance(p, arguments.Scratch):
                size = self.scratch[p.kind] * programs
                address = memory.allocate(size, _SCRATCH_FILL) if size else 0
                out.append(address.to_bytes(8, "little"))
            else:
                out.append(p)
        return params, out
