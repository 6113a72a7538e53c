"""Marshalling between the frameworks' tensors and warpforge's: which
framework a tensor comes from, its dtype's warpforge name, the DLPack import
(integer views for dtypes a producer has no DLPack code for), outputs
allocated as the caller's framework type, and the caller's current stream."""

import numpy as np

from . import _warpforge

# warpforge dtype names by the frameworks' own dtype names (str(torch dtype)
# without "torch.", numpy/ml_dtypes/JAX dtype names). FP4 travels packed two
# to a byte, as the cuDNN frontend passes it: torch.float4_e2m1fn_x2 or uint8.
_NAMES = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float8_e8m0fnu": "e8m0",
    "float4_e2m1fn_x2": "u8",
    "uint8": "u8",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "uint32": "u32",
    "int64": "i64",
    "uint64": "u64",
}
_WARPFORGE_NAMES = set(_NAMES.values()) | {"e2m1"}

# Dtypes some producers cannot put in a DLPack capsule (NumPy: any ml_dtypes
# type; older torch: the float8 types): they travel as the integer of their
# width and are read back as themselves.
_AS_INTEGER = {"e4m3": "uint8", "e5m2": "uint8", "e8m0": "uint8", "bf16": "int16"}


def framework_of(x):
    """'torch', 'numpy', 'cupy' or 'jax'; refuses anything else, naming it."""
    root = type(x).__module__.split(".")[0]
    if root in ("torch", "numpy", "cupy"):
        return root
    if root in ("jax", "jaxlib"):
        return "jax"
    if hasattr(x, "__dlpack__"):
        return "dlpack"
    raise _warpforge.RuntimeError(
        f"{type(x).__module__}.{type(x).__name__} is not a tensor: pass a torch.Tensor, jax.Array, CuPy or "
        "NumPy array, or any object with __dlpack__")


def dtype_name(dtype):
    """The warpforge name of a framework dtype (or of a warpforge name)."""
    if isinstance(dtype, str) and dtype in _WARPFORGE_NAMES:
        return dtype
    text = str(dtype).replace("torch.", "")
    if text not in _NAMES:
        try:
            text = np.dtype(dtype).name
        except TypeError:
            pass
    if text == "float4_e2m1fn":
        raise _warpforge.RuntimeError(
            "dtype float4_e2m1fn holds one FP4 value per byte; warpforge takes FP4 packed two per byte "
            "(uint8 or torch.float4_e2m1fn_x2, the lower K index in the low nibble)")
    if text not in _NAMES:
        raise _warpforge.RuntimeError(
            f"dtype {dtype} has no warpforge dtype; accepted: {', '.join(sorted(_NAMES))} "
            "(torch, NumPy/ml_dtypes or JAX spellings)")
    return _NAMES[text]


def current_stream(x, stream=None):
    """The native stream handle work on x goes on: `stream` when given (an
    int, or an object with .cuda_stream or .ptr), else the framework's
    current stream; None on the host."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        return int(stream)
    fw = framework_of(x)
    if fw == "torch" and x.is_cuda:
        import torch

        return torch.cuda.current_stream(x.device).cuda_stream
    if fw == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return None


def untraced_torch_tensor(t):
    """Whether a call on torch tensor t may skip torch's dispatcher: a plain
    tensor (not a FakeTensor or FunctionalTensor, which AOTAutograd traces a
    backward with, outside Dynamo), outside torch.compile's tracing (tested
    first: Dynamo folds it) and any torch function or dispatch mode (which
    must see the operator)."""
    import torch
    return not torch.compiler.is_compiling() and type(t) is torch.Tensor \
        and not torch._C._is_torch_function_mode_enabled() and torch._C._len_torch_dispatch_stack() == 0


def to_tensor(x, role):
    """A warpforge Tensor sharing x's memory (no copy)."""
    fw = framework_of(x)
    name = dtype_name(x.dtype)
    as_dtype = None
    if name in _AS_INTEGER and fw in ("numpy", "torch", "cupy"):
        as_dtype = name
        x = _integer_view(x, fw, _AS_INTEGER[name])
    elif name == "u8" and fw == "torch" and str(x.dtype) == "torch.float4_e2m1fn_x2":
        x = _integer_view(x, fw, "uint8")
    if fw == "torch" and x.is_cuda:
        # -1: no synchronization; the work runs on the caller's current stream.
        capsule = x.__dlpack__(stream=-1)
    else:
        capsule = x.__dlpack__()
    return _warpforge.from_dlpack(capsule, as_dtype, role)


def _integer_view(x, fw, integer):
    if fw == "torch":
        import torch

        return x.view(getattr(torch, integer))
    return x.view(integer)


def framework_dtype(fw, name):
    """The framework's dtype for a warpforge dtype name (FP4: packed bytes)."""
    if fw == "torch":
        import torch

        table = {
            "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "u8": torch.uint8,
            "i8": torch.int8, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
            "e2m1": getattr(torch, "float4_e2m1fn_x2", torch.uint8),
            "e8m0": getattr(torch, "float8_e8m0fnu", torch.uint8),
        }
        return table[name]
    if name in ("bf16", "e4m3", "e5m2", "e8m0"):
        import ml_dtypes

        return {"bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
                "e8m0": ml_dtypes.float8_e8m0fnu}[name]
    return {"f32": np.float32, "f16": np.float16, "u8": np.uint8, "i8": np.int8, "e2m1": np.uint8}[name]


def empty_strided(like, shape, strides, name):
    """An uninitialised tensor of the framework and device of `like`."""
    fw = framework_of(like)
    dtype = framework_dtype(fw, name)
    if fw == "torch":
        import torch

        return torch.empty_strided(shape, strides, dtype=dtype, device=like.device)
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            base = cupy.empty(_span(shape, strides), dtype=dtype)
        return cupy.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])
    if fw == "numpy":
        base = np.empty(_span(shape, strides), dtype=dtype)
        return np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])
    raise _warpforge.RuntimeError(
        f"outputs for {fw} tensors are not allocated here; JAX arrays go through warpforge.jax")


def zeros(like, shape, name):
    fw = framework_of(like)
    dtype = framework_dtype(fw, name)
    if fw == "torch":
        import torch

        return torch.zeros(shape, dtype=dtype, device=like.device)
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.zeros(shape, dtype=dtype)
    return np.zeros(shape, dtype=dtype)


def _span(shape, strides):
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0


def to_host(x):
    """x's values as a NumPy array in host memory (a copy for device tensors)."""
    fw = framework_of(x)
    if fw == "torch":
        return _host_torch(x)
    if fw == "cupy":
        return x.get()
    return np.asarray(x)


def _host_torch(x):
    name = dtype_name(x.dtype)
    x = x.detach().cpu()
    if name in _AS_INTEGER or str(x.dtype) == "torch.float4_e2m1fn_x2":
        raw = _integer_view(x, "torch", _AS_INTEGER.get(name, "uint8")).numpy()
        return raw.view(framework_dtype("numpy", name)) if name in _AS_INTEGER else raw
    return x.numpy()


def from_host(like, array, name):
    """A host array of warpforge dtype `name` as the framework (and device) of `like`."""
    fw = framework_of(like)
    if fw == "torch":
        import torch

        raw = array.view(_AS_INTEGER[name]) if name in _AS_INTEGER else array
        t = torch.from_numpy(raw).to(like.device)
        return t.view(framework_dtype("torch", name)) if name in _AS_INTEGER or name == "e2m1" else t
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(array)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.asarray(array)
    return array
