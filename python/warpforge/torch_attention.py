"""Attention as PyTorch operators: torch.ops.warpforge.attention_forward
(with autograd through attention_backward), attention_backward and
attention_decode, defined through torch.library with fake implementations,
so they trace into torch.compile(fullgraph=True) graphs, can be captured in
CUDA graphs (every buffer, the workspace included, is allocated by torch) and
pass torch.library.opcheck. warpforge.torch imports this module; callers use
warpforge.attention. CUDA tensors run on torch's current stream, CPU tensors
on the simulator. The log-sum-exp output is not differentiable (as in
FlashAttention).
"""

import atexit
import importlib

import torch

from . import _warpforge
from . import torch as _torch_ops  # noqa: F401  (first: it imports the C++ kernels, _warpforge_torch)
from ._frameworks import to_tensor, untraced_torch_tensor

_LIBRARY = torch.library.Library("warpforge", "FRAGMENT")
# The kernel choice is `kernel_name` (Inductor passes an operator's arguments
# as keywords beside its own `kernel`).
_MASK = ("Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, int max_seqlen_q, int max_seqlen_k, float? scale, "
         "int window_left, int window_right, bool top_left")
# deterministic is the backward's (saved for it by autograd).
_LIBRARY.define(f"attention_forward(Tensor q, Tensor k, Tensor v, {_MASK}, bool deterministic=False, "
                "str kernel_name='auto') -> (Tensor, Tensor)")
_LIBRARY.define(f"attention_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse, {_MASK}, "
                "bool deterministic=False, str kernel_name='auto') -> (Tensor, Tensor, Tensor)")
_LIBRARY.define("attention_decode(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, Tensor kv_lens, "
                "float? scale=None, bool causal=True, int window_left=-1, int splits=0) -> (Tensor, Tensor)")


def _stream(t):
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else None


def _ready(t):
    """t as the kernels take it: head_dim contiguous, other strides multiples
    of 8 elements, 16-byte aligned (a copy only where it is not)."""
    if t.stride(-1) == 1 and all(s % 8 == 0 for s, n in zip(t.stride()[:-1], t.shape[:-1]) if n > 1) \
            and t.data_ptr() % 16 == 0:
        return t
    return t.contiguous() if t.data_ptr() % 16 == 0 or not t.is_contiguous() else t.clone()


def _lse_shape(q, varlen):
    return (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[1], q.shape[2])


def _output_like(x):
    """An output of x's shape and dtype in x's layout where x is dense, else contiguous."""
    return torch.empty_like(x)


def _views(*tensors):
    return [to_tensor(t, "tensor") for t in tensors]


def _cu(c, role):
    return None if c is None else to_tensor(c, role)


# The compiled forward and backward ops by everything that fixes them, as
# _DECODE below: a call after the first pays a dict look-up, its allocations
# and one C++ call with data addresses (CUDA).
_OPS = {}
atexit.register(_OPS.clear)  # the ops go before the extension checks for leaks


def _op_key(tensors, *options):
    return tuple(None if t is None else (t.shape, t.stride(), t.dtype, t.data_ptr() % 16) for t in tensors) + \
        (tensors[0].device,) + options


def _op(key, tensors, cu_q, cu_k, backward, scale, window_left, window_right, top_left, max_seqlen_q, max_seqlen_k,
        deterministic, kernel_name):
    entry = _OPS.get(key)
    if entry is None:
        views = _views(*tensors)
        op = _warpforge.attention_op(views, _cu(cu_q, "cu_seqlens_q"), _cu(cu_k, "cu_seqlens_k"), True, backward,
                                     scale, False, window_left, window_right, top_left, max_seqlen_q, max_seqlen_k,
                                     deterministic, kernel_name, backward)
        entry = _OPS[key] = (op, max(op.workspace_bytes, 16))
    return entry


def _execute(op, tensors, cu_q, cu_k, workspace):
    q = tensors[0]
    if q.is_cuda:
        op.execute_addresses([t.data_ptr() for t in tensors], 0 if cu_q is None else cu_q.data_ptr(),
                             0 if cu_k is None else cu_k.data_ptr(), 0 if workspace is None else workspace.data_ptr(),
                             _stream(q))
    else:  # host memory: the simulator, through DLPack (it maps each tensor)
        op.execute(_views(*tensors), _cu(cu_q, "cu_seqlens_q"), _cu(cu_k, "cu_seqlens_k"), True,
                   None if workspace is None else to_tensor(workspace, "workspace"), None)


def _forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left, window_right,
             top_left, deterministic=False, kernel_name="auto"):
    q, k, v = _ready(q), _ready(k), _ready(v)
    out = _output_like(q)
    lse = torch.empty(_lse_shape(q, cu_seqlens_q is not None), dtype=torch.float32, device=q.device)
    tensors = (q, k, v, out, lse)
    options = (scale, window_left, window_right, top_left, max_seqlen_q, max_seqlen_k, False, kernel_name)
    op, _ = _op(_op_key(tensors + (cu_seqlens_q, cu_seqlens_k), False, *options), tensors, cu_seqlens_q, cu_seqlens_k,
                False, *options)
    _execute(op, tensors, cu_seqlens_q, cu_seqlens_k, None)
    return out, lse


