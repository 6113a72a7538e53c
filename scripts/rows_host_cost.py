# Where a row op's Python call spends its host time (issue 44: none of the
# row ops below the best peer at 4096 rows, where a call's host time is what
# bench_rows measures), on a GPU, bf16 4096 x 4096: host microseconds a call
# (calls issued back to back, the GPU drained between batches:
# warpforge.bench.host_us_per_call), for
#   0. --steps: one cached call of RMSNorm's backward accounted for: the
#      floor (norm_backward's schema through the same registration, a C++
#      kernel that returns dy), the operator, its C++ steps each timed alone
#      (_warpforge_torch.host_steps), the peer's kernel through the same
#      path, both graph nodes alone, the autograd engine's floor, and
#      autograd.grad of ours and of eager's, host and event-timed;
#   1. --backward: RMSNorm's backward taken apart: torch.autograd.grad of ours (C++
#      kernels and autograd where _warpforge_torch was built) and of PyTorch
#      eager's; our graph node called alone on this thread (no autograd
#      engine); the backward operator through the dispatcher; the compiled
#      op's execute_addresses alone; then torch.profiler's table of one
#      autograd.grad call of ours (host time by operator);
#   2. --forward: RMSNorm's forward: the public function, its direct call
#      (no torch.ops), the operator, its builtin without torch's Python
#      frame, the dispatcher's floor (neg on 4 floats), the Python path and
#      PyTorch eager;
#   3. --trace: the GPU's side of autograd.grad, ours and eager's, timed as
#      bench_rows times it (torch.profiler's kernels and the events' median);
#   4. every row op from Python, ours beside PyTorch eager and Liger Kernel
#      (forwards called on tensors without gradients; backwards as
#      torch.autograd.grad of a kept forward, as bench_rows times them).
# A stage that cannot run says why and the rest go on.
#   PYTHONPATH=build/python:python python3 scripts/rows_host_cost.py [--steps] [--backward] [--forward] [--trace]
# With stage flags, those stages only (a GPU window's budget); with none, all.
import functools
import sys

import torch

import warpforge
import warpforge.torch  # noqa: F401
from warpforge import torch_rows as tr
from warpforge.bench import host_us_per_call, median_ms
from warpforge.bench_rows import BENCHES

# Without a GPU: a small shape on the simulator (the script's smoke test; its figures mean nothing).
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, HIDDEN, DTYPE = (4096, 4096, torch.bfloat16) if DEVICE == "cuda" else (4, 256, torch.bfloat16)


def host_us(f, calls=100, repeats=5):
    return host_us_per_call(torch, f, calls, repeats)


