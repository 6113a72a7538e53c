"""A mixture-of-experts layer on warpforge's grouped GEMM, checked against a
per-expert PyTorch loop: router top-k, permute the (token, expert) pairs by
expert, grouped GEMM gate/up, SwiGLU, grouped GEMM down, un-permute with the
router's weights. The expert weights are bf16, or MXFP4 / NVFP4 / MXFP8
packed once at load time (bf16 tokens against 4- or 8-bit experts, the
weight-only GEMM gpt-oss serves with). Everything the routing decides stays
on the device (the group offsets are a tensor), so the whole layer compiles
with torch.compile(fullgraph=True) and replays as one CUDA graph.

    python examples/python/moe_layer.py                     # CPU tensors on the simulator, tiny
    python examples/python/moe_layer.py --cuda              # gpt-oss-120b's expert shapes, one layer (32 experts)
    python examples/python/moe_layer.py --cuda --weights mxfp4 --compile --graph
"""

import argparse

import torch

import warpforge
import warpforge.torch  # noqa: F401  (registers torch.ops.warpforge)


class MoE(torch.nn.Module):
    def __init__(self, hidden, expert, experts, top_k, weights="bf16", device="cpu", seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.top_k, self.experts = top_k, experts
        self.router = (torch.randn(hidden, experts, generator=g) / hidden**0.5).to(device)
        gate_up = torch.randn(experts, hidden, 2 * expert, generator=g) / hidden**0.5
        down = torch.randn(experts, expert, hidden, generator=g) / expert**0.5
        if weights == "bf16":
            self.gate_up, self.down = gate_up.bfloat16().to(device), down.bfloat16().to(device)
            # What the reference multiplies: the same bf16 values.
            self.gate_up_values, self.down_values = self.gate_up.double(), self.down.double()
        else:
            self.gate_up, values = warpforge.quantize_weights(gate_up, weights)
            self.gate_up_values = torch.from_numpy(values).to(device)
            self.down, values = warpforge.quantize_weights(down, weights)
            self.down_values = torch.from_numpy(values).to(device)
            for packed in (self.gate_up, self.down):
                packed.codes, packed.scales = packed.codes.to(device), packed.scales.to(device)

    def route(self, x):
        """Top-k experts of every token, the pairs sorted by expert, and the
        experts' cumulative ends (int32 on the device)."""
        probs = torch.softmax(x.float() @ self.router.float(), dim=-1)
        weight, expert = torch.topk(probs, self.top_k, dim=-1)
        weight = weight / weight.sum(-1, keepdim=True)
        order = torch.argsort(expert.flatten(), stable=True)
        counts = torch.zeros(self.experts, dtype=torch.int32, device=x.device)
        counts.scatter_add_(0, expert.flatten(), torch.ones_like(expert.flatten(), dtype=torch.int32))
        return order, order // self.top_k, weight.flatten()[order], torch.cumsum(counts, 0, dtype=torch.int32)

    def forward(self, x):
        order, token, weight, offs = self.route(x)
        h = warpforge.grouped_mm(x[token], self.gate_up, offs)  # (T·k, 2·expert)
        gate, up = h.chunk(2, dim=-1)
        act = (torch.nn.functional.silu(gate.float()) * up.float()).bfloat16()
        y = warpforge.grouped_mm(act, self.down, offs)  # (T·k, hidden)
        out = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
        return out.index_add_(0, token, y.float() * weight[:, None]).bfloat16()

    def reference(self, x):
        """The same layer as a loop over the experts, in float64 (the
        activations rounded to bf16 where the layer rounds them)."""
        order, token, weight, offs = self.route(x)
        out = torch.zeros(x.shape, dtype=torch.float64, device=x.device)
        begin = 0
        for e, end in enumerate(offs.tolist()):
            rows = token[begin:end]
            if len(rows):
                h = (x[rows].double() @ self.gate_up_values[e]).bfloat16()
                gate, up = h.chunk(2, dim=-1)
                act = (torch.nn.functional.silu(gate.float()) * up.float()).bfloat16()
                y = (act.double() @ self.down_values[e]).bfloat16()
                out.index_add_(0, rows, y.double() * weight[begin:end, None].double())
            begin = end
        return out


def run(tokens, hidden, expert, experts, top_k, weights="bf16", device="cpu", compile=False, graph=False, seed=0):
    """Returns (the layer's output, the loop's) for random tokens."""
    layer = MoE(hidden, expert, experts, top_k, weights, device, seed)
    x = torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(seed + 1)).bfloat16().to(device)
    forward = torch.compile(layer.forward, fullgraph=True) if compile else layer.forward
    out = forward(x)  # compiles the kernels (and the graph) outside any capture
    if graph:
        static_x = x.clone()
        cuda_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(cuda_graph):
            static_out = forward(static_x)
        static_out.fill_(float("nan"))
        cuda_graph.replay()
        torch.cuda.synchronize()
        out = static_out
    return out, layer.reference(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuda", action="store_true", help="gpt-oss-120b's shapes on the GPU (else tiny, CPU)")
    parser.add_argument("--tokens", type=int, default=None)
    parser.add_argument("--weights", default="bf16", choices=["bf16", "mxfp4", "nvfp4", "mxfp8"])
    parser.add_argument("--compile", action="store_true", help="torch.compile(fullgraph=True)")
    parser.add_argument("--graph", action="store_true", help="capture one CUDA graph and replay it")
    args = parser.parse_args()
    if args.cuda:  # gpt-oss-120b's expert shape (hidden 2880, expert 2880, top 4) over 32 of its 128 experts
        # (the weights are drawn and quantized on the host: all 128 would take minutes)
        shape = dict(tokens=args.tokens or 256, hidden=2880, expert=2880, experts=32, top_k=4, device="cuda")
    else:
        shape = dict(tokens=args.tokens or 6, hidden=64, expert=32, experts=4, top_k=2, device="cpu")
    out, want = run(weights=args.weights, compile=args.compile, graph=args.graph, **shape)
    error = (out.double() - want).abs().max().item()
    scale = want.abs().max().item()
    print(f"MoE layer {shape}, {args.weights} experts: max |out - loop| = {error:.3g} (max |loop| = {scale:.3g})")
    # bf16 output of values that the loop also rounded to bf16 on the way: a few ulps of the largest.
    assert error <= 2.0**-6 * scale, "the layer disagrees with the per-expert loop"


if __name__ == "__main__":
    main()
