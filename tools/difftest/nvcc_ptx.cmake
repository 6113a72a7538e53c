# The nvcc family of the differential harness (tools/difftest/nvcc_family.cpp)
# runs nvcc's own PTX for CUDA sources of tests/corpus, compiled here at build
# time with -O3, the flags a user's build has, into
# ${WARPFORGE_DIFFTEST_NVCC_DIR}/<source>.<target>.O3.ptx (the corpus's names,
# tests/corpus/corpus.cmake, so tests/sim/nvcc_kernel_runs.hpp finds them; a
# folder of their own, because the recording script builds the harness without
# the test suite). Without nvcc the directory stays empty and the family says
# it cannot run: recording it is refused and its replay skipped.
find_program(WARPFORGE_NVCC nvcc HINTS /usr/local/cuda/bin)
set(WARPFORGE_DIFFTEST_NVCC_DIR ${CMAKE_BINARY_DIR}/difftest_nvcc)
file(MAKE_DIRECTORY ${WARPFORGE_DIFFTEST_NVCC_DIR})
# Source and target: what nvcc_family.cpp's units load.
set(difftest_nvcc_ptx
    sim_calls.sm_90a sim_calls.sm_80 sim_warp.sm_90a reduce_cg.sm_90a printf.sm_90a
    mma_sync.sm_80 wmma.sm_80 wmma.sm_90a wmma_forms.sm_80 wmma_forms.sm_90a)
set(difftest_nvcc_outputs)
if(WARPFORGE_NVCC)
  foreach(item ${difftest_nvcc_ptx})
    string(REPLACE "." ";" parts ${item})
    list(GET parts 0 stem)
    list(GET parts 1 target)
    set(output ${WARPFORGE_DIFFTEST_NVCC_DIR}/${item}.O3.ptx)
    add_custom_command(OUTPUT ${output}
      COMMAND ${WARPFORGE_NVCC} -ptx -arch=${target} -O3 ${PROJECT_SOURCE_DIR}/tests/corpus/${stem}.cu -o ${output}
      DEPENDS ${PROJECT_SOURCE_DIR}/tests/corpus/${stem}.cu
      COMMENT "nvcc -ptx ${stem}.cu for ${target} (the difftest nvcc family)"
      VERBATIM)
    list(APPEND difftest_nvcc_outputs ${output})
  endforeach()
  add_custom_target(difftest_nvcc_ptx DEPENDS ${difftest_nvcc_outputs})
  add_dependencies(warpforge_difftest difftest_nvcc_ptx)
  target_compile_definitions(warpforge_difftest PRIVATE
    WARPFORGE_PTX_CORPUS_DIR="${WARPFORGE_DIFFTEST_NVCC_DIR}" WARPFORGE_DIFFTEST_NVCC=1)
else()
  message(STATUS "nvcc not found: the difftest nvcc family cannot run (tools/difftest/nvcc_ptx.cmake)")
  target_compile_definitions(warpforge_difftest PRIVATE
    WARPFORGE_PTX_CORPUS_DIR="${WARPFORGE_DIFFTEST_NVCC_DIR}" WARPFORGE_DIFFTEST_NVCC=0)
endif()
