"""warpforge's simulator as a Triton backend plugin, so that a process
started with WARPFORGE_TRITON=sm_80 or sm_90a runs its Triton kernels on the
simulator without a call (test suites run unchanged).

The installed package registers it under Triton's entry-point group
"triton.backends" as "warpforge" (pyproject.toml). Triton imports this
package's compiler and driver modules when it is imported; the driver is
active only while WARPFORGE_TRITON is set. The kernels are compiled by
Triton's own CUDA backend (compiler.py says why there is a compiler here at
all) and launched by warpforge.triton's driver.
"""