def line(name, f, **kw):
    try:
        print(f"  {name:<56} {host_us(f, **kw):8.2f} us/call", flush=True)
    except Exception as e:  # a stage this build does not have
        print(f"  {name:<56} not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


x = torch.randn(ROWS, HIDDEN, dtype=DTYPE, device=DEVICE)
w = torch.rand(HIDDEN, dtype=DTYPE, device=DEVICE) + 0.5
dy = torch.randn_like(x)
eps = 1e-6


def event_us(f, reps=20):
    """The median of CUDA events around one call (bench_rows' measure: where the
    GPU waits on the host, the call's host time and its kernels' tail)."""
    return median_ms(torch, [f], reps) * 1e3


def both(name, f):
    try:
        print(f"  {name:<56} {host_us(f):8.2f} us/call, event-timed {event_us(f):8.2f} us", flush=True)
    except Exception as e:
        print(f"  {name:<56} not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


def steps():
    """0. One cached call of RMSNorm's backward, step by step."""
    print(f"== RMSNorm backward (dx and dweight), {ROWS} x {HIDDEN} bf16: one cached call, host us ==", flush=True)
    _, _, _, rstd = torch.ops.warpforge.norm(x, None, w, None, "rms", eps)
    args = (dy, x, w, None, rstd, None, "rms", eps, True, None)
    cpp = getattr(warpforge, "_warpforge_torch", None) if tr.CPP_KERNELS else None
    if cpp is not None and hasattr(cpp, "register_floor"):
        cpp.register_floor()
        floor = torch.ops.warpforge_probe.norm_backward
        line("floor: norm_backward's schema, a kernel returning dy", lambda: floor(*args))
        line("floor, its builtin (.default._op: no Python frame)", functools.partial(floor.default._op, *args))
    line("torch.ops.warpforge.norm_backward", lambda: torch.ops.warpforge.norm_backward(*args))
    line("torch.ops.warpforge.norm_backward.default._op",
         functools.partial(torch.ops.warpforge.norm_backward.default._op, *args))
    if cpp is not None and hasattr(cpp, "host_steps"):
        for step, ns in cpp.host_steps(dy, x, w, rstd, 200).items():
            print(f"  C++: {step:<51} {ns / 1e3:8.2f} us/call", flush=True)
    try:  # the peer's kernel through the same path: aten's fused RMSNorm backward
        _, rstd_eager = torch.ops.aten._fused_rms_norm.default(x, [HIDDEN], w, eps)
        peer = torch.ops.aten._fused_rms_norm_backward.default
        line("peer: aten._fused_rms_norm_backward.default._op",
             functools.partial(peer._op, dy, x, [HIDDEN], rstd_eager, w, [True, True]))
    except Exception as e:
        print(f"  peer's fused kernel not run: {type(e).__name__}: {str(e)[:90]}", flush=True)
    xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    y_ours = tr.rms_norm(xg, wg, eps)
    y_eager = torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps)
    line(f"our node alone ({y_ours.grad_fn.name()}(dy))", lambda: y_ours.grad_fn(dy))
    inputs = len(getattr(y_eager.grad_fn, "_input_metadata", (None,)))  # its outputs' gradients: dy, then None
    line(f"eager's node alone ({y_eager.grad_fn.name()}(dy))", lambda: y_eager.grad_fn(dy, *[None] * (inputs - 1)))
    y_view = xg.view_as(xg)
    both("the engine's floor: autograd.grad of a view (no kernel)",
         lambda: torch.autograd.grad(y_view, [xg], dy, retain_graph=True))
    ours = functools.partial(torch.autograd.grad, y_ours, [xg, wg], dy, retain_graph=True)
    eager = functools.partial(torch.autograd.grad, y_eager, [xg, wg], dy, retain_graph=True)
    both("autograd.grad, ours", ours)
    both("autograd.grad, torch eager", eager)
    # The engine's hand-offs vary from minute to minute: the two interleaved, batch by batch.
    try:
        rounds = [(host_us(ours, calls=20, repeats=1), host_us(eager, calls=20, repeats=1)) for _ in range(15)]
        mine, theirs = (sorted(r[i] for r in rounds)[7] for i in (0, 1))
        print(f"  autograd.grad interleaved (15 rounds of 20 calls, medians): ours {mine:.2f}, eager {theirs:.2f} "
              f"us/call; eager / ours {theirs / mine:.2f}", flush=True)
    except Exception as e:
        print(f"  interleaved not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


def profile_of(name, y, xg, wg):
    """torch.profiler's host time by operator over 20 calls of autograd.grad(y)."""
    try:
        from torch.profiler import ProfilerActivity, profile

        for _ in range(3):
            torch.autograd.grad(y, [xg, wg], dy, retain_graph=True)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(20):
                torch.autograd.grad(y, [xg, wg], dy, retain_graph=True)
            torch.cuda.synchronize()
        print(f"  torch.profiler, 20 calls of autograd.grad, {name} (host time by operator):", flush=True)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=56),
              flush=True)
    except Exception as e:
        print(f"  torch.profiler not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


def backward():
    """1. The backward."""
    print(f"== RMSNorm backward (gradients of x and weight), {ROWS} x {HIDDEN} bf16, host us a call ==", flush=True)
    xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    y_ours = tr.rms_norm(xg, wg, eps)
    y_eager = torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps)
    line("autograd.grad, ours", lambda: torch.autograd.grad(y_ours, [xg, wg], dy, retain_graph=True))
    line("autograd.grad, torch eager (peer)", lambda: torch.autograd.grad(y_eager, [xg, wg], dy, retain_graph=True))
    line("our graph node alone (grad_fn(dy), no engine)", lambda: y_ours.grad_fn(dy))
    line("forward with gradients, ours (a graph node made)", lambda: tr.rms_norm(xg, wg, eps))
    line("forward with gradients, torch eager", lambda: torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps))
    _, _, _, rstd = torch.ops.warpforge.norm(x, None, w, None, "rms", eps)
    args = (dy, x, w, None, rstd, None, "rms", eps, True, None)
    line("torch.ops.warpforge.norm_backward (dispatcher)", lambda: torch.ops.warpforge.norm_backward(*args))
    if hasattr(tr, "_norm_backward"):
        dx, dw, _ = tr._norm_backward(*args)  # the Python kernel, which caches the compiled op in _NORM_BACKWARDS
        op = next(iter(tr._NORM_BACKWARDS.values()))
        addresses = [0 if t is None else t.data_ptr() for t in (dy, x, w, None, rstd, None, dx, dw, None)]
        stream = torch.cuda.current_stream().cuda_stream
        line("op.execute_addresses alone (the kernel and dweight's sum)",
             lambda: op.execute_addresses(addresses, stream))
    # The engine's share: a one-input node of one kernel (softmax) beside the norm's
    # two-input node, and the norm's gradients one at a time.
    xs = x.clone().requires_grad_(True)
    s_ours, s_eager = tr.softmax(xs), torch.softmax(xs, -1)
    line("autograd.grad, softmax ours (one input, one kernel)",
         lambda: torch.autograd.grad(s_ours, [xs], dy, retain_graph=True))
    line("autograd.grad, softmax torch eager", lambda: torch.autograd.grad(s_eager, [xs], dy, retain_graph=True))
    line("autograd.grad, ours, x only", lambda: torch.autograd.grad(y_ours, [xg], dy, retain_graph=True))
    line("autograd.grad, torch eager, x only", lambda: torch.autograd.grad(y_eager, [xg], dy, retain_graph=True))
    profile_of("ours", y_ours, xg, wg)
    profile_of("torch eager", y_eager, xg, wg)


