"""The driver half of the plugin: active while WARPFORGE_TRITON names a
target, it is warpforge.triton's simulator driver for that target. On a
machine whose GPU makes Triton's CUDA driver active too, Triton needs to be
told which one to take: the plugin sets TRITON_DEFAULT_BACKEND=warpforge
when WARPFORGE_TRITON is set and the user has not chosen."""

import os

# The module, not its class: Triton takes the one driver class it finds here.
from .. import driver as _simulator

VARIABLE = "WARPFORGE_TRITON"

if os.environ.get(VARIABLE):
    os.environ.setdefault("TRITON_DEFAULT_BACKEND", "warpforge")


class WarpforgeDriver(_simulator.SimulatorDriver):
    """The simulator driver for the target WARPFORGE_TRITON names
    (LaunchError for one it does not know)."""

    def __init__(self):
        super().__init__(os.environ[VARIABLE])

    @staticmethod
    def is_active():
        return bool(os.environ.get(VARIABLE))
