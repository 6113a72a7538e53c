# The round-trip corpus: PTX that nvcc writes for the CUDA sources in this
# folder, generated at build time into ${WARPFORGE_PTX_CORPUS_DIR} as
# <source>.<target>.<variant>.ptx: -O3 for both targets, and -G, -lineinfo and
# -rdc each for one of them (sm_90a, sm_80, sm_90a), which keeps every flag on
# every source at about half the nvcc time of all eight pairs. Sources named
# hopper_*.cu use sm_90a-only instructions and get only that target. Without
# nvcc the folder stays empty and the round-trip tests skip, saying why.
# Triton's PTX for the kernels of triton_kernels.py joins them as
# triton_<kernel>.<target>.lineinfo.ptx where Python imports triton (a dependency of
# the torch wheel that scripts/install-deps.sh installs): Triton compiles for
# an explicit target without a GPU, in about ten seconds for all of them.
find_program(WARPFORGE_NVCC nvcc HINTS /usr/local/cuda/bin)
set(WARPFORGE_PTX_CORPUS_DIR ${CMAKE_BINARY_DIR}/ptx_corpus)
file(MAKE_DIRECTORY ${WARPFORGE_PTX_CORPUS_DIR})
set(WARPFORGE_TRITON_CORPUS 0)

if(WARPFORGE_NVCC)
  set(variants O3 G lineinfo rdc)
  set(flags_O3 -O3)
  set(flags_G -G)
  set(flags_lineinfo -O3 -lineinfo)
  set(flags_rdc -O3 -rdc=true)
  set(target_of_G sm_90a)
  set(target_of_lineinfo sm_80)
  set(target_of_rdc sm_90a)
  file(GLOB corpus_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cu)
  set(corpus_outputs)
  foreach(source ${corpus_sources})
    get_filename_component(stem ${source} NAME_WE)
    set(targets sm_80 sm_90a)
    if(stem MATCHES "^hopper_")
      set(targets sm_90a)
    endif()
    foreach(target ${targets})
      foreach(variant ${variants})
        if(NOT stem MATCHES "^hopper_" AND NOT variant STREQUAL "O3" AND
           NOT target STREQUAL "${target_of_${variant}}")
          continue()
        endif()
        set(output ${WARPFORGE_PTX_CORPUS_DIR}/${stem}.${target}.${variant}.ptx)
        add_custom_command(OUTPUT ${output}
          COMMAND ${WARPFORGE_NVCC} -ptx -arch=${target} ${flags_${variant}} ${source} -o ${output}
          DEPENDS ${source}
          COMMENT "nvcc -ptx ${stem}.cu for ${target} (${variant})"
          VERBATIM)
        list(APPEND corpus_outputs ${output})
      endforeach()
    endforeach()
  endforeach()
  # Triton: triton_kernels.py --list names the files (and fails where Python
  # cannot import triton); one run writes them all.
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(triton_outputs)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py --list
                            ${WARPFORGE_PTX_CORPUS_DIR}
                    RESULT_VARIABLE triton_missing OUTPUT_VARIABLE triton_outputs ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(triton_missing EQUAL 0)
      set(WARPFORGE_TRITON_CORPUS 1)
      string(REPLACE "\n" ";" triton_outputs "${triton_outputs}")
    endif()
  endif()
  if(WARPFORGE_TRITON_CORPUS)
    get_filename_component(nvcc_dir ${WARPFORGE_NVCC} DIRECTORY)
    add_custom_command(OUTPUT ${triton_outputs}
      COMMAND ${CMAKE_COMMAND} -E env TRITON_DEFAULT_FP_FUSION=1 ${Python3_EXECUTABLE}
              ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py ${WARPFORGE_PTX_CORPUS_DIR} ${nvcc_dir}/ptxas
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py
      COMMENT "Triton: PTX of triton_kernels.py for sm_80 and sm_90a"
      VERBATIM)
    list(APPEND corpus_outputs ${triton_outputs})
  else()
    message(STATUS "triton not importable by Python: the corpus has no Triton PTX (tests/corpus/triton_kernels.py)")
  endif()
  # Every corpus file, for the transpiler's round trip of them all (transpiler.cmake).
  set(WARPFORGE_PTX_CORPUS_FILES ${corpus_outputs})
  add_custom_target(ptx_corpus DEPENDS ${corpus_outputs})
  add_dependencies(test_ptx ptx_corpus)
  # test_sim and test_gpu run nvcc's kernels (hopper_wgmma, sim_*, printf, reduce_cg ...)
  add_dependencies(test_sim ptx_corpus)
  add_dependencies(test_gpu ptx_corpus)
endif()
foreach(test_program test_ptx test_sim test_gpu)
  target_compile_definitions(${test_program} PRIVATE WARPFORGE_PTX_CORPUS_DIR="${WARPFORGE_PTX_CORPUS_DIR}"
                                                     WARPFORGE_TRITON_CORPUS=${WARPFORGE_TRITON_CORPUS})
endforeach()
