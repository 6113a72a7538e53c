#!/usr/bin/env bash
# Runs NVIDIA compute-sanitizer's memcheck, racecheck and synccheck on
# `warpforge gemm --device cuda --check` for a small shape and an edge-tile
# shape (no dimension a multiple of any tile, unaligned K), and one large
# enough for the large-tile configuration, per GEMM kernel, and for sm90a a
# 2-CTA cluster, a ping-pong, a stream-K and a 160-wide tile configuration
# (sm80, and sm90a where this build has it and the GPU runs it); then on
# `warpforge gemm-amax --device cuda --check` for each format's kernel (the
# GPU's path) on small, edge-tile, wide-tile, 2-CTA cluster, narrow-tile and split-K shapes. Fails if any tool reports
# an error or any check fails. Needs a GPU, compute-sanitizer on
# PATH (or in /usr/local/cuda/bin) and a built build/warpforge.
#
#   scripts/sanitize-gemm.sh            # BUILD_DIR (default build) may be set
#   ONLY=cluster scripts/sanitize-gemm.sh   # only the runs whose label matches (grep -E)
set -uo pipefail
cd "$(dirname "$0")/.."

warpforge="${BUILD_DIR:-build}/warpforge"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
[ -x "$warpforge" ] || { echo "sanitize-gemm: FAIL: $warpforge not built"; exit 1; }
[ -x "$sanitizer" ] || { echo "sanitize-gemm: FAIL: compute-sanitizer not found"; exit 1; }

# name: arguments of `warpforge gemm`. "large" is big enough (over 132 tiles
# of 128x128) for the heuristic's large-tile configuration, with edges too.
# sm90a's shapes keep the leading dimensions 16-byte multiples (TMA's rule;
# other shapes go to sm80) while no dimension is a multiple of its tiles.
shapes=(
  "small:--m 128 --n 128 --k 64 --layout nn --out-dtype f32"
  "edge:--m 77 --n 45 --k 37 --layout tn --out-dtype bf16 --beta 1"
  "large:--m 1500 --n 1601 --k 100 --layout nt --out-dtype f32"
)
sm90a_shapes=(
  "small:--m 128 --n 128 --k 64 --layout nn --out-dtype f32"
  "edge:--m 77 --n 136 --k 72 --layout nn --out-dtype bf16 --beta 1"
  "large:--m 1500 --n 1608 --k 104 --layout nt --out-dtype f32"
  "cluster:--m 296 --n 520 --k 136 --layout nn --out-dtype bf16 --config '128x256x64 s3 w2x1 c2x1'"
  "pingpong:--m 296 --n 520 --k 136 --layout tn --out-dtype bf16 --beta 1 --config '128x128x64 s4 w1x1 c1x1 pingpong'"
  # 9 units of 18 k-blocks on every SM: runs of one or two k-blocks, a dozen
  # partial sums added into each unit.
  "streamk:--m 264 --n 520 --k 1096 --layout nn --out-dtype bf16 --config '128x256x64 s3 w2x1 c1x1 streamk'"
  # Tiles 160 wide: each tile's last 32 columns stored from registers, the
  # last tile's wholly past N, C read.
  "tail:--m 296 --n 520 --k 136 --layout nt --out-dtype bf16 --beta 1 --config '128x160x64 s4 w2x1 c1x1'"
)
log_dir="${BUILD_DIR:-build}/sanitize-gemm"
mkdir -p "$log_dir"
failures=0
runs=0
# sanitize LABEL ARGS...: every tool on `warpforge ARGS --device cuda --check`.
sanitize() {
  local label="$1"
  shift
  [ -n "${ONLY:-}" ] && ! grep -qE "$ONLY" <<<"$label" && return 0
  for tool in memcheck racecheck synccheck; do
    log="$log_dir/${label// /-}-$tool.log"
    runs=$((runs + 1))
    # eval: the arguments may hold a quoted --config
    if eval "\"\$sanitizer\" --tool $tool --error-exitcode 99 \"\$warpforge\" $* --device cuda --check" >"$log" 2>&1 &&
      grep -q "COMPUTE-SANITIZER" "$log" && grep -q "check: .*PASS" "$log"; then
      echo "ok    $label $tool"
    else
      echo "FAIL  $label $tool (log: $log)"
      grep -E "ERROR|Invalid|Race|hazard|check:" "$log" | head -10
      failures=$((failures + 1))
    fi
  done
}
for kernel in sm80 sm90a; do
  # A kernel this build lacks, or that refuses this GPU, is skipped and said so.
  if ! probe="$("$warpforge" gemm --device cuda --kernel "$kernel" --m 128 --n 128 --k 64 2>&1)"; then
    echo "sanitize-gemm: skipping kernel $kernel: $(tail -1 <<<"$probe")"
    continue
  fi
  kernel_shapes=("${shapes[@]}")
  [ "$kernel" = sm90a ] && kernel_shapes=("${sm90a_shapes[@]}")
  for entry in "${kernel_shapes[@]}"; do
    sanitize "$kernel ${entry%%:*}" gemm --kernel "$kernel" "${entry#*:}"
  done