def _forward_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left, window_right,
                  top_left, deterministic=False, kernel_name="auto"):
    return torch.empty_like(q), q.new_empty(_lse_shape(q, cu_seqlens_q is not None), dtype=torch.float32)


def _backward(grad_out, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
              window_left, window_right, top_left, deterministic=False, kernel_name="auto"):
    grad_out, q, k, v, out = (_ready(t) for t in (grad_out, q, k, v, out))
    dq, dk, dv = _output_like(q), _output_like(k), _output_like(v)
    tensors = (q, k, v, out, lse, grad_out, dq, dk, dv)
    options = (scale, window_left, window_right, top_left, max_seqlen_q, max_seqlen_k, deterministic, kernel_name)
    op, workspace_bytes = _op(_op_key(tensors + (cu_seqlens_q, cu_seqlens_k), True, *options), tensors, cu_seqlens_q,
                              cu_seqlens_k, True, *options)
    workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device=q.device)
    _execute(op, tensors, cu_seqlens_q, cu_seqlens_k, workspace)
    return dq, dk, dv


def _backward_fake(grad_out, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                   window_left, window_right, top_left, deterministic=False, kernel_name="auto"):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx, inputs, output):
    q, k, v, cu_q, cu_k, max_q, max_k, scale, left, right, top_left, deterministic, kernel_name = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
    ctx.options = (max_q, max_k, scale, left, right, top_left, deterministic, kernel_name)
    ctx.mark_non_differentiable(lse)


def _autograd_backward(ctx, grad_out, grad_lse):
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    max_q, max_k, scale, left, right, top_left, deterministic, kernel_name = ctx.options
    dq, dk, dv = torch.ops.warpforge.attention_backward(grad_out, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale,
                                                        left, right, top_left, deterministic=deterministic,
                                                        kernel_name=kernel_name)
    return dq, dk, dv, None, None, None, None, None, None, None, None, None, None


# The compiled decode ops by everything that fixes them (the inputs' shapes,
# strides, dtypes and alignment mod 16, the device, the options; O and lse
# are made from q, so q fixes theirs): a call after the first pays the key,
# its allocations (O, and lse where wanted) and one C++ call with the data addresses (CUDA; no
# DLPack exchange, no key built in C++). The splits' workspace is kept with
# the op, one a stream (calls on one stream run in order), except under CUDA
# graph capture, where torch allocates it in the graph's pool.
_DECODE = {}
atexit.register(_DECODE.clear)


class _DecodeEntry:
    __slots__ = ("op", "workspace_bytes", "workspaces")

    def __init__(self, op):
        self.op, self.workspace_bytes, self.workspaces = op, max(op.workspace_bytes, 16), {}

    def workspace(self, like, stream):
        """On like's device, zero-filled before its first use: the splits'
        counters start at zero, and every run leaves them so."""
        if stream is None or torch._C._cuda_isCurrentStreamCapturing():
            return torch.zeros(self.workspace_bytes, dtype=torch.uint8, device=like.device)
        w = self.workspaces.get(stream)
        if w is None:
            w = self.workspaces[stream] = torch.zeros(self.workspace_bytes, dtype=torch.uint8, device=like.device)
        return w


def _decode_key(q, k_cache, v_cache, block_table, kv_lens, options):
    """The cache key of a decode call (flat: one tuple, hashed on each call)
    and the inputs' data addresses."""
    addresses = [q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), block_table.data_ptr(), kv_lens.data_ptr()]
    return (q.shape, q.stride(), q.dtype, k_cache.shape, k_cache.stride(), k_cache.dtype, v_cache.shape,
            v_cache.stride(), v_cache.dtype, block_table.shape, block_table.stride(), block_table.dtype, kv_lens.shape,
            kv_lens.stride(), kv_lens.dtype, addresses[0] % 16, (addresses[1] | addresses[2]) % 16,
            (addresses[3] | addresses[4]) % 4, q.get_device()) + options, addresses


