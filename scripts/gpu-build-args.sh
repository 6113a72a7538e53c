# Sourced by the GPU scripts (gpu-check.sh, gpu-moe.sh): the CMake arguments a
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
