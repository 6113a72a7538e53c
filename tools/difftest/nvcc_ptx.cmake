# The nvcc family of the differential harness (tools/difftest/nvcc_family.cpp)
# runs nvcc's own PTX for CUDA sources of tests/corpus: the -O3 files that
# scripts/record-ptx-corpus.sh records in tests/corpus/ptx
# (<source>.<target>.O3.ptx, the names tests/sim/nvcc_kernel_runs.hpp reads),
# read from there so that the recording script, which builds the harness
# without the test suite, has them too. Without them the family says it
# cannot run: recording it is refused and its replay skipped.
set(WARPFORGE_DIFFTEST_NVCC_DIR ${PROJECT_SOURCE_DIR}/tests/corpus/ptx)
set(WARPFORGE_DIFFTEST_NVCC 0)
if(EXISTS ${WARPFORGE_DIFFTEST_NVCC_DIR}/sim_calls.sm_90a.O3.ptx)
  set(WARPFORGE_DIFFTEST_NVCC 1)
endif()
target_compile_definitions(warpforge_difftest PRIVATE
  WARPFORGE_PTX_CORPUS_DIR="${WARPFORGE_DIFFTEST_NVCC_DIR}" WARPFORGE_DIFFTEST_NVCC=${WARPFORGE_DIFFTEST_NVCC})