def forward():
    """2. The forward."""
    print(f"\n== RMSNorm forward, {ROWS} x {HIDDEN} bf16, host us a call ==", flush=True)
    line("warpforge.torch_rows.rms_norm (public)", lambda: tr.rms_norm(x, w, eps))
    if getattr(tr, "_DIRECT", None) is not None:
        taken = tr._DIRECT.norm(x, None, w, None, "rms", eps) is not NotImplemented
        line(f"its direct call alone (_warpforge_torch.norm; {'taken' if taken else 'NOT TAKEN: NotImplemented'})",
             functools.partial(tr._DIRECT.norm, x, None, w, None, "rms", eps))
    line("torch.ops.warpforge.norm (dispatcher)", lambda: torch.ops.warpforge.norm(x, None, w, None, "rms", eps))
    norm_builtin = torch.ops.warpforge.norm.default._op  # the overload's builtin: no Python frame of torch's
    line("torch.ops.warpforge.norm.default._op (its builtin)", lambda: norm_builtin(x, None, w, None, "rms", eps))
    line("torch.ops.aten.neg.default._op on 4 floats (the floor)",
         functools.partial(torch.ops.aten.neg.default._op, torch.zeros(4, device="cuda")))
    if hasattr(tr, "_EAGER_NORM"):
        line("the Python kernel and autograd.Function (no C++ kernel)",
             lambda: tr._EAGER_NORM.apply(x, None, w, None, "rms", eps))
    line("torch.nn.functional.rms_norm (peer)", lambda: torch.nn.functional.rms_norm(x, (HIDDEN,), w, eps))


def trace():
    """3. The GPU's side of autograd.grad at 4096 rows, ours and eager's, timed
    as bench_rows times it (events around each call): torch.profiler's CUDA
    kernels over 10 calls (their names, calls and GPU µs), then the events'
    median: whether the call's kernels or its host time fill the interval."""
    from torch.profiler import ProfilerActivity, profile

    xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    for name, y in (("ours", tr.rms_norm(xg, wg, eps)),
                    ("torch eager", torch.nn.functional.rms_norm(xg, (HIDDEN,), wg, eps))):
        def f():
            return torch.autograd.grad(y, [xg, wg], dy, retain_graph=True)

        try:
            print(f"\n== the GPU's side of autograd.grad, {name}: 10 calls between events ==", flush=True)
            print(f"  events' median {event_us(f, 10):.1f} us a call", flush=True)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                event_us(f, 10)
            print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=6, max_name_column_width=60),
                  flush=True)
        except Exception as e:
            print(f"  not run: {type(e).__name__}: {str(e)[:90]}", flush=True)


def every_op():
    """4. Every op: ours against its peers, host time a call."""
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


stages = [flag for flag in sys.argv[1:] if flag in ("--steps", "--backward", "--forward", "--trace")]
if not stages or "--steps" in stages:
    steps()
if not stages or "--backward" in stages:
    backward()
if not stages or "--forward" in stages:
    forward()
if not stages or "--trace" in stages:
    trace()
if not stages:
    every_op()
