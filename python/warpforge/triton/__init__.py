"""Triton kernels on warpforge's simulator: @triton.jit kernels run on CPU
torch tensors (and NumPy arrays) with the GPU's bits.

    import warpforge.triton
    warpforge.triton.use_simulator("sm_90a")     # or WARPFORGE_TRITON=sm_90a
    add_kernel[grid](x, y, out, n, BLOCK=1024)   # x, y, out: CPU tensors

Triton's own CUDA backend compiles each kernel for the target (no GPU is
needed to compile); the PTX it writes runs on the simulator, which computes
what the GPU computes and reports a fault (an access outside every tensor of
the launch, a shared-memory race, a deadlock) with the Triton source line,
program id and lane (KernelFault).

With the environment variable WARPFORGE_TRITON=sm_80 or sm_90a set, an
installed warpforge registers the simulator as a Triton backend and Triton
uses it without a call (for test suites run unchanged).
"""

from .errors import KernelFault, LaunchError  # noqa: F401

TARGETS = ("sm_80", "sm_90a")


_replaced = []  # the driver Triton had before use_simulator() (None: its default, made when needed)


def use_simulator(target="sm_90a", autotune="all", check_races=True):
    """Makes the simulator Triton's active driver, standing for a GPU of
    `target` ('sm_80': an A100, 'sm_90a': an H100); returns the driver.
    `autotune`: 'all' runs every configuration of an autotuned kernel (each
    once, the fastest on the simulator kept), 'first' takes the first.
    `check_races`: report a race on shared memory as a KernelFault (it costs
    time on every shared-memory access)."""
    import triton

    from .driver import SimulatorDriver

    driver = SimulatorDriver(target, autotune, check_races)
    config = triton.runtime.driver
    if not _replaced:
        _replaced.append(getattr(config, "_active", None))
    config.set_active(driver)
    return driver


def reset():
    """Gives Triton back the driver it had before use_simulator(): its
    default (a GPU's, where there is one), made when next needed."""
    import triton

    if _replaced:
        triton.runtime.driver.set_active(_replaced.pop())


def active_target():
    """The target of the simulator driver Triton is using, or None when
    Triton's active driver is another."""
    import triton

    from .driver import SimulatorDriver

    active = triton.runtime.driver.active
    return active.target if isinstance(active, SimulatorDriver) else None
