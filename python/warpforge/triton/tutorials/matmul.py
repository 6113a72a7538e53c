"""Tutorial 03, matrix multiplication: blocked C = A @ B with the programs
ordered in groups of GROUP_M block rows (so that neighbouring programs
share A's and B's blocks in L2), autotuned over two configurations, an
optional leaky ReLU on the f32 accumulator, f16 output. Inputs f16, or FP8
(e5m2) with B given transposed, as the tutorial's FP8 variant."""

import torch
import triton
import triton.language as tl

from .case import Case, Tensor


def _configs():
    return [
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2}, num_warps=2, num_stages=2),
    ]


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # Program pid's block (pid_m, pid_n): programs walk GROUP_M block rows
    # column by column before moving to the next group of rows.
    pid = tl.program_id(0)
    blocks_m = tl.cdiv(M, BLOCK_M)
    blocks_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * blocks_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(blocks_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    # Rows and columns past the edge wrap around (their results are not
    # stored); K's tail is masked to zero.
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - kb * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(tl.float16),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _launch(activation, transposed_b):

    def launch(t):
        a, c = t["a"], t["c"]
        b = t["b"].T if transposed_b else t["b"]  # the FP8 variant passes B as the transpose of a row-major (N, K)
        M, K = a.shape
        N = b.shape[1]
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), )
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), ACTIVATION=activation)

    return launch


def _reference(activation, transposed_b):

    def reference(t):
        b = t["b"].double().T if transposed_b else t["b"].double()
        c = t["a"].double() @ b
        if activation == "leaky_relu":
            c = torch.where(c >= 0, c, 0.01 * c)
        return {"c": c}

    return reference


def cases():
    M, N, K = 80, 72, 112  # edges in every dimension: a partial K block, wrapped rows and columns
    fp16 = Case("matmul_fp16", {"a": Tensor((M, K), "float16", low=-1, high=1),
                                "b": Tensor((K, N), "float16", low=-1, high=1),
                                "c": Tensor((M, N), "float16", "poison")},
                {"c": (1e-2, 0.0)}, _launch("leaky_relu", False), _reference("leaky_relu", False))
    fp8 = Case("matmul_fp8", {"a": Tensor((M, K), "float8_e5m2", low=-1, high=1),
                              "b": Tensor((N, K), "float8_e5m2", low=-1, high=1),
                              "c": Tensor((M, N), "float16", "poison")},
               {"c": (0.125, 0.0)}, _launch("", True), _reference("", True))
    return [fp16, fp8]
