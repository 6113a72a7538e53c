"""warpforge's operations as PyTorch operators: torch.ops.warpforge.gemm_amax
and torch.ops.warpforge.gemm (and convert_amax, the epilogue of
warpforge.distributed's row-parallel GEMM), defined through torch.library with fake
(meta) implementations, so that they trace into torch.compile(fullgraph=True)
graphs, can be captured in CUDA graphs and pass torch.library.opcheck.

Importing warpforge.torch registers them (`import warpforge` does so when
torch is installed). CUDA tensors run on the GPU, on torch's current stream;
CPU tensors run on the simulator. gemm_amax and gemm run C++ kernels
(warpforge._warpforge_torch, built where torch was installed when the package
was built: CPP_KERNELS says whether they are there); without them, the Python
implementations below, at more host time per call (docs/PERFORMANCE.md).

    c, amax = torch.ops.warpforge.gemm_amax(a, b, sfa, sfb, c_dtype=torch.bfloat16)
"""

import importlib
import warnings

import torch

from . import _warpforge
from . import convert_amax as _convert_kernel
from ._frameworks import dtype_name, to_tensor
from .kernel import Module
from .ops import gemm_out_shape

_LIBRARY = torch.library.Library("warpforge", "DEF")
_warpforge.keep_instances_past_exit()
# The kernel choice is `kernel_name` here (`kernel=` in warpforge.gemm_amax):
# Inductor passes an operator's arguments as keywords beside its own
# `kernel`, so an argument of that name breaks torch.compile.
GEMM_AMAX_SCHEMA = (
    "gemm_amax(Tensor a, Tensor b, Tensor sfa, Tensor sfb, str c_major='n', ScalarType? c_dtype=None, "
    "ScalarType? acc_dtype=None, int[]? mma_tiler_mn=None, int[]? cluster_shape_mn=None, int sf_vec_size=32, "
    "str precision='exact', str kernel_name='auto') -> (Tensor, Tensor)")
_LIBRARY.define(GEMM_AMAX_SCHEMA)
_LIBRARY.define("gemm(Tensor a, Tensor b, Tensor? c=None, float alpha=1., float beta=0., "
                "ScalarType? out_dtype=None) -> Tensor")
_LIBRARY.define("convert_amax(Tensor summed, ScalarType c_dtype) -> (Tensor, Tensor)")

try:  # the raw handle of the current stream, without making a Stream object (host overhead)
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - older torch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _c_layout(m, n, l, c_major, packed):
    """gemm_amax's C (shape, strides) as _warpforge.gemm_amax_c_layout gives
    them, written with torch's symbolic sizes for the fake implementation
    (tests check the two agree)."""
    cols = (n + 1) // 2 if packed else n
    strides = (cols, 1, m * cols) if c_major == "n" else (1, m, m * cols)
    return (m, cols, l), strides


def _c_dtype(c_dtype):
    return torch.float32 if c_dtype is None else c_dtype


# The compiled ops and what each call allocates, by everything that fixes
# them: the calls after the first pay for a dict look-up, two allocations and
# one C++ call.
_GEMM_AMAX = {}


def _gemm_amax_entry(key, a, b, sfa, sfb, c_major, c_dtype, acc_dtype, mma_tiler_mn, cluster_shape_mn,
                     sf_vec_size, precision, kernel):
    c_name = dtype_name(c_dtype)
    shape, strides = _warpforge.gemm_amax_c_layout(a.shape[0], b.shape[0], a.shape[2], c_major, c_name)
    c = torch.empty_strided(shape, strides, dtype=c_dtype, device=a.device)
    amax = torch.zeros((1, 1, 1), dtype=torch.float32, device=a.device)
    views = [to_tensor(x, role) for x, role in
             ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))]
    op = _warpforge.gemm_amax_op(
        *views, c_major=c_major, c_dtype=c_name, acc_dtype=dtype_name(acc_dtype or torch.float32),
        mma_tiler_mn=None if mma_tiler_mn is None else tuple(mma_tiler_mn),
        cluster_shape_mn=None if cluster_shape_mn is None else tuple(cluster_shape_mn), sf_vec_size=sf_vec_size,
        precision=precision, kernel=kernel)
    entry = (op, tuple(shape), tuple(strides))
    _GEMM_AMAX[key] = entry
    return entry


