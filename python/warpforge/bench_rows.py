"""The row ops on a GPU against their peers in one run: PyTorch eager,
torch.compile (the rows dimension dynamic, the hidden one static), and
Liger Kernel where it is importable (pip install liger-kernel; skipped,
saying so, where it is not), each beside the device-to-device copy of the
same bytes. For each op, rows x hidden: the bytes the op must move (inputs
read once, outputs written once), every contender's time, ours as a
fraction of the copy's rate, and the ratio of the best peer's time to ours;
then, over rows >= 4096, the geometric mean and the least of that ratio.
"ours host us" is the host time a call of ours takes to issue (GPU not
waited for): where it is above our time, the call, not the kernel, is what
the row measures.

    python -m warpforge.bench_rows [--ops rms,rms_bwd,layer,layer_bwd,softmax,softmax_bwd,swiglu,swiglu_bwd,ce]
                                   [--rows 4096,32768] [--hidden 2048,4096,8192,16384]
                                   [--vocab 32768,131072,262144] [--dtype bfloat16] [--reps 20] [--no-compile]

ce is the loss (mean) and its gradient together, as loss.backward() runs them
(PyTorch's: F.cross_entropy on the logits in their dtype).

Times: medians of --reps runs between CUDA events, after warm-ups; inputs
rotated among copies totalling more than twice the L2. Backward ops are
timed as torch.autograd.grad of a forward kept alive (retain_graph), so
every contender computes the same gradients (inputs and weights)."""

import argparse
import functools
import math

import torch

from warpforge.bench import host_us_per_call, median_ms

L2_BYTES = 50 << 20


def _median_seconds(fn, reps, copies):
    return median_ms(torch, [functools.partial(fn, i) for i in range(copies)], reps) * 1e-3


