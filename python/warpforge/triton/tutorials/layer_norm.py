"""Tutorial 05, layer normalization, forward and backward. Forward: one
program per row computes the mean and reciprocal standard deviation in f32
and writes y = (x - mean) * rstd * w + b. Backward: one program per row
writes dx and adds the row's contributions to dw and db into one of
GROUP_M partial rows, under a spin lock (atomic_cas) per partial row; a
second kernel sums the partial rows. GROUP_M is at least the number of rows
here, so that every partial row receives one contribution and the sums do
not depend on which program takes a lock first (on a GPU as on the
simulator)."""

import torch
import triton
import triton.language as tl

from .case import Case, Tensor

EPS = 1e-5


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.0)
        squares += centered * centered
    rstd = 1 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        w = tl.load(w_ptr + cols, mask=inside)
        b = tl.load(b_ptr + cols, mask=inside)
        x = tl.load(x_ptr + cols, mask=inside, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def layer_norm_bwd_dx(dx_ptr, dy_ptr, partial_dw_ptr, partial_db_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, lock_ptr,
                      stride, N, GROUP_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=inside, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=inside, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=inside).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(inside, (x - mean) * rstd, 0.0)
    wdy = tl.where(inside, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(dx_ptr + row * stride + cols, ((wdy - (xhat * c1 + c2)) * rstd).to(dx_ptr.dtype.element_ty),
             mask=inside)

    # Add this row's dw and db into partial row `slot`, holding its lock;
    # the first contribution (count 0) stores instead of adding.
    slot = row % GROUP_M
    lock = lock_ptr + slot
    count_ptr = lock_ptr + GROUP_M + slot
    dw = (dy * xhat).to(w_ptr.dtype.element_ty)
    db = dy.to(w_ptr.dtype.element_ty)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    dw_ptrs = partial_dw_ptr + slot * N + cols
    db_ptrs = partial_db_ptr + slot * N + cols
    if tl.load(count_ptr) == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        dw += tl.load(dw_ptrs, mask=inside)
        db += tl.load(db_ptrs, mask=inside)
    tl.store(dw_ptrs, dw, mask=inside)
    tl.store(db_ptrs, db, mask=inside)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layer_norm_bwd_dwdb(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, rows, N, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, rows, BLOCK_M):
        r = start + tl.arange(0, BLOCK_M)
        inside = (r[:, None] < rows) & (cols[None, :] < N)
        offsets = r[:, None] * N + cols[None, :]
        dw += tl.load(partial_dw_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
        db += tl.load(partial_db_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < N)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=cols < N)


GROUP_M = 64


def _launch(t):
    x = t["x"]
    M, N = x.shape
    block = triton.next_power_of_2(N)
    layer_norm_fwd[(M, )](x, t["y"], t["w"], t["b"], t["mean"], t["rstd"], x.stride(0), N, EPS, BLOCK=block,
                          num_warps=4)
    layer_norm_bwd_dx[(M, )](t["dx"], t["dy"], t["partial_dw"], t["partial_db"], x, t["w"], t["mean"], t["rstd"],
                             t["locks"], x.stride(0), N, GROUP_M=GROUP_M, BLOCK_N=block, num_warps=4)
    layer_norm_bwd_dwdb[(triton.cdiv(N, 32), )](t["partial_dw"], t["partial_db"], t["dw"], t["db"], GROUP_M, N,
                                                 BLOCK_M=32, BLOCK_N=32)


def _reference(t):
    x = t["x"].double().requires_grad_()
    w = t["w"].double().requires_grad_()
    b = t["b"].double().requires_grad_()
    y = torch.nn.functional.layer_norm(x, (x.shape[1], ), w, b, EPS)
    y.backward(t["dy"].double())
    mean = t["x"].double().mean(dim=1)
    rstd = 1 / torch.sqrt(t["x"].double().var(dim=1, unbiased=False) + EPS)
    return {"y": y.detach(), "dx": x.grad, "dw": w.grad, "db": b.grad, "mean": mean, "rstd": rstd}


def cases():
    M, N = 48, 96
    return [Case(
        "layer_norm", {
            # the tutorial's magnitudes: x about -2.3 +- 1, w and b in [0, 1), dy about 0.1
            "x": Tensor((M, N), "float16", low=-3.3, high=-1.3),
            "w": Tensor((N, ), "float16", low=0.0, high=1.0),
            "b": Tensor((N, ), "float16", low=0.0, high=1.0),
            "dy": Tensor((M, N), "float16", low=-0.2, high=0.2),
            "y": Tensor((M, N), "float16", "poison"),
            "mean": Tensor((M, ), "float32", "poison"),
            "rstd": Tensor((M, ), "float32", "poison"),
            "dx": Tensor((M, N), "float16", "poison"),
            "partial_dw": Tensor((GROUP_M, N), "float16", "zeros"),
            "partial_db": Tensor((GROUP_M, N), "float16", "zeros"),
            "locks": Tensor((2 * GROUP_M, ), "int32", "zeros"),
            "dw": Tensor((N, ), "float16", "poison"),
            "db": Tensor((N, ), "float16", "poison"),
        }, {"y": (1e-2, 0.0), "dx": (1e-2, 0.0), "dw": (1e-2, 0.0), "db": (1e-2, 0.0), "mean": (1e-3, 0.0),
            "rstd": (0.0, 1e-3)}, _launch, _reference)]
