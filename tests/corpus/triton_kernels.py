"""Triton's PTX for the round-trip corpus, compiled at build time without a GPU.

    python3 triton_kernels.py <out_dir> <ptxas>
    python3 triton_kernels.py --list <out_dir>   # prints the paths it would write

writes <out_dir>/triton_<kernel>.<target>.lineinfo.ptx for each kernel below
and for sm_80 and sm_90a, named as corpus.cmake names nvcc's output: Triton
keeps line information (.loc, .file and DWARF sections), as nvcc -lineinfo does. Triton compiles
for an explicit target (GPUTarget), so no GPU or driver is needed. Triton
chooses the PTX ISA version from the ptxas it runs, and the version its own
ptxas takes can be newer than the toolkit's: the toolkit's ptxas is handed to
it (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH) so that the PTX is what
that ptxas accepts. Compilations go to a private cache, not ~/.triton.
"""
import os
import sys
import tempfile

listing = sys.argv[1] == "--list"
out_dir = sys.argv[2] if listing else sys.argv[1]
if not listing:
    os.environ["TRITON_PTXAS_PATH"] = sys.argv[2]
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = sys.argv[2]
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="warpforge-triton-")

import triton  # noqa: E402 (after the environment that Triton reads at import)
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def softmax(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def layer_norm(out_ptr, in_ptr, weight_ptr, bias_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    y = centered * rstd * tl.load(weight_ptr + cols, mask=mask) + tl.load(bias_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, y.to(tl.float16), mask=mask)


# MXFP4 (e2m1 pairs packed along K in a byte, one e8m0 scale per 32 elements
# of K); before sm_100 Triton upcasts both operands to bf16 and multiplies with
# mma or wgmma. (sm_80 has no e4m3, so MXFP8 would compile for sm_90a only.)
@triton.jit
def dot_scaled(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm, rn, rk = tl.arange(0, BLOCK_M), tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_K // 2)
    rs = tl.arange(0, BLOCK_K // 32)
    a = tl.load(a_ptr + rm[:, None] * (BLOCK_K // 2) + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
    a_scale = tl.load(a_scale_ptr + rm[:, None] * (BLOCK_K // 32) + rs[None, :])
    b_scale = tl.load(b_scale_ptr + rn[:, None] * (BLOCK_K // 32) + rs[None, :])
    c = tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e2m1")
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], c)


# Small blocks keep the PTX (and its transpiled C++) short.
KERNELS = {
    "matmul": (matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                        "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
               {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}),
    "softmax": (softmax, {"out_ptr": "*fp32", "in_ptr": "*fp32", "stride": "i32", "n_cols": "i32"}, {"BLOCK": 256}),
    "layer_norm": (layer_norm, {"out_ptr": "*fp16", "in_ptr": "*fp16", "weight_ptr": "*fp32", "bias_ptr": "*fp32",
                                "stride": "i32", "n_cols": "i32", "eps": "fp32"}, {"BLOCK": 256}),
    "dot_scaled": (dot_scaled, {"a_ptr": "*u8", "a_scale_ptr": "*u8", "b_ptr": "*u8", "b_scale_ptr": "*u8",
                                "c_ptr": "*fp32"}, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}),
}
TARGETS = {"sm_80": GPUTarget("cuda", 80, 32), "sm_90a": GPUTarget("cuda", 90, 32)}

os.makedirs(out_dir, exist_ok=True)
for name, (fn, signature, constexprs) in KERNELS.items():
    for target_name, target in TARGETS.items():
        path = os.path.join(out_dir, f"triton_{name}.{target_name}.lineinfo.ptx")
        if listing:
            print(path)
            continue
        source = ASTSource(fn=fn, signature={**signature, **{c: "constexpr" for c in constexprs}},
                           constexprs=constexprs)
        with open(path, "w") as f:
            f.write(triton.compile(source, target=target).asm["ptx"])
