#!/usr/bin/env bash
# With PART=tutorials (PART=check, the default, and PART=mufu: below),
# records the GPU truth of warpforge.triton (issue 45) on an H100 or H200:
#  - every Triton tutorial case (python/warpforge/triton/tutorials) for
#    sm_80 and sm_90a: Triton compiles each kernel for the target, its PTX
#    runs on the GPU through warpforge's runtime (the CUDA driver's JIT,
#    which also runs sm_80's PTX on an sm_90 GPU), and the launches and
#    output bytes are written, one file per case and target
#    (python -m warpforge.triton.recording record); for sm_90a each file also
#    says whether Triton's own launch of its cubin gave the same bytes;
#  - the difftest family triton_ptx (scripts/record-gpu-truth.sh, which this
#    script runs with FAMILIES=triton_ptx);
# then replays all of them on the simulator, here, and prints the table of
# agreement last.
#
#   OUT=/path PART=tutorials scripts/gpu-triton.sh        (default OUT: ./gpu-triton-out)
#
# $OUT receives the recordings at their paths in the repository, so that
# copying $OUT/* into the checkout and committing is all that is left:
#   $OUT/tests/gpu_truth/triton/<case>.<target>.json.gz   (one per case and target)
#   $OUT/tests/gpu_truth/triton_ptx.truth                 (the difftest family)
# and its logs and tables under $OUT/build-triton/ (ignored by git). The table
# printed last has one row per tutorial kernel and target: recorded or not
# (and why), and the simulator's replay of the GPU's bytes. The work
# (Triton's cache) stays in the build directory. Needs the CUDA driver,
# CMake, a C++20 compiler, nanobind, torch and Triton for python3 (PYTHON to
# choose another); no GoogleTest. Without the DLPack header in the system
# include path, $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold
# dlpack/dlpack.h. BUILD_DIR (its build is BUILD_DIR-triton, default build-triton), JOBS (default nproc) and
# BUDGET (seconds of wall time in all, default 280: the recordings come
# first, the difftest family and the replay get what is left) may be set;
# DEVICE=sim records on the simulator instead (the script's self-test: the
# replay must then agree everywhere); CASES="a b" records only those
# tutorial cases.
#
# PART=tutorials runs the above, reusing the extension module of BUILD_DIR
# where one is built there (FAMILIES_TOO=0 leaves the difftest family out);
# PART=mufu runs instead scripts/gpu-triton-mufu.sh, the multifunction
# unit's sweep (about 60 s with the build), then scripts/tensormap_probe.py
# (the kernel-built tensor map kernel and its variants through the driver
# alone; seconds); PART=check (the default) scripts/gpu-triton-check.sh,
# this session's GPU check (60 s).
set -uo pipefail
cd "$(dirname "$0")/.."
[ "${PART:-check}" = check ] && exec bash scripts/gpu-triton-check.sh
if [ "${PART:-check}" = mufu ]; then
  bash scripts/gpu-triton-mufu.sh
  mufu_rc=$?
  echo "gpu-triton: tensormap probe (scripts/tensormap_probe.py):"
  timeout 120 python3 scripts/tensormap_probe.py
  exit $mufu_rc
fi

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build}-triton"  # its own: it configures without the tests
prebuilt=0
if [ -n "${BUILD_DIR:-}" ] && ls "$BUILD_DIR"/python/warpforge/_warpforge.*so >/dev/null 2>&1; then
  build_dir="$BUILD_DIR"
  prebuilt=1
fi
jobs="${JOBS:-$(nproc)}"
python="${PYTHON:-python3}"
device="${DEVICE:-cuda}"
dlpack_args=()
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
command -v ccache >/dev/null && generator+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
budget="${BUDGET:-280}"
start=$(date +%s)
left() { local s=$((budget - ($(date +%s) - start))); echo $((s > 1 ? s : 1)); }  # timeout 0 would mean none
truth="$out/tests/gpu_truth"
logs="$out/build-triton"
mkdir -p "$build_dir" "$truth/triton" "$logs"
build_abs="$(cd "$build_dir" && pwd)"
work="$build_abs/gpu-triton"
rm -rf "$work"
mkdir -p "$work/difftest"
log="$logs/gpu-triton.log"
: >"$log"

fail() {
  echo "gpu-triton: FAIL: $*" | tee -a "$log"
  tail -20 "$log"
  exit 1
}

