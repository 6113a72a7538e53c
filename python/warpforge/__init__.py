"""warpforge from Python: block-scaled GEMM + amax and GEMM on torch, JAX,
CuPy and NumPy tensors (NumPy runs on the CPU simulator), kernels written
one PTX instruction per call, and the C++ library's errors as exceptions.

    import warpforge
    c, amax = warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
    k = warpforge.Kernel("scale", "sm_80")   # one call per PTX instruction
    warpforge.Module(k).launch(grid, block, *args)
"""

# The extension module is built beside this package by `pip install .`, and
# into <build>/python/warpforge by the CMake build, which puts both folders on
# PYTHONPATH for the tests: extend_path lets one package span them.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from . import _warpforge  # noqa: E402
from ._warpforge import (  # noqa: E402,F401
    CudaError,
    Device,
    DslError,
    Error,
    LayoutError,
    OpsError,
    ParseError,
    PtxError,
    RuntimeError,
    SimError,
    TargetError,
    TileError,
    ToolchainError,
)
from ._warpforge import (  # noqa: E402,F401  (the kernel DSL)
    Cache, Cmp, CpAsyncCache, FenceSem, Kernel, MembarLevel, MmaShape, Redux, Round, Scope, Shfl, WgmmaMajor,
    at, f32, f64)
from .kernel import Module, tensor_map  # noqa: E402,F401
from .instructions import Mod, Opcode  # noqa: E402,F401  (k.op: every PTX instruction)
from . import tile  # noqa: E402,F401  (the warp-specialized template from Python)
from ._warpforge import layout  # noqa: E402,F401  (the layout algebra)
from .ops import Gemm, GemmAmax, gemm, gemm_amax, quantize  # noqa: E402,F401
from .attention import attention, attention_decode  # noqa: E402,F401
from .grouped import PackedWeights, grouped_mm, grouped_mm_amax, prepack_weights, quantize_weights  # noqa: E402,F401
from .rows import cross_entropy, layer_norm, rms_norm, rms_norm_quantize, softmax, swiglu  # noqa: E402,F401
from . import reference  # noqa: E402,F401

# torch.ops.warpforge.* exist once warpforge.torch is imported: done here when
# the caller has already imported torch (importing it ourselves would cost
# every user of NumPy or JAX a second); `import warpforge.torch` does it
# explicitly.
import sys as _sys  # noqa: E402

if "torch" in _sys.modules:
    from . import torch as _torch_ops  # noqa: F401
