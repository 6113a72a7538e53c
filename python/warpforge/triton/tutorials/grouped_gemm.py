"""Tutorial 08, grouped GEMM: several independent products C_g = A_g @ B_g
of different sizes in one launch of a fixed number of programs, which walk
the tiles of all the groups in turn; the host passes tables of the groups'
pointers, sizes and leading dimensions."""

import triton
import triton.language as tl

from .case import Case, Tensor


@triton.jit
def grouped_matmul_kernel(a_table, b_table, c_table, sizes, leading_dims, groups, PROGRAMS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tile = tl.program_id(0)
    first_tile = 0  # of the current group, in the count over all groups
    for g in range(groups):
        M = tl.load(sizes + g * 3)
        N = tl.load(sizes + g * 3 + 1)
        K = tl.load(sizes + g * 3 + 2)
        tiles_n = tl.cdiv(N, BLOCK_N)
        tiles = tl.cdiv(M, BLOCK_M) * tiles_n
        while tile >= first_tile and tile < first_tile + tiles:
            lda = tl.load(leading_dims + g * 3)
            ldb = tl.load(leading_dims + g * 3 + 1)
            ldc = tl.load(leading_dims + g * 3 + 2)
            a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.float16))
            in_group = tile - first_tile
            rm = (in_group // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = (in_group % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + rm[:, None] * lda + rk[None, :]
            b_ptrs = b_ptr + rk[:, None] * ldb + rn[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for _ in range(0, tl.cdiv(K, BLOCK_K)):
                acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc.to(tl.float16))
            tile += PROGRAMS
        first_tile += tiles


# (M, N, K) of each group: multiples of the blocks, as the tutorial's kernel
# does not mask.
GROUPS = ((64, 64, 64), (128, 64, 32), (64, 128, 96))
PROGRAMS = 4


def _launch(t):
    grouped_matmul_kernel[(PROGRAMS, )](t["a_table"], t["b_table"], t["c_table"], t["sizes"], t["leading_dims"],
                                        len(GROUPS), PROGRAMS=PROGRAMS, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)


def _reference(t):
    return {f"c{g}": t[f"a{g}"].double() @ t[f"b{g}"].double() for g in range(len(GROUPS))}


def cases():
    tensors = {}
    for g, (M, N, K) in enumerate(GROUPS):
        tensors[f"a{g}"] = Tensor((M, K), "float16", low=-1, high=1)
        tensors[f"b{g}"] = Tensor((K, N), "float16", low=-1, high=1)
        tensors[f"c{g}"] = Tensor((M, N), "float16", "poison")
    for operand in "abc":
        tensors[f"{operand}_table"] = Tensor((len(GROUPS), ), "int64", "pointers",
                                             points_to=tuple(f"{operand}{g}" for g in range(len(GROUPS))))
    tensors["sizes"] = Tensor((3 * len(GROUPS), ), "int32", "values", values=tuple(x for s in GROUPS for x in s))
    tensors["leading_dims"] = Tensor((3 * len(GROUPS), ), "int32", "values",
                                     values=tuple(x for M, N, K in GROUPS for x in (K, N, N)))
    return [Case("grouped_gemm", tensors, {f"c{g}": (1e-2, 0.0) for g in range(len(GROUPS))}, _launch, _reference)]