done
# Block-scaled GEMM + amax on the path the GPU takes: 128x256 tiles on the
# converting warpgroups where they fill the SMs, else MXFP8's FP8 wgmma on
# the codes and FP4's dequantizer warpgroup; edges in every dimension,
# L > 1, every tile width, and split-K (on a GPU of 132 SMs the small and
# edge shapes have few enough tiles to split their K; the decode entries
# too).
amax_shapes=(
  "mxfp8 small:--m 256 --n 256 --k 256 --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16"
  "mxfp8 edge:--m 200 --n 136 --k 160 --l 3 --ab e5m2 --sf e8m0 --sf-vec 32 --c f32"
  "nvfp4 small:--m 128 --n 256 --k 256 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16"
  "nvfp4 edge:--m 130 --n 272 --k 96 --l 2 --ab e2m1 --sf e4m3 --sf-vec 16 --c f16"
  "mxfp4 edge:--m 200 --n 136 --k 192 --l 3 --ab e2m1 --sf e8m0 --sf-vec 32 --c bf16"
  # over 132 tiles of 128x128, under 132 of 128x256: one dequantizer warpgroup
  "mxfp4 large:--m 1536 --n 1672 --k 160 --ab e2m1 --sf e8m0 --sf-vec 32 --c bf16"
  # over 132 tiles of 128x256, ragged: the converting warpgroups
  "nvfp4 wide:--m 2100 --n 2104 --k 224 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16"
  "mxfp4 wide:--m 2100 --n 2104 --k 96 --l 2 --ab e2m1 --sf e8m0 --sf-vec 32 --c f16"
  "mxfp8 wide:--m 2100 --n 2104 --k 208 --ab e4m3 --sf e8m0 --sf-vec 32 --c f32"
  # the same tiles in 2-CTA clusters (an odd count of 128-row tiles: the last rank 1 has none)
  "nvfp4 cluster:--m 2100 --n 2104 --k 224 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16 --tile 128x256 --cluster 2x1"
  "mxfp4 cluster:--m 1300 --n 2104 --k 96 --l 2 --ab e2m1 --sf e8m0 --sf-vec 32 --c f16 --tile 128x256 --cluster 2x1"
  "mxfp8 cluster:--m 2100 --n 2104 --k 208 --ab e4m3 --sf e8m0 --sf-vec 32 --c f32 --tile 128x256 --cluster 2x1"
  # 80 tiles of 128x128: 128x64 tiles, no split
  "nvfp4 narrow:--m 1024 --n 1280 --k 128 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16 --kernel sm90a"
  "mxfp8 narrow:--m 1024 --n 1280 --k 384 --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16 --kernel sm90a"
  # decode-like, ragged N and an odd count of K blocks: split-K
  "nvfp4 decode:--m 128 --n 520 --k 1088 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16 --kernel sm90a"
  "mxfp8 decode:--m 128 --n 520 --k 1088 --ab e4m3 --sf e8m0 --sf-vec 32 --c f32 --kernel sm90a"
  # the pre-pass path (A and B converted to bf16 in the workspace, then the
  # bf16 GEMM with its amax epilogue): ragged, L > 1, FP4 and FP8
  "nvfp4 prepass:--m 1100 --n 1048 --k 224 --l 2 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16 --kernel prepass"
  "mxfp8 prepass:--m 300 --n 264 --k 320 --ab e5m2 --sf e8m0 --sf-vec 32 --c f32 --kernel prepass"
  # the skinny kernel at a decode shape (K a multiple of its 128-code chunk), ragged N, split K
  "mxfp8 skinny:--m 16 --n 1048 --k 2176 --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16 --kernel skinny"
  # the swapped kernel (its A pre-pass, then B's codes into wgmma's fragments):
  # ragged M and N with K split 2 ways in a cluster (the sums meet in shared
  # memory), 16 ways (through the workspace), 256-token tiles over two
  # batches, and one token
  "mxfp8 swapped:--m 200 --n 520 --k 1088 --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16"
  "mxfp4 swapped split 16:--m 72 --n 520 --k 8192 --ab e2m1 --sf e8m0 --sf-vec 32 --c f32"
  "nvfp4 swapped:--m 600 --n 264 --k 512 --l 2 --ab e2m1 --sf e4m3 --sf-vec 16 --c f16"
  "mxfp4 swapped:--m 1 --n 40 --k 64 --ab e2m1 --sf e8m0 --sf-vec 32 --c f32 --kernel swapped"
  # FP8 decode shapes, which automatic selection gives the swapped kernel:
  # 16 tokens with K split 4 ways in a cluster, one token split 8 ways
  # through the workspace
  "mxfp8 swapped decode:--m 16 --n 1048 --k 2176 --ab e4m3 --sf e8m0 --sf-vec 32 --c bf16"
  "mxfp8 swapped one token:--m 1 --n 264 --k 4096 --ab e5m2 --sf e8m0 --sf-vec 32 --c f32"
)
for entry in "${amax_shapes[@]}"; do
  sanitize "gemm-amax ${entry%%:*}" gemm-amax "${entry#*:}"
done
if [ "$runs" -eq 0 ]; then
  echo "sanitize-gemm: FAIL: no kernel ran"
  exit 1
fi
if [ "$failures" -ne 0 ]; then
  echo "sanitize-gemm: FAIL: $failures of $runs sanitizer runs reported errors"
  exit 1
fi
echo "sanitize-gemm: PASS: $runs sanitizer runs clean"
