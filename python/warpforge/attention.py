"""Attention: warpforge.attention with the signature of
torch.nn.functional.scaled_dot_product_attention where the two overlap, so a
model swaps it in with one line, and warpforge.attention_decode over a paged
KV cache.

    out = warpforge.attention(q, k, v, is_causal=True)             # torch: differentiable
    out, lse = warpforge.attention(q, k, v, window=(128, 0), return_lse=True)
    out = warpforge.attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,
                              max_seqlen_q=n, max_seqlen_k=n)       # varlen, (total, heads, d)
    out = warpforge.attention_decode(q, k_cache, v_cache, block_table, kv_lens)

torch tensors go through torch.ops.warpforge.attention_forward (autograd,
fake, CUDA graphs: warpforge.torch), jax.Arrays through warpforge.jax
(custom_vjp over the XLA FFI), NumPy arrays run on the simulator (forward).
"""

from . import _warpforge
from ._frameworks import current_stream, empty_strided, framework_of, to_tensor


def _refuse(message):
    raise _warpforge.OpsError(message)


def mask_arguments(q, k, attn_mask, dropout_p, is_causal, enable_gqa, window, alignment):
    """(window_left, window_right, top_left) from SDPA's arguments and
    warpforge's window, refusing what warpforge does not compute."""
    if attn_mask is not None:
        _refuse("attn_mask: warpforge.attention computes causal and sliding-window masks (is_causal=, window=), "
                "not a mask tensor")
    if dropout_p != 0.0:
        _refuse(f"dropout_p = {dropout_p}: warpforge.attention has no dropout (0.0 only)")
    heads_q, heads_kv = q.shape[1], k.shape[1]
    if heads_q != heads_kv and not enable_gqa:
        _refuse(f"q has {heads_q} heads and k {heads_kv}: grouped-query attention needs enable_gqa=True "
                "(as scaled_dot_product_attention)")
    if alignment not in ("top_left", "bottom_right"):
        _refuse(f"alignment '{alignment}': 'top_left' (scaled_dot_product_attention's) or 'bottom_right' "
                "(FlashAttention's)")
    left, right = (-1, -1) if window is None else (-1 if window[0] is None else int(window[0]),
                                                   -1 if window[1] is None else int(window[1]))
    if is_causal:
        if right > 0:
            _refuse(f"is_causal with window right = {right}: causal means right = 0")
        right = 0
    return left, right, alignment == "top_left"


def lse_shape(q, varlen):
    """The log-sum-exp's shape: (batch, heads, seq) dense, (heads, total) varlen."""
    return (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[1], q.shape[2])


def attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, *,
              window=None, alignment="top_left", cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
              max_seqlen_k=None, return_lse=False, deterministic=False, kernel="auto"):
    """softmax(q·kᵀ·scale + mask)·v.

    q (batch, heads_q, seq_q, d), k and v (batch, heads_kv, seq_k, d), any
    strides with d contiguous (a (batch, seq, heads, d) tensor is passed
    transposed); bf16 or f16; d 64, 128 or 256. Varlen (cu_seqlens_q/_k, int32
    batch + 1 offsets, with max_seqlen_q/_k): q (total_q, heads_q, d), k and v
    (total_k, heads_kv, d). is_causal and window=(left, right) (None for an
    unbounded side) mask keys right and left of the diagonal, aligned
    top-left as scaled_dot_product_attention does (alignment="bottom_right":
    FlashAttention's, the last query against the last key). A row that sees
    no key gives 0. scale defaults to 1/sqrt(d). With return_lse, also the
    log-sum-exp of each row ((batch, heads, seq) or (heads, total), f32).
    deterministic makes the backward's dQ sums run in a fixed order.
    """
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    if q.ndim != (3 if varlen else 4):
        _refuse(f"q has {q.ndim} dimensions: attention takes (batch, heads, seq, d), or (total, heads, d) with "
                "cu_seqlens_q and cu_seqlens_k")
    # heads are dimension 1 in both forms
    left, right, top_left = mask_arguments(q, k, attn_mask, dropout_p, is_causal, enable_gqa, window, alignment)
    # Positional, in the order each framework's attention takes them (no
    # dictionary a call: host time).
    options = (scale, left, right, top_left, cu_seqlens_q, cu_seqlens_k, max_seqlen_q or 0, max_seqlen_k or 0,
               deterministic, kernel)
    fw = framework_of(q)
    if fw == "torch":
        out, lse = _torch_attention().attention(q, k, v, *options)
    elif fw == "jax":
        from . import jax_attention

        out, lse = jax_attention.attention(q, k, v, *options)
    else:
        out, lse = _forward_direct(q, k, v, *options)
    return (out, lse) if return_lse else out