def _gemm_amax(a, b, sfa, sfb, c_major="n", c_dtype=None, acc_dtype=None, mma_tiler_mn=None,
               cluster_shape_mn=None, sf_vec_size=32, precision="exact", kernel_name="auto"):
    c_dtype = _c_dtype(c_dtype)
    key = (a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype, sfa.shape, sfa.stride(), sfa.dtype,
           sfb.shape, sfb.stride(), sfb.dtype, a.device, c_major, c_dtype, acc_dtype,
           None if mma_tiler_mn is None else tuple(mma_tiler_mn),
           None if cluster_shape_mn is None else tuple(cluster_shape_mn), sf_vec_size, precision, kernel_name)
    entry = _GEMM_AMAX.get(key) or _gemm_amax_entry(key, a, b, sfa, sfb, c_major, c_dtype, acc_dtype, mma_tiler_mn,
                                                    cluster_shape_mn, sf_vec_size, precision, kernel_name)
    op, shape, strides = entry
    c = torch.empty_strided(shape, strides, dtype=c_dtype, device=a.device)
    if a.is_cuda:
        amax = torch.empty((1, 1, 1), dtype=torch.float32, device=a.device)
        op.execute_addresses((a.data_ptr(), b.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), c.data_ptr(),
                              amax.data_ptr()), stream=_raw_stream(a.device.index), zero_amax=True)
    else:  # host memory: the simulator, through DLPack (it maps each tensor)
        amax = torch.zeros((1, 1, 1), dtype=torch.float32)
        op.execute(*[to_tensor(x, role) for x, role in
                     ((a, "a"), (b, "b"), (sfa, "sfa"), (sfb, "sfb"), (c, "c"), (amax, "amax"))])
    return c, amax


def _gemm_amax_fake(a, b, sfa, sfb, c_major="n", c_dtype=None, acc_dtype=None, mma_tiler_mn=None,
                    cluster_shape_mn=None, sf_vec_size=32, precision="exact", kernel_name="auto"):
    c_dtype = _c_dtype(c_dtype)
    packed = dtype_name(c_dtype) in ("u8", "e2m1")
    shape, strides = _c_layout(a.shape[0], b.shape[0], a.shape[2], c_major, packed)
    return (a.new_empty_strided(shape, strides, dtype=c_dtype),
            a.new_empty((1, 1, 1), dtype=torch.float32))


# D's shape is gemm_out_shape's; the C++ kernel computes it too (tests check
# the two agree).
def _gemm(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None):
    d = torch.empty(gemm_out_shape(a.shape, b.shape), dtype=out_dtype or a.dtype, device=a.device)
    va, vb, vd = to_tensor(a, "a"), to_tensor(b, "b"), to_tensor(d, "d")
    vc = None if c is None else to_tensor(c, "c")
    op = _warpforge.gemm_op(va, vb, vc, vd, alpha=alpha, beta=beta)
    op.execute(va, vb, vc, vd, stream=_raw_stream(a.device.index) if a.is_cuda else None)
    return d


def _gemm_fake(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None):
    return a.new_empty(gemm_out_shape(a.shape, b.shape), dtype=out_dtype or a.dtype)


# The conversion kernels (warpforge.convert_amax) by (C dtype, torch device).
_CONVERT_AMAX = {}


def _dense(t):
    """Whether t's elements fill its memory span exactly, in some order of its dimensions."""
    span = 1
    for stride, size in sorted((st, s) for s, st in zip(t.shape, t.stride()) if s != 1):
        if stride != span:
            return False
        span *= size
    return True


def _check_summed(summed):
    if summed.dtype != torch.float32 or not _dense(summed):
        raise _warpforge.OpsError(
            f"convert_amax takes a dense float32 tensor (any order of its dimensions), got {summed.dtype} of shape "
            f"{tuple(summed.shape)} strides {summed.stride()}")
    if summed.numel() >= 2**32:
        raise _warpforge.OpsError(f"convert_amax takes fewer than 2^32 elements, got {summed.numel()}")


def _convert_amax(summed, c_dtype):
    _check_summed(summed)
    c_name = dtype_name(c_dtype)
    key = (c_name, summed.device)
    module = _CONVERT_AMAX.get(key)
    if module is None:
        device = _warpforge.Device.cuda(summed.device.index) if summed.is_cuda else _warpforge.Device.sim()
        module = _CONVERT_AMAX.setdefault(key, Module(_convert_kernel.build(c_name), device))
    c = torch.empty_strided(summed.shape, summed.stride(), dtype=c_dtype, device=summed.device)
    amax = torch.zeros((1, 1, 1), dtype=torch.float32, device=summed.device)
    module.launch(_convert_kernel.grid(summed.numel()), _convert_kernel.THREADS, summed, c, amax, summed.numel())
    return c, amax


def _convert_amax_fake(summed, c_dtype):
    _check_summed(summed)
    _convert_kernel.check_c_dtype(dtype_name(c_dtype))
    return (summed.new_empty_strided(summed.shape, summed.stride(), dtype=c_dtype),
            summed.new_empty((1, 1, 1), dtype=torch.float32))