def _decode(q, k_cache, v_cache, block_table, kv_lens, scale=None, causal=True, window_left=-1, splits=0,
            with_lse=True):
    """(O, lse); with_lse False (the direct path, when the caller drops
    lse): (O, None), from an op that writes no lse (an allocation less)."""
    options = (scale, causal, window_left, splits)
    key, addresses = _decode_key(q, k_cache, v_cache, block_table, kv_lens, options + (with_lse,))
    entry = _DECODE.get(key)
    if entry is None:  # (whether q is ready follows from the key: an entry's q is)
        ready = _ready(q)
        if ready is not q:  # the op of the copy's description
            return _decode(ready, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits, with_lse)
    out = torch.empty_like(q)
    outputs = (out, torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)) if with_lse else (out,)
    if entry is None:
        views = _views(q, k_cache, v_cache, block_table, kv_lens, *outputs)
        entry = _DECODE[key] = _DecodeEntry(_warpforge.attention_decode_op(views, *options, True))
    if q.is_cuda:
        stream = torch._C._cuda_getCurrentRawStream(q.get_device())
        addresses += [t.data_ptr() for t in outputs]
        entry.op.execute_addresses(addresses, entry.workspace(q, stream).data_ptr(), stream)
    else:  # host memory: the simulator, through DLPack (it maps each tensor)
        entry.op.execute(_views(q, k_cache, v_cache, block_table, kv_lens, *outputs),
                         to_tensor(entry.workspace(q, None), "workspace"), None)
    return out, outputs[1] if with_lse else None


def _decode_fake(q, k_cache, v_cache, block_table, kv_lens, scale=None, causal=True, window_left=-1, splits=0):
    return torch.empty_like(q), q.new_empty(tuple(q.shape[:3]), dtype=torch.float32)


# attention_forward's C++ kernels and autograd, and attention_backward's
# kernels (warpforge._warpforge_torch, which warpforge.torch imported) where
# that module was built: a call then never enters Python. The Python ones
# above otherwise, the same semantics.
CPP_FORWARD = torch._C._dispatch_has_kernel_for_dispatch_key("warpforge::attention_forward", "CUDA")
CPP_BACKWARD = torch._C._dispatch_has_kernel_for_dispatch_key("warpforge::attention_backward", "CUDA")
for _name, _impl, _fake in (("attention_forward", _forward, _forward_fake),
                            ("attention_backward", _backward, _backward_fake),
                            ("attention_decode", _decode, _decode_fake)):
    if not {"attention_forward": CPP_FORWARD, "attention_backward": CPP_BACKWARD}.get(_name, False):
        for _key in ("CUDA", "CPU"):
            _LIBRARY.impl(_name, _impl, _key)
    torch.library.register_fake(f"warpforge::{_name}", _fake, lib=_LIBRARY)
if not CPP_FORWARD:
    torch.library.register_autograd("warpforge::attention_forward", _autograd_backward, setup_context=_setup_context,
                                    lib=_LIBRARY)

attention_forward = torch.ops.warpforge.attention_forward
attention_backward = torch.ops.warpforge.attention_backward
attention_decode_op = torch.ops.warpforge.attention_decode


# The forward's direct call (warpforge._warpforge_torch.attention_forward, where
# built): the operator's autograd kernel without torch.ops' schema parsing and
# boxing; NotImplemented where torch must see the operator (torch_ops.cpp's plain_call).
_CPP_FORWARD = CPP_FORWARD and importlib.import_module("._warpforge_torch", __package__).attention_forward


def attention(q, k, v, scale, window_left, window_right, top_left, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
              max_seqlen_k, deterministic, kernel):
    """warpforge.attention on torch tensors: (out, lse), differentiable in q, k, v
    (through the direct call, else the overload itself: the packet's resolution
    costs a call ~3 us)."""
    if _CPP_FORWARD and not torch.compiler.is_compiling():
        out = _CPP_FORWARD(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, window_left,
                           window_right, top_left, deterministic, kernel)
        if out is not NotImplemented:
            return out
    return attention_forward.default(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                                     window_left, window_right, top_left, deterministic, kernel)


def _plain_eager(q):
    """Whether a call on q may skip torch's dispatcher (untraced_torch_tensor)
    and needs no gradient. The dispatcher's Python round trip is ~10 us of a
    decode call's host time."""
    return untraced_torch_tensor(q) and not q.requires_grad


# The direct call's C++ kernel (warpforge._warpforge_torch.attention_decode,
# where that module was built): key, O's allocation and launch in C++.
_CPP_DECODE = _torch_ops.CPP_KERNELS and importlib.import_module("._warpforge_torch", __package__).attention_decode


def attention_decode(q, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits, with_lse=True):
    """(O, lse); (O, None) where with_lse is False and the call takes the
    direct path: in C++ where built (which checks the tensors and modes
    itself, and answers NotImplemented where torch must see the operator),
    but while a CUDA graph is captured (the workspace then comes from the
    graph's pool, each call its own)."""
    if _CPP_DECODE and not torch.compiler.is_compiling() and not q.requires_grad \
            and not (q.is_cuda and torch._C._cuda_isCurrentStreamCapturing()):
        out = _CPP_DECODE(q, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits, with_lse)
        if out is not NotImplemented:
            return out
    if _plain_eager(q):
        return _decode(q, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits, with_lse)
    return attention_decode_op(q, k_cache, v_cache, block_table, kv_lens, scale, causal, window_left, splits)
