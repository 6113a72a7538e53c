#!/usr/bin/env bash
# warpforge.distributed.gemm_amax on one GPU and on 2 (and more where the
# machine has them): column- (weak scaling) and row-parallel MXFP8 and NVFP4
# at 8192 x 16384 x 8192 and the decode shape 16 x 16384 x 8192, beside
# torch's tensor-parallel bf16 matmul with the same collectives (NCCL). One
# Markdown table per GPU count (python/warpforge/bench_distributed.py says
# what each column holds); compare the column rows' TFLOP/s per GPU across
# the tables for the weak scaling. Then the same from JAX, one process over
# the GPUs (python/warpforge/bench_jax_sharding.py), where JAX sees GPUs.
#
#   scripts/bench-multi-gpu.sh [build dir, default build] [extra arguments of warpforge.bench_distributed]
#
# Needs torch with CUDA, NCCL and the module built (the _warpforge target).
# Run on two H100s (docs/PERFORMANCE.md, "Several GPUs"); CUDA_VISIBLE_DEVICES=
# with tiny --shapes runs it on gloo and the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
shift || true
export PYTHONPATH="$PWD/$build/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
gpus="$(python3 -c 'import torch; print(torch.cuda.device_count())')"
counts=1
for n in 2 4 8; do
  [ "$n" -le "$gpus" ] && counts="$counts $n"
done
[ "$gpus" -ge 2 ] || echo "bench-multi-gpu: $gpus GPU(s) visible: only the one-rank table" >&2
for n in $counts; do
  echo "## $n rank(s)"
  OMP_NUM_THREADS=1 torchrun --nproc-per-node "$n" -m warpforge.bench_distributed "$@"
  echo
done
if python3 -c 'import jax, sys; sys.exit(0 if jax.devices("gpu") else 1)' 2>/dev/null; then
  echo "## JAX"
  python3 -m warpforge.bench_jax_sharding "$@"
else
  echo "bench-multi-gpu: JAX sees no GPU: no JAX table" >&2
fi
