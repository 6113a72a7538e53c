# The round-trip corpus: PTX that nvcc wrote for the CUDA sources in this
# folder, recorded in ptx/ as <source>.<target>.<variant>.ptx by
# scripts/record-ptx-corpus.sh (which says which flags make each variant) and
# copied here into ${WARPFORGE_PTX_CORPUS_DIR}: nvcc's real output for every
# build, with or without a CUDA toolkit, at no nvcc time (compiling it at
# build time cost about 450 CPU-seconds, a fifth of a fresh build, for output
# that changes only with the sources or the toolkit).
# Triton's PTX for the kernels of triton_kernels.py joins them as
# triton_<kernel>.<target>.lineinfo.ptx where Python imports triton (a dependency of
# the torch wheel that scripts/install-deps.sh installs) and ptxas exists: Triton
# compiles for an explicit target without a GPU, in about ten seconds for all of them.
find_program(WARPFORGE_NVCC nvcc HINTS /usr/local/cuda/bin)
set(WARPFORGE_PTX_CORPUS_DIR ${CMAKE_BINARY_DIR}/ptx_corpus)
file(MAKE_DIRECTORY ${WARPFORGE_PTX_CORPUS_DIR})
set(WARPFORGE_TRITON_CORPUS 0)

file(GLOB recorded_corpus CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ptx/*.ptx)
set(corpus_outputs)
foreach(file ${recorded_corpus})
  get_filename_component(name ${file} NAME)
  configure_file(${file} ${WARPFORGE_PTX_CORPUS_DIR}/${name} COPYONLY)
  list(APPEND corpus_outputs ${WARPFORGE_PTX_CORPUS_DIR}/${name})
endforeach()
if(WARPFORGE_NVCC)
  # Triton: triton_kernels.py --list names the files (and fails where Python
  # cannot import triton); one run writes them all.
  set(triton_outputs)
  if(Python_Interpreter_FOUND)  # (CMakeLists.txt)
    execute_process(COMMAND ${Python_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py --list
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
      COMMAND ${CMAKE_COMMAND} -E env TRITON_DEFAULT_FP_FUSION=1 ${Python_EXECUTABLE}
              ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py ${WARPFORGE_PTX_CORPUS_DIR} ${nvcc_dir}/ptxas
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.py
      COMMENT "Triton: PTX of triton_kernels.py for sm_80 and sm_90a"
      VERBATIM)
    list(APPEND corpus_outputs ${triton_outputs})
  else()
    message(STATUS "triton not importable by Python: the corpus has no Triton PTX (tests/corpus/triton_kernels.py)")
  endif()
endif()
# Every corpus file, for the transpiler's round trip of them all (transpiler.cmake).
set(WARPFORGE_PTX_CORPUS_FILES ${corpus_outputs})
add_custom_target(ptx_corpus DEPENDS ${corpus_outputs})
add_dependencies(test_ptx ptx_corpus)
# test_sim and test_gpu run nvcc's kernels (hopper_wgmma, sim_*, printf, reduce_cg ...)
add_dependencies(test_sim ptx_corpus)
add_dependencies(test_gpu ptx_corpus)
foreach(test_program test_ptx test_sim test_gpu)
  target_compile_definitions(${test_program} PRIVATE WARPFORGE_PTX_CORPUS_DIR="${WARPFORGE_PTX_CORPUS_DIR}"
                                                     WARPFORGE_TRITON_CORPUS=${WARPFORGE_TRITON_CORPUS})
endforeach()
