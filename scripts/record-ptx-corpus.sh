#!/usr/bin/env bash
# Records nvcc's PTX for the CUDA sources of tests/corpus into
# tests/corpus/ptx/<source>.<target>.<variant>.ptx, the recorded input of the
# corpus tests (tests/corpus/corpus.cmake: the parser's round trip, the
# simulator running nvcc's kernels, the transpiler, the difftest nvcc family).
# The build reads these files instead of running nvcc (about 450 CPU-seconds
# of a fresh build, most of it CUB); run this after changing a .cu file or to
# see what a new toolkit writes (git diff tests/corpus/ptx), then ctest.
#
# Variants: -O3 for sm_80 and sm_90a, and -G, -lineinfo and -rdc=true each
# for one target (sm_90a, sm_80, sm_90a), which keeps every flag on every
# source at about half the nvcc time of all eight pairs; sources named
# hopper_*.cu use sm_90a-only instructions and get all four for sm_90a.
# The sources are compiled from a fixed folder ($TMPDIR/warpforge-ptx-corpus)
# because -G and -lineinfo write the source's path into the PTX.
#
# Then the digest of each file's machine code as this toolkit's ptxas writes
# it goes to tests/corpus/ptx/machine-code.txt, so that the round-trip tests
# assemble only the re-emitted PTX (tests/ptx/same_machine_code.hpp): test_ptx
# is built in BUILD_DIR (default build) and its corpus round trip run once.
#
#   scripts/record-ptx-corpus.sh            # NVCC, JOBS and BUILD_DIR may be set
set -euo pipefail
cd "$(dirname "$0")/.."

nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -x "$nvcc" ] || { echo "record-ptx-corpus: no nvcc (set NVCC)" >&2; exit 1; }
jobs="${JOBS:-$(nproc)}"
out="$PWD/tests/corpus/ptx"
work="${TMPDIR:-/tmp}/warpforge-ptx-corpus"
rm -rf "$work"
mkdir -p "$work" "$out"
cp tests/corpus/*.cu "$work/"
rm -f "$out"/*.ptx

declare -A flags=([O3]="-O3" [G]="-G" [lineinfo]="-O3 -lineinfo" [rdc]="-O3 -rdc=true")
jobs_list=()
for source in "$work"/*.cu; do
  stem="$(basename "$source" .cu)"
  if [[ "$stem" == hopper_* ]]; then
    pairs="sm_90a:O3 sm_90a:G sm_90a:lineinfo sm_90a:rdc"
  else
    pairs="sm_80:O3 sm_90a:O3 sm_90a:G sm_80:lineinfo sm_90a:rdc"
  fi
  for pair in $pairs; do
    target="${pair%%:*}" variant="${pair#*:}"
    jobs_list+=("$nvcc -ptx -arch=$target ${flags[$variant]} $source -o $out/$stem.$target.$variant.ptx")
  done
done
printf '%s\n' "${jobs_list[@]}" | xargs -P "$jobs" -I{} sh -c '{}'
"$nvcc" --version | tail -2 >"$out/nvcc-version.txt"
echo "record-ptx-corpus: ${#jobs_list[@]} files in $out ($(head -1 "$out/nvcc-version.txt"))"
build="${BUILD_DIR:-build}"
cmake --build "$build" --target test_ptx
rm -f "$out/machine-code.txt"
WARPFORGE_RECORD_MACHINE_CODE="$out/machine-code.txt" "$build/tests/test_ptx" \
  --gtest_filter='NvccCorpus/RoundTrip.*:-*triton_*' --gtest_brief=1
echo "record-ptx-corpus: $(($(wc -l <"$out/machine-code.txt") - 1)) digests in $out/machine-code.txt"
