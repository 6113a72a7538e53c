# Sourced by the GPU scripts (gpu-check.sh, gpu-amax-decode.sh): the CMake arguments a
# GPU machine with the CUDA driver, CMake and a compiler but no GoogleTest
# and no network needs. GoogleTest is built from the source tree in
# $WARPFORGE_GTEST_SOURCE, else ./.gtest, else /usr/src/googletest (set in
# $gtest_source); without the DLPack header in the system include path,
# $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold dlpack/dlpack.h.
# Sets gtest_source and cmake_args (Ninja where there is one, Release).
gtest_source="${WARPFORGE_GTEST_SOURCE:-}"
if [ -z "$gtest_source" ]; then
  gtest_source="$PWD/.gtest"
  [ -f "$gtest_source/CMakeLists.txt" ] || gtest_source=/usr/src/googletest
fi
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DWARPFORGE_GTEST_SOURCE="$gtest_source")
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && cmake_args+=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)

# The preamble the GPU scripts share (call it after sourcing this file):
#   gpu_script <name> [<default build dir>]
# sets build_dir ($BUILD_DIR, else the default given, else build), out ($OUT,
# else $build_dir/gpu-<name>, made here) and jobs ($JOBS, else nproc), and an
# empty array summary, and defines `note "<line>"`, which prints
# "gpu-<name>: <line>" and keeps the line in summary for the script's last
# table (only there: a script that defines its own note keeps it); and
#   gpu_build <target>...
# configures $build_dir with cmake_args where it is not configured yet (an
# existing build dir, such as a GPU window's, only has the targets brought up
# to date: no configure, ~7 s saved) and builds the targets, logs in $out;
# where either fails it prints the errors and "gpu-<name>: FAIL: build" and
# exits 1.
gpu_script() {
  gpu_script_name="$1"
  build_dir="${BUILD_DIR:-${2:-build}}"
  out="${OUT:-$build_dir/gpu-$1}"
  jobs="${JOBS:-$(nproc)}"
  mkdir -p "$out"
  summary=()
  note() {
    summary+=("$1")
    echo "gpu-$gpu_script_name: $1"
  }
}
gpu_build() {
  : >"$out/configure.log"
  if { [ -f "$build_dir/CMakeCache.txt" ] || cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; } &&
    cmake --build "$build_dir" -j "$jobs" --target "$@" >"$out/build.log" 2>&1; then
    return 0
  fi
  grep -E "error|Error" "$out/configure.log" "$out/build.log" | head -30 ||
    tail -20 "$out/configure.log" "$out/build.log"
  echo "gpu-$gpu_script_name: FAIL: build (logs in $out)"
  exit 1
}
# budget_step NAME NEED LOG COMMAND...: COMMAND into LOG under a timeout of
# what is left of the script's budget (its `left`), when at least NEED
# seconds remain, else a note that it was skipped (step_ran 0). "== NAME"
# first; returns COMMAND's status; step_seconds is the time it took.
budget_step() {
  local name="$1" need="$2" log="$3" start=$SECONDS
  shift 3
  step_ran=0 step_seconds=0
  if [ "$(left)" -lt "$need" ]; then
    note "$name: skipped ($(left) s left, needs $need)"
    return 0
  fi
  echo "== $name"
  step_ran=1
  timeout "$(left)" "$@" >"$log" 2>&1
  local rc=$?
  step_seconds=$((SECONDS - start))
  return $rc
}
