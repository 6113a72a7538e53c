"""The driver half of the plugin: active while WARPFORGE_TRITON names a
target, it is warpforge.triton's simulator driver for that target.

Triton takes the one active driver of its backends and refuses to choose
between two ("2 active drivers ... There should only be one"); on a machine
with a GPU its CUDA driver is active too. TRITON_DEFAULT_BACKEND would
choose, but Triton 3.6 does not read it; so while WARPFORGE_TRITON is set the
plugin makes the CUDA driver report itself inactive, in every Triton version
with backend plugins: the variable means "Triton's kernels run on the
simulator", GPU or not."""

import os

import triton.backends.nvidia.driver as _cuda

# The module, not its class: Triton takes the one driver class it finds here.
from .. import driver as _simulator

VARIABLE = "WARPFORGE_TRITON"


class WarpforgeDriver(_simulator.SimulatorDriver):
    """The simulator driver for the target WARPFORGE_TRITON names
    (LaunchError for one it does not know)."""

    def __init__(self):
        super().__init__(os.environ[VARIABLE])

    @staticmethod
    def is_active():
        return bool(os.environ.get(VARIABLE))


def _cuda_active_unless_simulated(cuda_is_active=_cuda.CudaDriver.is_active):
    return not WarpforgeDriver.is_active() and cuda_is_active()


# Triton imports this module while it discovers its backends, before it asks
# any driver whether it is active.
_cuda.CudaDriver.is_active = staticmethod(_cuda_active_unless_simulated)
