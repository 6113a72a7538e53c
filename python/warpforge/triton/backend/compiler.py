"""The compiler half of the plugin, which Triton's plugin discovery requires:
Triton's CUDA backend itself, taking no target of its own, so that Triton
keeps compiling with its CUDA backend for the target the simulator's driver
names (make_backend() picks the one backend that supports a target)."""

import triton.backends.nvidia.compiler as _nvidia


class WarpforgeCompiler(_nvidia.CUDABackend):

    @staticmethod
    def supports_target(target):
        return False
