#!/usr/bin/env bash
# Before/after timing of the kernels the warp-specialized template changed,
# on one GPU in one run: bench_gemm built from this tree (new) and from the
# commit before the template work (old), run alternately on the same shapes,
# and a table last: per shape the kernel, old and new microseconds (from
# bench_gemm's TFLOP/s: 2·M·N·K flops) and the speed ratio old µs / new µs
# (target: none below 0.98). Runs start only while the elapsed time is
# under BUDGET_S (default 270 s), so the table comes within 5 minutes on a
# 16-core H200 machine; a run left out is named.
#
# What changed (scripts/ptx-identity.sh): the bf16 GEMM's PTX is identical
# for every configuration the heuristic picks (bench_gemm --sweep llm needs
# no timing); stream-K configurations (autotune candidates) differ only in
# the ids of two named barriers: one stream-K run here. Every block-scaled
# sm90a kernel (converting, dequantizer and FP8-wgmma designs) and the
# swapped kernel changed: the swapped kernel runs where GemmAmax picks it (M
# up to 256), the sm90a designs are named (--kernel sm90a; --precision fast
# for FP8 wgmma; --tile 128x128 for the dequantizer warpgroups without
# split-K). The skinny kernel and the prepass path's bf16 GEMM are
# unchanged.
#
#   scripts/gpu-template.sh --prepare      # here, where git is: the old sources
#   OUT=/tmp/out scripts/gpu-template.sh   # on the GPU machine
#
# The old sources: OLD_SRC (a directory), else gpu-template-old.tar.gz in
# the repository root (what --prepare writes, from OLD_REV: by default the
# merge base with main, else 6bdffc5; untracked, so a copy of the working
# tree carries it), else git archive of OLD_REV. JOBS (default nproc).
# Needs the CUDA toolkit (cuBLAS), CMake and a compiler; not GoogleTest.
# Logs under $OUT (default build/gpu-template).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-build/gpu-template}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out"
start=$SECONDS

fail() {
  echo "gpu-template: FAIL: $*"
  exit 1
}

rev="${OLD_REV:-$(git merge-base HEAD main 2>/dev/null || echo 6bdffc5)}"
if [ "${1:-}" = "--prepare" ]; then
  git archive --format=tar.gz -o gpu-template-old.tar.gz "$rev" || fail "git archive $rev"
  echo "gpu-template: wrote gpu-template-old.tar.gz ($rev: $(git log -1 --format=%s "$rev" | cut -c1-60))"
  exit 0
fi
old_src="${OLD_SRC:-}"
if [ -z "$old_src" ]; then
  old_src="$out/old-src"
  rm -rf "$old_src" && mkdir -p "$old_src"
  if [ -f gpu-template-old.tar.gz ]; then
    tar -xzf gpu-template-old.tar.gz -C "$old_src" || fail "gpu-template-old.tar.gz does not unpack"
    echo "old: gpu-template-old.tar.gz"
  else
    git archive "$rev" | tar -x -C "$old_src" || fail "no old sources (run --prepare where git is, or set OLD_SRC)"
    echo "old: $rev ($(git log -1 --format=%s "$rev" | cut -c1-70))"
  fi
fi
echo "new: this tree ($(git log -1 --format='%h %s' 2>/dev/null | cut -c1-70))"

dlpack_args=()
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# Both builds at once, half the cores each: bench_gemm and the layers it links.
build() {  # source dir, build dir
  cmake -S "$1" -B "$2" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_TESTS=OFF \
    -DWARPFORGE_PYTHON=OFF "${dlpack_args[@]}" >"$2.configure.log" 2>&1 &&
    cmake --build "$2" -j "$(((jobs + 1) / 2))" --target bench_gemm >"$2.build.log" 2>&1
}
build "$old_src" "$out/build-old" &
old_pid=$!
build . "$out/build-new" &
new_pid=$!
wait $old_pid || fail "old build (logs: $out/build-old.*.log)"
wait $new_pid || fail "new build (logs: $out/build-new.*.log)"
echo "built both in $((SECONDS - start)) s"