"$python" -c "import torch, triton; assert '$device' == 'sim' or torch.cuda.is_available(), 'torch sees no GPU'; \
print('gpu-triton:', torch.cuda.get_device_name() if '$device' == 'cuda' else 'the simulator', 'torch', \
torch.__version__, 'triton', triton.__version__)" 2>&1 | tee -a "$log" | grep -q "^gpu-triton:" ||
  fail "torch with a CUDA GPU and triton are needed (see $log)"

# The extension module first: the tutorial recordings, the truth that
# matters most, are made before anything else can use up the time.
if [ $prebuilt = 0 ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_PYTHON=ON \
    -DWARPFORGE_TESTS=OFF -DWARPFORGE_BENCH=OFF -DPython_EXECUTABLE="$(command -v "$python")" "${dlpack_args[@]}" \
    >>"$log" 2>&1 || fail "cmake configure failed (log: $log)"
  cmake --build "$build_dir" -j "$jobs" --target _warpforge >>"$log" 2>&1 || fail "build of _warpforge failed (log: $log)"
fi
echo "gpu-triton: built in $(($(date +%s) - start)) s" | tee -a "$log"

export PYTHONPATH="$build_abs/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_CACHE_DIR="$work/triton-cache"
case_args=()
for c in ${CASES:-}; do case_args+=(--case "$c"); done
timeout "$(left)" "$python" -m warpforge.triton.recording record "$truth/triton" --device "$device" "${case_args[@]}" \
  >"$logs/record.txt" 2>>"$log"
record_rc=$?
[ $record_rc -ge 124 ] && echo "gpu-triton: recording stopped at the time budget ($budget s)" | tee -a "$log"
cat "$logs/record.txt" >>"$log"
echo "gpu-triton: recorded in $(($(date +%s) - start)) s" | tee -a "$log"

# The difftest family (its own build of the harness, in the same directory).
difftest_rc=124
if [ "${FAMILIES_TOO:-1}" != 0 ] && [ "$(left)" -gt 30 ]; then
  BUILD_DIR="$build_dir" JOBS="$jobs" DEVICE="$device" FAMILIES=triton_ptx \
    timeout "$(left)" scripts/record-gpu-truth.sh "$work/difftest" >>"$log" 2>&1
  difftest_rc=$?
  [ -f "$work/difftest/triton_ptx.truth" ] && cp "$work/difftest/triton_ptx.truth" "$truth/"
fi

# The GPU's bytes replayed on the simulator, with what time is left (CI
# replays them too: tests/gpu_truth/triton in python/tests/test_triton_replay.py).
: >"$logs/replay.txt"
replay_rc=124
if [ "$(left)" -gt 10 ]; then
  timeout "$(left)" "$python" -m warpforge.triton.recording replay "$truth/triton" >"$logs/replay.txt" 2>>"$log"
  replay_rc=$?
fi
cat "$logs/replay.txt" >>"$log"

if [ "${FAMILIES_TOO:-1}" != 0 ]; then
  echo
  echo "gpu-triton: difftest family triton_ptx (rc $difftest_rc; 124: not run or out of time):"
  grep -E "^triton_ptx:" "$log" | tail -1
  [ -f "$truth/triton_ptx.truth" ] || echo "  not recorded (log: $log)"
fi
echo
echo "gpu-triton: $(find "$truth" -type f | wc -l) files, $(du -sh "$truth" | cut -f1), under $out/tests/gpu_truth" \
  "(copy $out/tests into the repository); done in $(($(date +%s) - start)) s"
echo "| kernel | target | recorded | simulator's replay of the GPU's bytes |"
echo "|---|---|---|---|"
awk -F' \\| ' '
  function status(line) { sub(/^\| [^|]* \| [^|]* \| /, "", line); sub(/ \|$/, "", line); return line }
  { k = $1 "|" $2; sub(/^\| /, "", k) }
  FNR == NR { replay[k] = status($0); next }
  { split(k, ct, "|"); printf "| %s | %s | %s | %s |\n", ct[1], ct[2], status($0), (k in replay) ? replay[k] : "not replayed" }
' "$logs/replay.txt" "$logs/record.txt"
[ $record_rc -eq 0 ] && [ $replay_rc -eq 0 ] && { [ $difftest_rc -eq 0 ] || [ "${FAMILIES_TOO:-1}" = 0 ]; }
