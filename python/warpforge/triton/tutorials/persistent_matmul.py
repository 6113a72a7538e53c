"""Tutorial 09, persistent matmul with tensor descriptors: a fixed number of
programs walk the output tiles (grouped order, flattened loop over tiles and
K), loading A and B blocks through tensor descriptors: made on the host
(TensorDescriptor, a TMA map passed as a kernel parameter) or in the kernel
(tl.make_tensor_descriptor, which writes the TMA map into the global scratch
memory the launch provides). On sm_80, which has no TMA, Triton lowers the
descriptors to plain loads."""

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .case import Case, Tensor


@triton.jit
def tile_of(tile_id, tiles_in_group, tiles_m, GROUP_M: tl.constexpr):
    group = tile_id // tiles_in_group
    first_m = group * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile_id % rows), (tile_id % tiles_in_group) // rows


@triton.jit
def matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr):
    # This program's tiles of C = A @ B^T, every PROGRAMS-th in grouped order.
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    for tile_id in tl.range(tl.program_id(0), tiles_m * tiles_n, PROGRAMS, flatten=True):
        pid_m, pid_n = tile_of(tile_id, tiles_in_group, tiles_m, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, kb * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, kb * BLOCK_K])  # B given as (N, K)
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def matmul_descriptor_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr):
    matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, PROGRAMS)


@triton.jit
def matmul_device_descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                        BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, PROGRAMS)


BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, PROGRAMS = 64, 64, 32, 2, 3


def _launch_host(t):
    a, b, c = t["a"], t["b"], t["c"]
    (M, K), N = a.shape, b.shape[0]
    matmul_descriptor_persistent[(PROGRAMS, )](
        TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K]), TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K]),
        TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N]), M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, PROGRAMS=PROGRAMS, num_warps=4, num_stages=3)


def _launch_device(t):
    a, b, c = t["a"], t["b"], t["c"]
    (M, K), N = a.shape, b.shape[0]
    matmul_device_descriptor_persistent[(PROGRAMS, )](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                                      BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, PROGRAMS=PROGRAMS,
                                                      num_warps=4, num_stages=3)


def _reference(t):
    return {"c": t["a"].double() @ t["b"].double().T}


def cases():
    # Edges in M, N and K: TMA fills rows and columns past the tensor with
    # zeros and drops the stores there.
    M, N, K = 160, 112, 80
    tensors = {"a": Tensor((M, K), "float16", low=-1, high=1), "b": Tensor((N, K), "float16", low=-1, high=1),
               "c": Tensor((M, N), "float16", "poison")}
    return [
        Case("persistent_matmul_host_descriptor", dict(tensors), {"c": (1e-2, 0.0)}, _launch_host, _reference),
        Case("persistent_matmul_device_descriptor", dict(tensors), {"c": (1e-2, 0.0)}, _launch_device, _reference),
    ]