# The runs: a name and bench_gemm's arguments.
runs=(
  "mxfp8 auto (swapped)|--block-scaled mxfp8 --shapes 64x8192x8192,128x8192x8192,256x8192x8192"
  "nvfp4 auto (swapped)|--block-scaled nvfp4 --shapes 64x8192x8192,128x8192x8192,256x8192x8192"
  "mxfp4 auto (swapped)|--block-scaled mxfp4 --shapes 128x8192x8192,256x8192x8192"
  "mxfp8 sm90a converting|--block-scaled mxfp8 --kernel sm90a --shapes 128x8192x8192,4096x8192x8192"
  "nvfp4 sm90a|--block-scaled nvfp4 --kernel sm90a --shapes 128x8192x8192,4096x8192x8192"
  "mxfp4 sm90a converting|--block-scaled mxfp4 --kernel sm90a --shapes 4096x8192x8192"
  "mxfp8 sm90a fp8 wgmma|--block-scaled mxfp8 --kernel sm90a --precision fast --shapes 128x8192x8192,4096x8192x8192"
  "nvfp4 sm90a dequantizer|--block-scaled nvfp4 --kernel sm90a --tile 128x128 --shapes 4096x8192x8192"
  "bf16 stream-K|--config 128x128x64_s4_w2x1_c1x1_streamk --shapes 4096x4096x4096,2048x8192x4096"
)

# Alternate: old then new for even runs, new then old for odd ones.
rows="$out/rows.txt"
: >"$rows"
budget="${BUDGET_S:-270}"
i=0
for entry in "${runs[@]}"; do
  name="${entry%%|*}"
  if [ $((SECONDS - start)) -ge "$budget" ]; then
    echo "run $i ($name) left out: $((SECONDS - start)) s elapsed, budget $budget s"
    i=$((i + 1))
    continue
  fi
  read -r -a args <<<"${entry#*|}"
  for j in "${!args[@]}"; do args[$j]="${args[$j]//_/ }"; done
  order=(old new)
  [ $((i % 2)) -eq 1 ] && order=(new old)
  for side in "${order[@]}"; do
    log="$out/run$i-$side.log"
    if ! "$out/build-$side/bench/bench_gemm" "${args[@]}" >"$log" 2>"$log.err"; then
      echo "run $i ($name) $side failed: $(tail -2 "$log.err" | tr '\n' ' ')"
    fi
    # | shape | kernel ... | ours TFLOP/s | ...
    grep -E '^\| [0-9]+ x [0-9]+ x [0-9]+ \|' "$log" | awk -F'|' -v run="$name" -v side="$side" \
      '{gsub(/ /, "", $2); gsub(/^ +| +$/, "", $3); print run "|" $2 "|" side "|" $4 "|" $3}' >>"$rows"
  done
  i=$((i + 1))
done
echo "ran in $((SECONDS - start)) s; logs: $out"

echo
echo "| run | M x N x K | kernel (new) | old us | new us | old us / new us |"
echo "|---|---|---|---|---|---|"
awk -F'|' '
  { key = $1 "|" $2; if (!(key in seen)) { seen[key] = 1; keys[n++] = key }
    tf[key "|" $3] = $4 + 0; if ($3 == "new") kernel[key] = $5 }
  END {
    low = 0
    for (i = 0; i < n; ++i) {
      k = keys[i]; o = tf[k "|old"]; w = tf[k "|new"]; split(k, p, "|"); split(p[2], d, "x")
      flops = 2 * d[1] * d[2] * d[3]
      us_old = o > 0 ? sprintf("%.1f", flops / (o * 1e6)) : "n/a"
      us_new = w > 0 ? sprintf("%.1f", flops / (w * 1e6)) : "n/a"
      r = (o > 0 && w > 0) ? sprintf("%.3f", w / o) : "n/a"
      if (r != "n/a" && w / o < 0.98) { r = r " LOW"; ++low }
      printf "| %s | %s | %s | %s | %s | %s |\n", p[1], p[2], kernel[k], us_old, us_new, r
    }
    printf "\ngpu-template: %d shape(s), %d below 0.98\n", n, low
  }' "$rows"
