"""warpforge.attention in place of torch.nn.functional.scaled_dot_product_attention:
one line changes in a model's attention, and autograd, torch.compile and CUDA
graphs keep working. Here a causal grouped-query problem (4 query heads
sharing 2 KV heads, head_dim 64) runs forward and backward, and its output
and gradients are compared with SDPA's in fp64.

    python examples/python/attention.py            # CPU tensors: the simulator
    python examples/python/attention.py --cuda     # a GPU
"""

import sys

import torch
import torch.nn.functional as F

import warpforge


def run(device="cpu", seq=96, seed=0):
    """(output error, gradient error), each relative to the fp64 result's norm."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, 4, seq, 64, generator=g).to(device, torch.bfloat16).requires_grad_()
    k = torch.randn(1, 2, seq, 64, generator=g).to(device, torch.bfloat16).requires_grad_()
    v = torch.randn(1, 2, seq, 64, generator=g).to(device, torch.bfloat16).requires_grad_()

    out = warpforge.attention(q, k, v, is_causal=True, enable_gqa=True)  # was F.scaled_dot_product_attention
    out.float().square().sum().backward()

    exact = [x.detach().double().requires_grad_() for x in (q, k, v)]
    want = F.scaled_dot_product_attention(*exact, is_causal=True, enable_gqa=True)
    want.square().sum().backward()
    relative = lambda got, ref: float(torch.linalg.norm(got.double() - ref) / torch.linalg.norm(ref))  # noqa: E731
    return relative(out.detach(), want.detach()), max(relative(x.grad, e.grad) for x, e in zip((q, k, v), exact))


def main():
    device = "cuda" if "--cuda" in sys.argv else "cpu"
    out_error, grad_error = run(device)
    print(f"warpforge.attention on {device}: output within {out_error:.1e}, gradients within {grad_error:.1e} "
          "of fp64 SDPA (relative norms; bf16 rounds at 3.9e-3)")
    return 0 if out_error < 2**-8 and grad_error < 2**-6 else 1


if __name__ == "__main__":
    sys.exit(main())
