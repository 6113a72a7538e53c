# Where a row op's Python call spends its host time (issue 44: <= 15 us a
# forward call, <= 30 us a backward), on a GPU, bf16 4096 x 4096: host
# microseconds a call (calls issued back to back, the GPU drained between
# batches: warpforge.bench.host_us_per_call), for
#   1. RMSNorm's forward and backward taken apart: the public function, the
#      operator through the dispatcher (its C++ kernels and autograd where
#      _warpforge_torch was built), the Python kernels and autograd that a
#      build without it runs, the Python kernel called directly, the
#      compiled op's execute_addresses alone, and each step of the Python
#      kernel (a stage that cannot run says why and the rest go on);
#   2. every row op from Python, ours beside PyTorch eager and Liger Kernel
#      (forwards called on tensors without gradients; backwards as
#      torch.autograd.grad of a kept forward, as bench_rows times them).
#   PYTHONPATH=build/python:python python3 scripts/rows_host_cost.py
import functools

import torch

import warpforge.torch  # noqa: F401
from warpforge import torch_rows as tr
from warpforge.bench import host_us_per_call
from warpforge.bench_rows import BENCHES

ROWS, HIDDEN, DTYPE = 4096, 4096, torch.bfloat16


def host_us(f, calls=100, repeats=5):
    return host_us_per_call(torch, f, calls, repeats)


def line(name, f, **kw):
    try:
        print(f"  {name:<52} {host_us(f, **kw):8.2f} us/call", flush=True)
    except Exception as e:  # a stage this build does not have
        print(f"  {name:<52} not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


# 1. RMSNorm taken apart.
x = torch.randn(ROWS, HIDDEN, dtype=DTYPE, device="cuda")
w = torch.rand(HIDDEN, dtype=DTYPE, device="cuda") + 0.5
eps = 1e-6
print(f"== RMSNorm forward, {ROWS} x {HIDDEN} bf16, host us a call, stage by stage ==", flush=True)
line("warpforge.torch_rows.rms_norm (public)", lambda: tr.rms_norm(x, w, eps))
line("torch.ops.warpforge.norm (dispatcher)", lambda: torch.ops.warpforge.norm(x, None, w, None, "rms", eps))
norm_builtin = torch.ops.warpforge.norm.default._op  # the overload's builtin: no Python frame of torch's
line("torch.ops.warpforge.norm.default._op (its builtin)", lambda: norm_builtin(x, None, w, None, "rms", eps))
line("torch.ops.aten.neg.default._op on 4 floats (the floor)",
     functools.partial(torch.ops.aten.neg.default._op, torch.zeros(4, device="cuda")))
line("torch.neg on 4 floats", functools.partial(torch.neg, torch.zeros(4, device="cuda")))
if hasattr(tr, "_EAGER_NORM"):
    line("the Python kernel and autograd.Function (no C++ kernel)",
         lambda: tr._EAGER_NORM.apply(x, None, w, None, "rms", eps))
line("torch.nn.functional.rms_norm (peer)", lambda: torch.nn.functional.rms_norm(x, (HIDDEN,), w, eps))
if hasattr(tr, "_norm"):
    line("torch_rows._norm (the Python kernel, called directly)", lambda: tr._norm(x, None, w, None, "rms", eps))
    y, h, mean, rstd = tr._norm(x, None, w, None, "rms", eps)
    tensors = [x, None, w, None, y, None, None, rstd]
    options = tr.norm_options("rms", eps)
    op = next(o for k, o in tr._NORMS.items() if k[0] == x.device and k[1] == options)
    addresses = [0 if t is None else t.data_ptr() for t in tensors]
    stream = torch.cuda.current_stream().cuda_stream
    line("op.execute_addresses alone (C++: views, checks, launch)", lambda: op.execute_addresses(addresses, stream))
    key = (x.device, options, *map(tr._describe, tensors))
    line("step: rows_ready(x)", lambda: tr.rows_ready(x))
    line("step: 4 x torch.empty (y, h, mean, rstd)", lambda: tr._norm_outputs(
        x, None, "rms", lambda shape, dtype: torch.empty(shape, dtype=dtype, device=x.device)))
    line("step: the cache key (8 tensors described)", lambda: (x.device, options, *map(tr._describe, tensors)))
    line("step: cache look-up", lambda: tr._NORMS.get(key))
    line("step: the addresses' list", lambda: [0 if t is None else t.data_ptr() for t in tensors])
    line("step: raw current stream", lambda: tr._raw_stream(x.device.index))
    line("step: torch.compiler.is_compiling()", torch.compiler.is_compiling)

print("\n== RMSNorm backward (torch.autograd.grad of x and weight), stage by stage ==", flush=True)
xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
dy = torch.randn_like(x)
y_ours = tr.rms_norm(xg, wg, eps)
y_eager = torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps)
line("autograd.grad, ours", lambda: torch.autograd.grad(y_ours, [xg, wg], dy, retain_graph=True))
if hasattr(tr, "_EAGER_NORM"):
    y_python = tr._EAGER_NORM.apply(xg, None, wg, None, "rms", eps)[0]
    line("autograd.grad, the Python kernels and autograd", lambda: torch.autograd.grad(y_python, [xg, wg], dy,
                                                                                         retain_graph=True))
line("autograd.grad, torch eager (peer)", lambda: torch.autograd.grad(y_eager, [xg, wg], dy, retain_graph=True))
line("forward with gradients, ours (autograd's node made)", lambda: tr.rms_norm(xg, wg, eps))
line("forward with gradients, torch eager", lambda: torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps))
if hasattr(tr, "_norm_backward"):
    _, _, _, rstd = tr._norm(x, None, w, None, "rms", eps)
    args = (dy, x, w, None, rstd, None, "rms", eps, True, None)
    line("torch_rows._norm_backward (the Python kernel, directly)", lambda: tr._norm_backward(*args))
    line("torch.ops.warpforge.norm_backward (dispatcher)", lambda: torch.ops.warpforge.norm_backward(*args))
    dx, dw, _ = tr._norm_backward(*args)
    op = next(iter(tr._NORM_BACKWARDS.values()))
    addresses = [0 if t is None else t.data_ptr() for t in (dy, x, w, None, rstd, None, dx, dw, None)]
    stream = torch.cuda.current_stream().cuda_stream
    line("op.execute_addresses alone (3 launches)", lambda: op.execute_addresses(addresses, stream))
    line("step: torch.empty_like(weight) + empty(dx)", lambda: (torch.empty_like(x), torch.empty_like(w)))

# 2. Every op: ours against its peers, host time a call.
print(f"\n== host us a call, {ROWS} x {HIDDEN} bf16 (vocabulary 32768 for ce) ==", flush=True)
for name, bench in BENCHES.items():
    n = 32768 if bench.whole else HIDDEN
    sets = [bench.inputs(ROWS, n, DTYPE)]
    cells = []
    for who, fn in bench.contenders(False).items():
        try:
            cells.append(f"{who} {host_us(functools.partial(bench.runner(fn, sets), 0), calls=50, repeats=3):.1f}")
        except Exception as e:
            cells.append(f"{who} failed ({type(e).__name__})")
    print(f"  {name:<12} " + "; ".join(cells), flush=True)

