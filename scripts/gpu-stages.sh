# Sourced by the GPU scripts that run in a hard time limit (gpu-attn-bwd.sh,
# gpu-attn-decode.sh):
# their stages, each under `timeout` within what is left of BUDGET seconds
# since the script started, and the summary table printed last.
#   NAME=gpu-x budget=60; source scripts/gpu-stages.sh
#   stage "C++ bench" 12 "$out/bench.log" "$bench" --quick
#   summary   # the table; exits non-zero when a stage failed
# build_targets T... (with build_dir and out set) configures BUILD_DIR where
# it is not (scripts/gpu-build-args.sh) and builds the targets and the
# Python modules (_warpforge, and _warpforge_torch where torch was found):
# a no-op where built; exits on failure.
# The preamble: a script sets NAME (gpu-x) and budget (its default), then
# sources this file, which sets build_dir ($BUILD_DIR, else build), out ($OUT,
# else $build_dir/$NAME, made here) and budget ($BUDGET where set).
build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/$NAME}"
budget="${BUDGET:-$budget}"
mkdir -p "$out"
declare -a rows=()
status=PASS

left() { local s=$((budget - SECONDS)); echo $((s > 1 ? s : 1)); }

# stage NAME LIMIT LOG COMMAND...: COMMAND under timeout (at most what is
# left), its output to LOG; a row of the summary.
stage() {
  local name="$1" limit="$2" log="$3" start=$SECONDS
  shift 3
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$? result=ok
  [ $rc -eq 124 ] && result="TIMED OUT after ${limit}s" && status=FAIL
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && result="exit $rc (log: $log)" && status=FAIL
  rows+=("$(printf '| %-40s | %-40s | %4ss |' "$name" "$result" $((SECONDS - start)))")
}

build_targets() {
  [ -f "$build_dir/CMakeCache.txt" ] || { source scripts/gpu-build-args.sh &&
    cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; } ||
    { echo "$NAME: FAIL: configure (log: $out/configure.log)"; exit 1; }
  local targets=("$@") t
  for t in _warpforge _warpforge_torch; do
    grep -q "$t" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=("$t")
  done
  cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -20; echo "$NAME: FAIL: build (log: $out/build.log)"; exit 1; }
}

summary() {
  echo
  echo "$NAME ($(date -u +%Y-%m-%dT%H:%MZ), ${SECONDS}s):"
  printf '| %-40s | %-40s | %5s |\n|---|---|---|\n' stage result time
  printf '%s\n' "${rows[@]}"
  echo "$NAME: $status"
  [ "$status" = PASS ]
}
