# Sourced by scripts/gpu-triton-mufu.sh and gpu-triton-check.sh: builds only
# warpforge-difftest in $build_dir (an already configured directory is only
# built; otherwise it is configured as scripts/gpu-build-args.sh says, as the
# other GPU scripts do, since the directory may be shared) and sets `tool`.
# Calls `fail` (the sourcing script's) when it cannot.
mkdir -p "$build_dir"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  source scripts/gpu-build-args.sh
  [ -f "$gtest_source/CMakeLists.txt" ] || cmake_args+=(-DWARPFORGE_TESTS=OFF)
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$build_dir/difftest-configure.log" 2>&1 ||
    { tail -20 "$build_dir/difftest-configure.log"; fail "cmake configure failed"; }
fi
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target warpforge_difftest_cli >"$build_dir/difftest-build.log" 2>&1 ||
  { grep -E "error|Error" "$build_dir/difftest-build.log" | head -20; fail "build of warpforge_difftest_cli failed"; }
tool="$build_dir/warpforge-difftest"