torch.library.register_fake("warpforge::gemm_amax", _gemm_amax_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::gemm", _gemm_fake, lib=_LIBRARY)
torch.library.register_fake("warpforge::convert_amax", _convert_amax_fake, lib=_LIBRARY)


def _import_cpp_kernels():
    """Whether warpforge._warpforge_torch registered the C++ kernels of
    gemm_amax and gemm (CUDA and CPU): absent where torch was not there at
    build time; refused (saying why) where it was built against another torch."""
    try:
        importlib.import_module("._warpforge_torch", __package__)
    except ModuleNotFoundError:
        return False
    except ImportError as e:
        warnings.warn(f"warpforge: torch.ops.warpforge.gemm_amax and gemm run their Python implementations: {e}",
                      stacklevel=3)
        return False
    return True


CPP_KERNELS = _import_cpp_kernels()
CPP_GEMM_AMAX = CPP_KERNELS  # its name from before gemm had a C++ kernel
for _key in ("CUDA", "CPU"):
    if not CPP_KERNELS:
        _LIBRARY.impl("gemm_amax", _gemm_amax, _key)
        _LIBRARY.impl("gemm", _gemm, _key)
    _LIBRARY.impl("convert_amax", _convert_amax, _key)

# The grouped GEMM's operators (grouped_mm, grouped_mm_packed): warpforge.grouped_torch.
from .grouped_torch import grouped_mm, grouped_mm_packed  # noqa: E402,F401

gemm_amax = torch.ops.warpforge.gemm_amax
gemm = torch.ops.warpforge.gemm
_DIRECT_GEMM = CPP_KERNELS and importlib.import_module("._warpforge_torch", __package__).gemm


def gemm_call(a, b, c=None, alpha=1.0, beta=0.0, out_dtype=None):
    """gemm's eager call (warpforge.gemm's on torch tensors): the C++ kernel
    without torch.ops' Python packet, schema parsing and boxed dispatch where
    torch need not see the operator (_warpforge_torch.gemm says NotImplemented
    otherwise), else the operator."""
    if _DIRECT_GEMM and not torch.compiler.is_compiling():
        d = _DIRECT_GEMM(a, b, c, alpha, beta, out_dtype)
        if d is not NotImplemented:
            return d
    return gemm(a, b, c, alpha, beta, out_dtype)
# C = S converted to c_dtype (f32, bf16 or f16, rounded to nearest even) and
# amax = max |S| of a dense f32 S, in one kernel (warpforge.convert_amax):
# the epilogue of warpforge.distributed's row-parallel GEMM.
convert_amax = torch.ops.warpforge.convert_amax


# The libraries of the kernels registered below (torch drops an operator
# with its library).
_KERNEL_LIBRARIES = []


def kernel(name, k, grid, block, out_specs, shared_bytes=0):
    """Registers a kernel written with warpforge.Kernel as the operator
    torch.ops.warpforge.<name>(inputs) and returns it. Every parameter of the
    kernel is a pointer: the tensors of `inputs` (a list), then the outputs,
    allocated on the inputs' device from out_specs, a list of (shape, dtype),
    and returned (one tensor, or a tuple). CUDA tensors run on the GPU on
    torch's current stream, CPU tensors on the simulator; the fake
    implementation makes it traceable by torch.compile."""
    library = torch.library.Library("warpforge", "FRAGMENT")
    returns = "Tensor" if len(out_specs) == 1 else "(" + ", ".join(["Tensor"] * len(out_specs)) + ")"
    library.define(f"{name}(Tensor[] inputs) -> {returns}")
    modules = {}  # a Module per torch device

    def outputs(inputs, make):
        made = [make(inputs[0], tuple(shape), dtype) for shape, dtype in out_specs]
        return made[0] if len(made) == 1 else tuple(made)

    def run(inputs):
        like = inputs[0]
        module = modules.get(like.device)
        if module is None:
            device = _warpforge.Device.cuda(like.device.index) if like.is_cuda else _warpforge.Device.sim()
            module = modules.setdefault(like.device, Module(k, device))
        result = outputs(inputs, lambda t, shape, dtype: torch.empty(shape, dtype=dtype, device=t.device))
        module.launch(grid, block, *inputs, *(result if isinstance(result, tuple) else (result,)),
                      shared_bytes=shared_bytes)
        return result

    for key in ("CUDA", "CPU"):
        library.impl(name, run, key)
    torch.library.register_fake(f"warpforge::{name}",
                                lambda inputs: outputs(inputs, lambda t, shape, dtype: t.new_empty(shape, dtype=dtype)),
                                lib=library)
    _KERNEL_LIBRARIES.append(library)
    return getattr(torch.ops.warpforge, name)

# torch.ops.warpforge.attention_forward / attention_backward / attention_decode
# (warpforge.attention's operators, with autograd).
from . import torch_attention  # noqa: E402,F401
# The row ops (normalizations, softmax, SwiGLU, cross-entropy, norm + quantize)
# and their autograd: warpforge/torch_rows.py; their modules: warpforge.nn.
from . import torch_rows  # noqa: E402,F401
