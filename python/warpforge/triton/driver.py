"""A Triton driver backed by warpforge's simulator.

Triton's runtime asks its active driver (triton.runtime.driver.active) for
the target to compile for, the current device and stream, a launcher for
each compiled kernel and a benchmarker for the autotuner. This driver names
an NVIDIA target (sm_80 or sm_90a), so Triton's own CUDA backend compiles
each kernel to PTX (and to a cubin with the ptxas Triton ships, which needs
no GPU), and it launches that PTX on the simulator with CPU tensors as the
kernel's memory (launcher.py).
"""

import contextlib
import time

from triton.backends.driver import DriverBase

from .. import _warpforge
from .errors import LaunchError
from .launcher import Launcher

# The GPU each target stands for, as Triton's runtime reads it from
# get_device_properties: shared memory per block (opt-in), SMs, registers,
# clocks in kHz and bus width (an A100 SXM4 80GB and an H100 SXM5).
_TARGETS = {
    "sm_80": {"capability": 80, "max_shared_mem": 166912, "multiprocessor_count": 108, "max_num_regs": 65536,
              "warpSize": 32, "sm_clock_rate": 1410000, "mem_clock_rate": 1593000, "mem_bus_width": 5120},
    "sm_90a": {"capability": 90, "max_shared_mem": 232448, "multiprocessor_count": 132, "max_num_regs": 65536,
               "warpSize": 32, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120},
}
TARGETS = tuple(_TARGETS)
AUTOTUNE = ("all", "first")


@contextlib.contextmanager
def installed(driver):
    """Triton's active driver is `driver` inside the block, and after it the
    one before (None: Triton's default, made when next needed)."""
    import triton

    config = triton.runtime.driver
    previous = getattr(config, "_active", None)
    config.set_active(driver)
    try:
        yield driver
    finally:
        config.set_active(previous)


def check_target(target):
    if target not in _TARGETS:
        raise LaunchError(f"target '{target}' is not one the simulator's Triton driver compiles for; accepted: "
                          f"{', '.join(TARGETS)}")
    return target


class _Utils:
    """The `utils` object of a Triton driver: what the compiler and runtime
    call besides the launcher."""

    def __init__(self, target):
        self._properties = dict(_TARGETS[target])
        del self._properties["capability"]

    def get_device_properties(self, device):
        return dict(self._properties)

    def load_binary(self, name, kernel, shared, device):
        # The launcher loads the kernel's PTX itself (the cubin is for a GPU);
        # the function handle Triton keeps is not used. The simulator has no
        # register allocation to report: 0 registers, 0 spills, up to 1024
        # threads a block.
        return None, name, 0, 0, 1024

    def unload_module(self, module):
        pass

    def set_printf_fifo_size(self, size):
        pass  # the simulator formats device printf on the host, unbuffered


class _HostEvent:
    """torch.cuda.Event's timing part, on the host clock (the simulator runs
    each launch as it is issued)."""

    def __init__(self, enable_timing=True):
        self._time = None

    def record(self, stream=None):
        self._time = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end._time - self._time) * 1000.0


class _HostDeviceInterface:
    """The part of torch.cuda that triton.testing.do_bench uses."""

    Event = _HostEvent

    def __init__(self, device):
        self._device = device

    def synchronize(self, device=None):
        pass

    def current_device(self):
        return self._device


# One simulator per (target, race checking): Triton keeps each compiled
# kernel's launcher, and with it the device, for the process's lifetime.
_devices = {}


class SimulatorDriver(DriverBase):
    """The driver use_simulator() installs. `target`: 'sm_80' or 'sm_90a';
    `autotune`: 'all' runs every configuration of an autotuned kernel once
    and keeps the fastest on the simulator, 'first' keeps the first without
    running the others; `check_races`: report races on shared memory."""

    def __init__(self, target="sm_90a", autotune="all", check_races=True):
        self.target = check_target(target)
        if autotune not in AUTOTUNE:
            raise LaunchError(f"autotune='{autotune}': accepted {', '.join(AUTOTUNE)}")
        self.autotune = autotune
        self.check_races = bool(check_races)
        key = (target, self.check_races)
        if key not in _devices:
            _devices[key] = _warpforge.triton_simulator(target, self.check_races)
            _warpforge.keep_instances_past_exit()  # Triton's caches hold our modules until after shutdown
        self._use(_devices[key], f"warpforge-simulator-{target}" + ("" if self.check_races else "-unchecked"))

    def _use(self, device, key):
        """Launches on `device`; `key` is the device's name to Triton's caches."""
        from triton.backends.compiler import GPUTarget

        self.device = device
        self._target = GPUTarget("cuda", _TARGETS[self.target]["capability"], 32)
        self._key = key
        self.utils = _Utils(self.target)

    def launcher_cls(self, src, metadata):
        return Launcher(src, metadata, self.device)

    @staticmethod
    def is_active():
        return True

    def get_current_target(self):
        return self._target

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")

    # Triton keeps compiled kernels per device: a key of its own for each
    # target keeps them apart from a GPU's and from the other target's.
    def get_current_device(self):
        return self._key

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_capability(self, device=None):
        return divmod(_TARGETS[self.target]["capability"], 10)

    def get_device_interface(self):
        return _HostDeviceInterface(self._key)

    def map_python_to_cpp_type(self, ty):
        from triton.backends.nvidia.driver import ty_to_cpp

        return ty_to_cpp(ty)

    def get_benchmarker(self):
        # Triton's autotuner keeps the benchmarker it first gets (a cached
        # property), so the one given reads the autotune mode of whichever
        # driver is active when it runs.
        return _benchmark

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(0, dtype=torch.int8)

    def clear_cache(self, cache):
        pass

    def allocate_default_profile_scratch(self, size, alignment, stream):
        return None  # the launcher allocates scratch in the simulator's memory

    def __repr__(self):
        return (f"warpforge.triton.SimulatorDriver(target='{self.target}', autotune='{self.autotune}', "
                f"check_races={self.check_races})")


def _benchmark(kernel_call, quantiles=None, **kwargs):
    """The autotuner's benchmarker: under autotune='first' every
    configuration ties (the autotuner keeps the first); else one run, timed."""
    import triton

    count = len(quantiles) if quantiles else 1
    if getattr(triton.runtime.driver.active, "autotune", "all") == "first":
        return [0.0] * count
    start = time.perf_counter()
    kernel_call()
    return [(time.perf_counter() - start) * 1000.0] * count