def _forward_direct(q, k, v, scale, window_left, window_right, top_left, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                    max_seqlen_k, deterministic, kernel):
    """The forward on NumPy/CuPy/DLPack tensors (NumPy: the simulator)."""
    del deterministic  # the forward is deterministic
    varlen = cu_seqlens_q is not None
    name = "bf16" if "bfloat16" in str(q.dtype) else "f16" if "float16" in str(q.dtype) else str(q.dtype)
    out = empty_strided(q, tuple(q.shape), _contiguous_strides(q.shape), name)
    shape = lse_shape(q, varlen)
    lse = empty_strided(q, shape, _contiguous_strides(shape), "f32")
    views = [to_tensor(x, role) for x, role in ((q, "q"), (k, "k"), (v, "v"), (out, "o"), (lse, "lse"))]
    cu = [None if c is None else to_tensor(c, role) for c, role in ((cu_seqlens_q, "cu_seqlens_q"),
                                                                   (cu_seqlens_k, "cu_seqlens_k"))]
    op = _warpforge.attention_op(views, cu[0], cu[1], True, False, scale, False, window_left, window_right, top_left,
                                 max_seqlen_q, max_seqlen_k, False, kernel, False)
    op.execute(views, cu[0], cu[1], True, None, current_stream(q))
    return out, lse


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


_TORCH_ATTENTION = None


def _torch_attention():
    """warpforge.torch_attention, imported on the first call (torch is
    optional); later calls skip the import statement's ~0.5 us, a part of
    the decode call's host time."""
    global _TORCH_ATTENTION
    if _TORCH_ATTENTION is None:
        from . import torch_attention

        _TORCH_ATTENTION = torch_attention
    return _TORCH_ATTENTION


def attention_decode(q, k_cache, v_cache, block_table, kv_lens, scale=None, causal=True, window_left=-1, splits=0,
                     return_lse=False):
    """Decoding over a paged KV cache (flash-decoding): q (batch, heads_q,
    q_tokens, d) holds the last q_tokens tokens of each sequence, whose keys
    are in the cache already; k_cache, v_cache (pages, page_size, heads_kv,
    d); block_table (batch, pages_per_sequence) int32; kv_lens (batch,) int32
    on the device. Returns o like q (and lse (batch, heads_q, q_tokens))."""
    fw = framework_of(q)
    if fw == "torch":
        out, lse = _torch_attention().attention_decode(q, k_cache, v_cache, block_table, kv_lens, scale, causal,
                                                       window_left, splits, return_lse)
    elif fw == "jax":
        _refuse("attention_decode on jax.Arrays is not provided yet: pass torch, CuPy or NumPy tensors")
    else:
        name = "bf16" if "bfloat16" in str(q.dtype) else "f16"
        out = empty_strided(q, tuple(q.shape), _contiguous_strides(q.shape), name)
        shape = tuple(q.shape[:3])
        lse = empty_strided(q, shape, _contiguous_strides(shape), "f32")
        views = [to_tensor(x, role) for x, role in ((q, "q"), (k_cache, "k_cache"), (v_cache, "v_cache"),
                                                     (block_table, "block_table"), (kv_lens, "kv_lens"),
                                                     (out, "o"), (lse, "lse"))]
        op = _warpforge.attention_decode_op(views, scale, causal, window_left, splits, False)
        op.execute(views, None, current_stream(q))
    return (out, lse) if return_lse else out
