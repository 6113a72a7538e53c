#!/usr/bin/env bash
# The torch operators' host time on a GPU machine (issue 44: no row op below
# the best peer at 4096 rows, where a call's host time is what is measured),
# inside $BUDGET_S seconds (default 62, for a 65 s limit; the build
# included), printing as it goes, the most important first:
#   1. scripts/rows_host_cost.py $HOST_COST (default --steps --forward
#      --trace): one cached call of RMSNorm's backward accounted for step by
#      step (the floor of its schema, each C++ step alone, the peer's kernel,
#      both graph nodes, the engine's floor, autograd.grad host and
#      event-timed), RMSNorm's forward against F.rms_norm, and the GPU's side
#      of autograd.grad (torch.profiler's kernels), ours and eager's;
#   2. warpforge.bench_rows over $PY_OPS at 4096 rows x hidden 4096 (ours
#      against PyTorch eager and Liger Kernel; torch.compile with COMPILE=1);
#   3. where time is left, scripts/python_host_cost.py (gemm, grouped_mm,
#      rms_norm, attention, decode against torch's op, a call's host time).
# Last, a short summary (each stage's exit status and log). The machine is
# the one scripts/gpu-check.sh describes (scripts/gpu-build-args.sh).
#
#   OUT=/tmp/out scripts/gpu-py-host.sh
#
# BUILD_DIR (default build-py-host) and JOBS (default nproc) may be set.
set -uo pipefail
cd "$(dirname "$0")/.."

source scripts/gpu-build-args.sh
gpu_script py-host build-py-host
deadline=${BUDGET_S:-62}  # seconds from the script's start
left() { local s=$((deadline - SECONDS)); echo $((s > 3 ? s : 3)); }

gpu_build warpforge_python
export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

# 1. One cached call, step by step, and the forward's host time.
echo "== rows_host_cost.py ${HOST_COST---steps --forward --trace} =="
# shellcheck disable=SC2086  # the stage flags, split
timeout $(($(left) * 50 / 100)) python3 -u scripts/rows_host_cost.py ${HOST_COST---steps --forward --trace} 2>&1 |
  grep --line-buffered -v -E "UserWarning|_warn_once" | tee "$out/host-cost.txt"
note "rows_host_cost.py: exit ${PIPESTATUS[0]} ($out/host-cost.txt)"

# 2. bench_rows at 4096 rows: where the host time decides against the peers.
compile_flag=(--no-compile)
[ -n "${COMPILE:-}" ] && compile_flag=()
py_ops="${PY_OPS:-layer_bwd,rms_bwd,rms,layer,swiglu_bwd,softmax_bwd}"
echo
echo "== bench_rows --ops $py_ops, 4096 rows =="
timeout $(($(left) * 85 / 100)) python3 -u -m warpforge.bench_rows "${compile_flag[@]}" --ops "$py_ops" \
  --rows "${PY_ROWS:-4096}" --hidden 4096 --reps 20 2>&1 | grep --line-buffered -v "could not be imported" | tee "$out/bench_rows.txt"
note "bench_rows --ops $py_ops: exit ${PIPESTATUS[0]} ($out/bench_rows.txt)"

# 3. Every op family against torch's op, where time is left.
if [ "$(left)" -gt 8 ]; then
  echo
  echo "== python_host_cost.py =="
  timeout "$(left)" python3 -u scripts/python_host_cost.py 2>&1 | tee "$out/python-host-cost.txt"
  note "python_host_cost.py: exit ${PIPESTATUS[0]} ($out/python-host-cost.txt)"
fi

echo
echo "== gpu-py-host summary =="
printf '%s\n' "${summary[@]}"
