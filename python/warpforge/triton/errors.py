"""warpforge.triton's errors, in warpforge's hierarchy (warpforge.Error)."""

from .. import _warpforge


class LaunchError(_warpforge.RuntimeError):
    """A launch the simulator's Triton driver refuses before running it: an
    argument it cannot place in the simulator's memory (a GPU tensor, a raw
    address), a value that does not fit its parameter, a Triton feature it
    does not support. The message names the argument and what is accepted."""


class KernelFault(_warpforge.SimError):
    """A fault while a Triton kernel ran on the simulator (an access outside
    every tensor of the launch, a misaligned access, a shared-memory race,
    a deadlock), with where it happened in the kernel's Triton source.

    Attributes (None where the simulator's report has no such part):
      kernel       the kernel's name
      source       "file:line:column" of the Triton source, from the PTX's
                   line information: the kernel's own line
      inlined      the position inside a function inlined there (a
                   triton.language function, a @triton.jit helper), or None
      source_text  that line of the source file, stripped
      program_id   (x, y, z): tl.program_id of the faulting program
      thread       the thread's index in its program (0 .. num_warps*32-1)
      warp, lane   the thread's warp and lane
      ptx_line     the line of the instruction in the PTX the simulator ran
      instruction  that PTX instruction
      detail       what went wrong, as the simulator said it
    """

    def __init__(self, message, **fields):
        super().__init__(message)
        for name in ("kernel", "source", "inlined", "source_text", "program_id", "thread", "warp", "lane", "ptx_line",
                     "instruction", "detail"):
            setattr(self, name, fields.get(name))
