"""Where a launch's pointer arguments point: the host memory of CPU torch
tensors (and of NumPy arrays through torch.from_numpy), which the simulator
addresses at the host's own addresses for the duration of the launch (so an
address the host code wrote into a tensor, as grouped GEMM's tables of
pointers, is valid in the kernel too). Each argument's whole allocation (its storage) is mapped, as a GPU
allocation is addressable whole; a kernel that reaches other host memory
(through an address it read) gets the CPU torch tensor's storage holding it,
found among the live tensors when it first does. An access outside all of
these is reported by the simulator."""

import gc
import sys
import weakref

from .errors import LaunchError


def _torch():
    return sys.modules.get("torch")


def allocation_of(value, name):
    """(pointer, (start, bytes) of the allocation to map, or None for an
    empty tensor) of a pointer argument: a CPU torch tensor (a NumPy array
    through torch.from_numpy, which shares its memory) or a
    triton.reinterpret wrapper of one."""
    torch = _torch()
    tensor = value
    if torch is not None and not isinstance(value, torch.Tensor) and isinstance(getattr(value, "base", None),
                                                                                torch.Tensor):
        tensor = value.base  # triton.TensorWrapper: the tensor, read as another dtype
    if torch is None or not isinstance(tensor, torch.Tensor):
        raise LaunchError(f"argument '{name}': a {type(value).__name__} is not a pointer argument the simulator can "
                          "place; pass a CPU torch tensor (torch.from_numpy for a NumPy array)")
    if tensor.device.type != "cpu":
        raise LaunchError(f"argument '{name}' is a tensor on {tensor.device}; the simulator runs kernels on CPU "
                          "tensors")
    storage = tensor.untyped_storage()
    if storage.nbytes() == 0:
        return value.data_ptr(), None
    return value.data_ptr(), (storage.data_ptr(), storage.nbytes())


# The storages of the CPU tensors alive at the last walk over the live
# objects, by start: (bytes, a weak reference to a tensor viewing it). A
# kernel that reads a table of pointers reaches several tensors, launch after
# launch: one walk finds them all.
_found = {}


def _holding(start, size, address, length):
    return start <= address and address + length <= start + size


def live_tensor_storage(address, size):
    """(start, bytes) of the storage of a live CPU torch tensor that holds
    [address, address + size), or None."""
    torch = _torch()
    if torch is None:
        return None
    for start, (nbytes, ref) in list(_found.items()):
        tensor = ref()
        if tensor is None or tensor.untyped_storage().data_ptr() != start:
            del _found[start]
        elif _holding(start, nbytes, address, size):
            return start, nbytes
    # The youngest objects first: the tensors a table points to were most
    # likely made just before the launch (a process holds 10^5 objects).
    for generation in range(3):
        found = None
        for obj in gc.get_objects(generation):
            if issubclass(type(obj), torch.Tensor) and obj.device.type == "cpu":
                try:
                    storage = obj.untyped_storage()
                    start, nbytes = storage.data_ptr(), storage.nbytes()
                except RuntimeError:
                    continue  # a tensor without memory: torch.compile's fake and functional tensors
                if nbytes:
                    _found[start] = (nbytes, weakref.ref(obj))
                    if _holding(start, nbytes, address, size):
                        found = start, nbytes
        if found:
            return found
    return None


class Allocations:
    """The allocations of one launch on `device`, each mapped once (views of
    one tensor share its storage). On a GPU (recording.py) a pointer is the
    CUDA tensor's own address."""

    def __init__(self, memory, device):
        self._memory = memory
        self._simulator = device.is_simulator
        self._mapped = {}

    def pointer(self, value, name):
        if not self._simulator:
            tensor = getattr(value, "base", value) if not hasattr(value, "device") else value
            if getattr(getattr(tensor, "device", None), "type", None) != "cuda":
                raise LaunchError(f"argument '{name}': a launch on a GPU takes CUDA tensors")
            return value.data_ptr()
        address, allocation = allocation_of(value, name)
        if allocation is not None:
            start, size = allocation
            known = self._mapped.get(start)
            if known is None:
                self._memory.map(start, size)
                self._mapped[start] = size
            elif known != size:
                raise LaunchError(f"argument '{name}': two allocations at {start:#x} of {known} and {size} bytes")
        return address
