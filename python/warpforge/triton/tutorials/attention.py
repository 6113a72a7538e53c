"""Tutorial 06, fused attention (FlashAttention-2), forward and backward,
causal. Forward: each program takes BLOCK_M queries of one head, walks the
keys in blocks keeping a running maximum and sum of exp2 (the online
softmax), and writes O and the base-2 log-sum-exp M of each row. Backward:
Delta = rowsum(O * dO); one kernel walks the queries for each block of keys
(dK, dV), another the keys for each block of queries (dQ), each recomputing
P = exp2(S * log2(e) - M)."""

import math

import torch
import triton
import triton.language as tl

from .case import Case, Tensor

LOG2E = 1.4426950408889634
SM_SCALE = 0.5


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, m_ptr, sm_scale, stride_h, stride_n, H, N_CTX, HEAD_DIM: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)  # z * H + h: heads of every batch are contiguous
    base = head * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :])
    scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    row_max = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    row_sum = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    end = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + offs_n
        kt = tl.load(k_ptr + base + keys[None, :] * stride_n + offs_d[:, None])
        s = tl.dot(q, kt) * scale
        if CAUSAL:
            s = tl.where(offs_m[:, None] >= keys[None, :], s, -1.0e6)
        new_max = tl.maximum(row_max, tl.max(s, axis=1))
        p = tl.math.exp2(s - new_max[:, None])
        correction = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * correction + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + keys[:, None] * stride_n + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
        row_max = new_max
    tl.store(m_ptr + head * N_CTX + offs_m, row_max + tl.math.log2(row_sum))
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :],
             (acc / row_sum[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def attn_bwd_delta(o_ptr, do_ptr, delta_ptr, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    head = tl.program_id(1)
    offs = head * N_CTX * HEAD_DIM + rows[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    o = tl.load(o_ptr + offs).to(tl.float32)
    do = tl.load(do_ptr + offs).to(tl.float32)
    tl.store(delta_ptr + head * N_CTX + rows, tl.sum(o * do, axis=1))


@triton.jit
def attn_bwd_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, dk_ptr, dv_ptr, m_ptr, delta_ptr, sm_scale, stride_h, stride_n, N_CTX,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    keys = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    head = tl.program_id(1)
    base = head * stride_h
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(k_ptr + base + keys[:, None] * stride_n + offs_d[None, :])
    v = tl.load(v_ptr + base + keys[:, None] * stride_n + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.4426950408889634
    start = tl.program_id(0) * BLOCK_N if CAUSAL else 0  # queries before the block see none of its keys
    for start_m in range(start, N_CTX, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)
        qt = tl.load(q_ptr + base + rows[None, :] * stride_n + offs_d[:, None])
        m = tl.load(m_ptr + head * N_CTX + rows)
        pt = tl.math.exp2(tl.dot(k, qt) * scale - m[None, :])
        if CAUSAL:
            pt = tl.where(rows[None, :] >= keys[:, None], pt, 0.0)
        do = tl.load(do_ptr + base + rows[:, None] * stride_n + offs_d[None, :])
        dv = tl.dot(pt.to(do.dtype), do, dv)
        delta = tl.load(delta_ptr + head * N_CTX + rows)
        dpt = tl.dot(v, tl.trans(do))
        dst = pt * (dpt - delta[None, :])
        dk = tl.dot(dst.to(qt.dtype), tl.trans(qt), dk)
    tl.store(dk_ptr + base + keys[:, None] * stride_n + offs_d[None, :], (dk * sm_scale).to(dk_ptr.dtype.element_ty))
    tl.store(dv_ptr + base + keys[:, None] * stride_n + offs_d[None, :], dv.to(dv_ptr.dtype.element_ty))


@triton.jit
def attn_bwd_dq(q_ptr, k_ptr, v_ptr, do_ptr, dq_ptr, m_ptr, delta_ptr, sm_scale, stride_h, stride_n, N_CTX,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    head = tl.program_id(1)
    base = head * stride_h
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + offs_d[None, :])
    do = tl.load(do_ptr + base + rows[:, None] * stride_n + offs_d[None, :])
    m = tl.load(m_ptr + head * N_CTX + rows)
    delta = tl.load(delta_ptr + head * N_CTX + rows)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.4426950408889634
    end = (tl.program_id(0) + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + base + keys[None, :] * stride_n + offs_d[:, None])
        vt = tl.load(v_ptr + base + keys[None, :] * stride_n + offs_d[:, None])
        p = tl.math.exp2(tl.dot(q, kt) * scale - m[:, None])
        if CAUSAL:
            p = tl.where(rows[:, None] >= keys[None, :], p, 0.0)
        ds = p * (tl.dot(do, vt) - delta[:, None])
        dq = tl.dot(ds.to(kt.dtype), tl.trans(kt), dq)
    tl.store(dq_ptr + base + rows[:, None] * stride_n + offs_d[None, :], (dq * sm_scale).to(dq_ptr.dtype.element_ty))


def _launch(t):
    q = t["q"]
    Z, H, N_CTX, D = q.shape
    heads = Z * H
    stride_h, stride_n = q.stride(1), q.stride(2)
    attn_fwd[(N_CTX // 64, heads)](q, t["k"], t["v"], t["o"], t["m"], SM_SCALE, stride_h, stride_n, H, N_CTX,
                                   HEAD_DIM=D, BLOCK_M=64, BLOCK_N=32, CAUSAL=True, num_warps=4, num_stages=2)
    attn_bwd_delta[(N_CTX // 64, heads)](t["o"], t["do"], t["delta"], N_CTX, HEAD_DIM=D, BLOCK_M=64)
    attn_bwd_dkdv[(N_CTX // 32, heads)](q, t["k"], t["v"], t["do"], t["dk"], t["dv"], t["m"], t["delta"], SM_SCALE,
                                        stride_h, stride_n, N_CTX, HEAD_DIM=D, BLOCK_M=32, BLOCK_N=32, CAUSAL=True,
                                        num_warps=4, num_stages=2)
    attn_bwd_dq[(N_CTX // 32, heads)](q, t["k"], t["v"], t["do"], t["dq"], t["m"], t["delta"], SM_SCALE, stride_h,
                                      stride_n, N_CTX, HEAD_DIM=D, BLOCK_M=32, BLOCK_N=32, CAUSAL=True, num_warps=4,
                                      num_stages=2)


def _reference(t):
    q, k, v = (t[n].double().requires_grad_() for n in ("q", "k", "v"))
    n_ctx = q.shape[2]
    s = q @ k.transpose(-1, -2) * SM_SCALE
    causal = torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool))
    s = s.masked_fill(~causal, -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    o = torch.softmax(s, dim=-1) @ v
    o.backward(t["do"].double())
    return {"o": o.detach(), "m": (lse / math.log(2)).detach().reshape(-1), "dq": q.grad, "dk": k.grad,
            "dv": v.grad}


def cases():
    shape = (1, 2, 128, 64)  # batch, heads, sequence, head dimension
    tensors = {name: Tensor(shape, "float16", low=-1, high=1) for name in ("q", "k", "v", "do")}
    tensors.update({name: Tensor(shape, "float16", "poison") for name in ("o", "dq", "dk", "dv")})
    tensors["m"] = Tensor((2 * 128, ), "float32", "poison")
    tensors["delta"] = Tensor((2 * 128, ), "float32", "poison")
    return [Case("attention", tensors, {"o": (1e-2, 0.0), "m": (1e-3, 0.0), "dq": (1e-2, 0.0), "dk": (1e-2, 0.0),
                                        "dv": (1e-2, 0.0)}, _launch, _reference)]
