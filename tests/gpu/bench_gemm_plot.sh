#!/usr/bin/env bash
# `bench_gemm --plot` on a GPU (ctest bench_gemm_plot, label gpu): two shapes
# measured, the SVG holds a point per series and shape and both ceilings, and
# the copy bandwidth measured in the run is plausible for device memory.
# Exits 77 (ctest: skipped) where there is no GPU.
#
#   tests/gpu/bench_gemm_plot.sh build/bench/bench_gemm out.svg
set -uo pipefail
bench="$1"
out="$2"
rm -f "$out"
log="$("$bench" --shapes 1024x1024x1024,2048x2048x2048 --reps 20 --plot "$out" 2>&1)"
rc=$?
echo "$log"
if grep -q "needs a CUDA GPU" <<<"$log"; then
  echo "skipped: no CUDA GPU"
  exit 77
fi
[ "$rc" -eq 0 ] || { echo "bench_gemm exited $rc"; exit 1; }
points="$(grep -c 'class="point"' "$out")"
[ "$points" -eq 4 ] || { echo "$out: $points points; expected 4 (2 series x 2 shapes)"; exit 1; }
for ceiling in ceiling-tensor ceiling-memory; do
  grep -q "class=\"$ceiling\"" "$out" || { echo "$out: no $ceiling"; exit 1; }
done
# Any GPU with tensor cores copies at well over 100 GB/s.
gbps="$(sed -n 's/.*device-to-device copy \([0-9]*\) GB\/s.*/\1/p' <<<"$log")"
[ -n "$gbps" ] && [ "$gbps" -gt 100 ] || { echo "copy bandwidth '$gbps' GB/s is implausible"; exit 1; }
echo "bench_gemm --plot: $points points, copy $gbps GB/s, wrote $out"
