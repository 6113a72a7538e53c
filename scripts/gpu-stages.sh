# Sourced by a GPU script (scripts/gpu-attn-fwd.sh): its stages under one
# time budget, and its build. The script sets `name` (its log prefix),
# `build_dir`, `out` and `budget` (seconds from its start) first; then
#   build_targets T...       configure BUILD_DIR where it is not
#                            (scripts/gpu-build-args.sh), build the targets
#                            (a no-op where built); exits on failure;
#   stage NAME LIMIT LOG CMD...   CMD under timeout (LIMIT, at most what is
#                            left of the budget), its output to LOG, a row of
#                            the summary (`rows`; `status` FAIL on an error);
#   summary                  the rows, and the exit status.
declare -a rows=()
status=PASS

left() { local s=$((budget - SECONDS)); echo $((s > 1 ? s : 1)); }

stage() {
  local stage_name="$1" limit="$2" log="$3" start=$SECONDS
  shift 3
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$? result=ok
  [ $rc -eq 124 ] && result="TIMED OUT after ${limit}s" && status=FAIL
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && result="exit $rc (log: $log)" && status=FAIL
  rows+=("$(printf '| %-34s | %-40s | %4ss |' "$stage_name" "$result" $((SECONDS - start)))")
}

build_targets() {
  [ -f "$build_dir/CMakeCache.txt" ] || { source scripts/gpu-build-args.sh &&
    cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; } ||
    { echo "$name: FAIL: configure (log: $out/configure.log)"; exit 1; }
  local targets=("$@")
  grep -q "_warpforge" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=(_warpforge)
  cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -20; echo "$name: FAIL: build (log: $out/build.log)"; exit 1; }
}

summary() {
  echo
  echo "$name ($(date -u +%Y-%m-%dT%H:%MZ), ${SECONDS}s):"
  printf '| %-34s | %-40s | %5s |\n|---|---|---|\n' stage result time
  printf '%s\n' "${rows[@]}"
  echo "$name: $status"
  [ "$status" = PASS ]
}