def _copies(nbytes):
    return max(1, min(32, 2 * L2_BYTES // max(nbytes, 1) + 1))


def _liger(module, name):
    """liger_kernel.<module>.<name> (or liger_kernel.ops.<name>, where newer
    releases export their functions), or None where Liger Kernel (or that op)
    is not installed."""
    import importlib

    for where in (f"liger_kernel.{module}", "liger_kernel.ops"):
        try:
            return getattr(importlib.import_module(where), name)
        except (ImportError, AttributeError):
            continue
    return None


# ---- the ops: each gives its bytes, its inputs, and a callable per contender ----


class RowBench:
    """One op, forward or backward: bytes(rows, n, itemsize); inputs(rows,
    n, dtype) -> (tensors the op takes, dy or None); contenders() -> {name:
    fn(*tensors)}. A backward is timed as torch.autograd.grad of a forward
    kept alive (retain_graph), with respect to every input that requires it."""

    backward = False
    whole = False  # the forward and its backward timed together (the loss)

    def runner(self, fn, sets):
        if self.whole:
            def loss_and_gradient(i):
                tensors, _ = sets[i]
                return torch.autograd.grad(fn(*tensors), [tensors[0]])
            return loss_and_gradient
        if not self.backward:
            return lambda i: fn(*sets[i][0])
        outs = []
        for tensors, dy in sets:
            y = fn(*tensors)
            outs.append((y, [t for t in tensors if isinstance(t, torch.Tensor) and t.requires_grad], dy))
        return lambda i: torch.autograd.grad(outs[i][0], outs[i][1], outs[i][2], retain_graph=True)


def _randn(rows, n, dtype, grad, scale=1.0):
    return (torch.randn(rows, n, dtype=dtype, device="cuda") * scale).requires_grad_(grad)


class NormBench(RowBench):
    """rms / layer, forward or backward (the gradients of x, weight, bias)."""

    def __init__(self, kind, backward):
        self.kind, self.backward = kind, backward
        self.name = kind + ("_bwd" if backward else "")

    def bytes(self, rows, hidden, itemsize):
        layer = self.kind == "layer"
        rows_bytes, column, stats = rows * hidden * itemsize, hidden * itemsize, rows * 4 * (2 if layer else 1)
        if self.backward:
            return 3 * rows_bytes + column * (3 if layer else 2) + stats
        return 2 * rows_bytes + column * (2 if layer else 1) + stats

    def inputs(self, rows, hidden, dtype):
        grad = self.backward
        x = _randn(rows, hidden, dtype, grad)
        w = (torch.rand(hidden, dtype=dtype, device="cuda") + 0.5).requires_grad_(grad)
        b = torch.randn(hidden, dtype=dtype, device="cuda").requires_grad_(grad) if self.kind == "layer" else None
        dy = torch.randn(rows, hidden, dtype=dtype, device="cuda") if grad else None
        return (x, w, b), dy

    def contenders(self, compile_peers):
        import torch.nn.functional as F

        import warpforge.torch_rows as ours

        eps = 1e-6 if self.kind == "rms" else 1e-5
        if self.kind == "rms":
            eager = lambda x, w, b: F.rms_norm(x, x.shape[-1:], w, eps)  # noqa: E731
            mine = lambda x, w, b: ours.rms_norm(x, w, eps)  # noqa: E731
            liger = _liger("ops.rms_norm", "LigerRMSNormFunction")
            liger_fn = liger and (lambda x, w, b: liger.apply(x, w, eps))
        else:
            eager = lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, eps)  # noqa: E731
            mine = lambda x, w, b: ours.layer_norm(x, w, b, eps)  # noqa: E731
            liger = _liger("ops.layer_norm", "LigerLayerNormFunction")
            liger_fn = liger and (lambda x, w, b: liger.apply(x, w, b, eps))
        return _with_peers(mine, eager, liger_fn, compile_peers)


class SoftmaxBench(RowBench):
    def __init__(self, backward):
        self.backward = backward
        self.name = "softmax" + ("_bwd" if backward else "")

    def bytes(self, rows, n, itemsize):
        return (3 if self.backward else 2) * rows * n * itemsize

    def inputs(self, rows, n, dtype):
        return (_randn(rows, n, dtype, self.backward, 3.0),), (_randn(rows, n, dtype, False) if self.backward else None)

    def contenders(self, compile_peers):
        import warpforge.torch_rows as ours

        liger = _liger("ops.softmax", "LigerSoftmaxFunction")
        return _with_peers(ours.softmax, lambda x: torch.softmax(x, -1), liger and liger.apply, compile_peers)


class SwigluBench(RowBench):
    def __init__(self, backward):
        self.backward = backward
        self.name = "swiglu" + ("_bwd" if backward else "")

    def bytes(self, rows, n, itemsize):
        return (5 if self.backward else 3) * rows * n * itemsize

    def inputs(self, rows, n, dtype):
        grad = self.backward
        return (_randn(rows, n, dtype, grad, 2.0), _randn(rows, n, dtype, grad)), (
            _randn(rows, n, dtype, False) if grad else None)

    def contenders(self, compile_peers):
        import torch.nn.functional as F

        import warpforge.torch_rows as ours

        liger = _liger("ops.swiglu", "LigerSiLUMulFunction")
        return _with_peers(lambda g, u: ours.swiglu(g, u), lambda g, u: F.silu(g) * u, liger and liger.apply,
                           compile_peers)


class CrossEntropyBench(RowBench):
    """The loss (mean) and its gradient with respect to the logits, together
    (loss.backward()); n is the vocabulary."""

    name = "ce"
    whole = True

    def bytes(self, rows, vocab, itemsize):
        return 2 * rows * vocab * itemsize + rows * 8 + 4

    def inputs(self, rows, vocab, dtype):
        return (_randn(rows, vocab, dtype, True, 2.0), torch.randint(0, vocab, (rows,), device="cuda")), None

    def contenders(self, compile_peers):
        import torch.nn.functional as F

        import warpforge.torch_rows as ours

        loss = _liger("transformers", "LigerCrossEntropyLoss")
        liger_fn = None
        if loss is not None:
            module = loss()
            liger_fn = lambda x, y: module(x, y)  # noqa: E731
        return _with_peers(lambda x, y: ours.cross_entropy(x, y), lambda x, y: F.cross_entropy(x, y), liger_fn,
                           compile_peers)


def _with_peers(ours, eager, liger, compile_peers):
    found = {"warpforge": ours, "torch eager": eager}
    if compile_peers:
        found["torch.compile"] = torch.compile(eager, dynamic=False)
    if liger is not None:
        found["Liger"] = liger
    return found


BENCHES = {b.name: b for b in (NormBench("rms", False), NormBench("rms", True), NormBench("layer", False),
                               NormBench("layer", True), SoftmaxBench(False), SoftmaxBench(True),
                               SwigluBench(False), SwigluBench(True), CrossEntropyBench())}


def run(args):
    if not torch.cuda.is_available():
        raise SystemExit("bench_rows: needs a CUDA GPU (torch sees none); nothing measured")
    import warpforge.torch  # noqa: F401

    dtype = getattr(torch, args.dtype)
    itemsize = torch.empty((), dtype=dtype).element_size()
    liger = _liger("ops.rms_norm", "LigerRMSNormFunction")
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; dtype {args.dtype}; Liger Kernel "
          f"{'present' if liger else 'absent (pip install liger-kernel): not timed'}; "
          f"torch.compile {'on' if args.compile else 'off'}.")
    print(f"Median of {args.reps} runs (CUDA events), inputs rotated past the L2. Ratio: best peer's time / ours.\n")
    header = None
    ratios = []
    for name in args.ops:
        bench = BENCHES[name]
        for rows in args.rows:
            for hidden in (args.vocab if bench.whole else args.hidden):
                nbytes = bench.bytes(rows, hidden, itemsize)
                copies = _copies(nbytes)
                sets = [bench.inputs(rows, hidden, dtype) for _ in range(copies)]
                src = [torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda") for _ in range(copies)]
                dst = [torch.empty_like(s) for s in src]
                copy_s = _median_seconds(lambda i: dst[i].copy_(src[i]), args.reps, copies)
                times = {}
                host_us = math.nan
                for who, fn in bench.contenders(args.compile).items():
                    try:
                        runner = bench.runner(fn, sets)
                        times[who] = _median_seconds(runner, args.reps, copies)
                        if who == "warpforge":
                            host_us = host_us_per_call(torch, functools.partial(runner, 0), args.reps, 3)
                    except Exception as e:  # a peer that cannot run a shape is reported, not fatal
                        times[who] = float("nan")
                        print(f"  ({who} failed on {name} {rows}x{hidden}: {type(e).__name__}: {e})")
                if header is None:
                    peers = [w for w in times if w != "warpforge"]
                    header = ["op", "rows", "hidden", "MB", "copy us", "ours us"] + [f"{p} us" for p in peers] + \
                        ["ours of copy", "best peer / ours", "ours host us"]
                    print("| " + " | ".join(header) + " |")
                    print("|" + "---|" * len(header))
                ours = times["warpforge"]
                best = min((t for w, t in times.items() if w != "warpforge" and not math.isnan(t)), default=math.nan)
                ratio = best / ours
                if rows >= 4096 and not math.isnan(ratio):
                    ratios.append((ratio, name, rows, hidden))
                cells = [name, rows, hidden, f"{nbytes / 1e6:.2f}", f"{copy_s * 1e6:.1f}", f"{ours * 1e6:.1f}"]
                cells += [f"{times[p] * 1e6:.1f}" for p in peers]
                cells += [f"{copy_s / ours:.2f}", f"{ratio:.2f}", f"{host_us:.1f}"]
                print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)
                del sets, src, dst
    if ratios:
        gmean = math.exp(sum(math.log(r[0]) for r in ratios) / len(ratios))
        worst = min(ratios)
        print(f"\nrows >= 4096: best peer / ours geometric mean {gmean:.2f} over {len(ratios)} cases; least "
              f"{worst[0]:.2f} ({worst[1]} {worst[2]}x{worst[3]})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", default=",".join(BENCHES), type=lambda s: s.split(","))
    p.add_argument("--vocab", default="32768,131072,262144", type=lambda s: [int(v) for v in s.split(",")],
                   help="the cross-entropy's vocabularies (its rows are --rows)")
    p.add_argument("--rows", default="1,64,4096,32768", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--hidden", default="2048,4096,8192,16384", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    p.add_argument("--reps", default=20, type=int)
    p.add_argument("--no-compile", dest="compile", action="store_false", help="leave torch.compile out")
    args = p.parse_args(argv)
    unknown = [o for o in args.ops if o not in BENCHES]
    if unknown:
        p.error(f"unknown ops {unknown}; known: {', '.join(BENCHES)}")
    run(args)


if __name__ == "__main__":
    main()
