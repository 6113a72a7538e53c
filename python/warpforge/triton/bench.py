"""Triton's tutorial kernels on the simulator beside the same kernels under
TRITON_INTERPRET=1 (Triton's interpreter, which runs each program's block
operations in NumPy), on the same inputs: the wall time of one run of each
case's launches (the best of --repeats, after a first run that compiles),
the ratio (interpreter over simulator: above 1, the simulator is faster),
the geometric mean of the ratios, and whether the two computed the same
bytes. A case the interpreter cannot run is listed with its reason and left
out of the mean.

    python -m warpforge.bench triton [--target sm_90a] [--repeats 3] [--case NAME]...

The interpreter runs in a child process on the same machine, started with
TRITON_INTERPRET=1: Triton decides at import whether each @triton.jit
function (its own tl.sum and tl.max among them) is compiled or interpreted,
so one process cannot hold both. The inputs are the same bits in both (the
cases' generator). The simulator checks shared-memory races by default (as
use_simulator() does); --no-race-check times it without."""

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time


def best_time(case, repeats):
    """The best wall time of `repeats` runs of the case's launches, after a
    first run (compilation, caches), each on fresh tensors; and a digest of
    the outputs."""
    from .tutorials.case import tensor_bytes

    tensors = case.make_tensors("cpu")
    case.launch(tensors)
    best = math.inf
    for _ in range(repeats):
        tensors = case.make_tensors("cpu")
        start = time.perf_counter()
        case.launch(tensors)
        best = min(best, time.perf_counter() - start)
    digest = hashlib.sha256(b"".join(tensor_bytes(tensors[n]) for n in sorted(case.outputs))).hexdigest()
    return best, digest


def time_cases(repeats, only):
    """{case: (seconds, digest) or the reason it failed} for the cases, on
    whatever Triton runs them with in this process."""
    from .tutorials import cases

    out = {}
    for case in cases():
        if only and case.name not in only:
            continue
        try:
            out[case.name] = best_time(case, repeats)
        except Exception as e:  # a refusal, reported in the table
            out[case.name] = f"refused: {type(e).__name__}: {str(e).strip().splitlines()[0][:100]}"
    return out


def interpreter_times(repeats, only, target):
    """time_cases under TRITON_INTERPRET=1, in a child process."""
    command = [sys.executable, "-m", "warpforge.triton.bench", "--interpreter-child", "--repeats", str(repeats),
               "--target", target]
    for name in only:
        command += ["--case", name]
    env = dict(os.environ, TRITON_INTERPRET="1")
    child = subprocess.run(command, env=env, capture_output=True, text=True)
    lines = [line for line in child.stdout.splitlines() if line.startswith("{")]
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"the TRITON_INTERPRET=1 process failed (exit {child.returncode}): {child.stderr[-2000:]}")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(lines[-1]).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m warpforge.bench triton", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="sm_90a", choices=("sm_80", "sm_90a"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument("--no-race-check", action="store_true", help="time the simulator without race checking")
    parser.add_argument("--interpreter-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    import warpforge.triton as wt

    if args.interpreter_child:
        # The interpreter needs no driver, but Triton's autotuner asks the
        # active one for a benchmarker: the simulator's, taking the first
        # configuration as the simulator's run does, without running any.
        wt.use_simulator(args.target, autotune="first")
        print(json.dumps(time_cases(args.repeats, args.case)))
        return 0

    wt.use_simulator(args.target, autotune="first", check_races=not args.no_race_check)
    try:
        simulator = time_cases(args.repeats, args.case)
    finally:
        wt.reset()
    interpreter = interpreter_times(args.repeats, args.case, args.target)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Triton tutorial kernels on the simulator ({args.target}, races "
          f"{'not ' if args.no_race_check else ''}checked) and under TRITON_INTERPRET=1, same inputs; "
          f"{os.cpu_count()} CPUs, load {load:.1f}; best of {args.repeats} after a first run")
    print("| case | simulator (ms) | TRITON_INTERPRET=1 (ms) | interpreter / simulator | same bytes |")
    print("|---|---|---|---|---|")
    ratios = []
    for name, ours in simulator.items():
        theirs = interpreter.get(name, "not run")
        if isinstance(ours, str) or isinstance(theirs, str):
            cell = lambda v: v if isinstance(v, str) else f"{v[0] * 1e3:.1f}"
            print(f"| {name} | {cell(ours)} | {cell(theirs)} | - | - |")
            continue
        ratios.append(theirs[0] / ours[0])
        print(f"| {name} | {ours[0] * 1e3:.1f} | {theirs[0] * 1e3:.1f} | {ratios[-1]:.2f} | "
              f"{'yes' if ours[1] == theirs[1] else 'no'} |")
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"| geometric mean of {len(ratios)} | | | {mean:.2f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
