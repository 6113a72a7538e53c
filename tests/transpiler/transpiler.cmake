# The transpiler's end-to-end test: at build time write_transpiled_sources
# transpiles the built-in example kernels and a few nvcc- and Triton-generated
# corpus files (corpus.cmake) into C++, which is compiled into test_transpiler;
# the test checks that each build_<name>() equals the parsed input and that
# its PTX assembles to the input's machine code. Without nvcc only the
# built-in kernels and the hand-written inputs/*.ptx are transpiled and the
# corpus test skips, saying why.
target_link_libraries(test_transpiler PRIVATE warpforge_transpiler)
# The machine-code comparison of tests/ptx's corpus round trip.
target_sources(test_transpiler PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../ptx/same_machine_code.cpp
                                       ${CMAKE_CURRENT_LIST_DIR}/../ptx/cubin_sections.cpp)

add_executable(write_transpiled_sources ${CMAKE_CURRENT_LIST_DIR}/generator/write_transpiled_sources.cpp)
target_link_libraries(write_transpiled_sources PRIVATE warpforge_examples warpforge_transpiler)

# A representative set: hopper_wgmma: wgmma, TMA, and an mbarrier wait loop in
# a nested block; its -G build adds debug sections, .loc and locals.
# device_calls (-rdc): .func device functions, prototypes and call blocks.
# mma_sync: mma.sync and ldmatrix. inline_asm: labels in sibling asm blocks,
# the `{ .reg .pred %p1; ... }` block of __syncthreads_or that hides the
# function's %p1, constant expressions. hopper_cuda_ptx: libcu++'s bulk copies
# and mbarrier calls. cg_scan: cooperative groups' scans and grid sync.
# cub_histogram: a CUB algorithm (shared-memory atomics, look-back-free tiles).
# Triton: softmax (shuffle reductions, DWARF sections) and the sm_90a matmul
# (wgmma from Triton's pipeliner).
set(transpiled_corpus hopper_wgmma.sm_90a.O3 hopper_wgmma.sm_90a.G device_calls.sm_90a.rdc mma_sync.sm_80.O3
    inline_asm.sm_80.O3 hopper_cuda_ptx.sm_90a.O3 cg_scan.sm_80.O3 cub_histogram.sm_90a.O3)
if(WARPFORGE_TRITON_CORPUS)
  list(APPEND transpiled_corpus triton_softmax.sm_80.lineinfo triton_matmul.sm_90a.lineinfo)
endif()
# The whole corpus (the debug builds of CUB's algorithms transpile to C++ of
# tens of thousands of lines, minutes of GCC each on two cores): too slow for
# `make test`; scripts/transpile-large-corpus.sh turns this on.
option(WARPFORGE_TRANSPILE_LARGE_CORPUS "Round-trip every corpus file through the transpiler" OFF)
if(WARPFORGE_TRANSPILE_LARGE_CORPUS)
  set(transpiled_corpus)
  foreach(file ${WARPFORGE_PTX_CORPUS_FILES})
    get_filename_component(input ${file} NAME)
    string(REGEX REPLACE "\\.ptx$" "" input ${input})
    list(APPEND transpiled_corpus ${input})
  endforeach()
endif()
set(transpiled_dir ${CMAKE_BINARY_DIR}/transpiled)
set(transpiled_sources ${transpiled_dir}/builtins.cpp ${transpiled_dir}/transpiled_inputs.cpp)
set(transpiled_args)
set(transpiled_ptx)
# Hand-written PTX in inputs/ (scoped names, constant expressions): transpiled
# with or without nvcc.
file(GLOB transpiled_handwritten CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/inputs/*.ptx)
foreach(file ${transpiled_handwritten})
  get_filename_component(input ${file} NAME_WE)
  string(MAKE_C_IDENTIFIER ${input} id)
  list(APPEND transpiled_args ${input}=${file})
  list(APPEND transpiled_ptx ${file})
  list(APPEND transpiled_sources ${transpiled_dir}/corpus_${id}.cpp)
endforeach()
target_compile_definitions(test_transpiler PRIVATE WARPFORGE_TRANSPILER_INPUTS_DIR="${CMAKE_CURRENT_LIST_DIR}/inputs")
if(WARPFORGE_NVCC)
  foreach(input ${transpiled_corpus})
    string(MAKE_C_IDENTIFIER ${input} id)
    list(APPEND transpiled_args ${input}=${WARPFORGE_PTX_CORPUS_DIR}/${input}.ptx)
    list(APPEND transpiled_ptx ${WARPFORGE_PTX_CORPUS_DIR}/${input}.ptx)
    list(APPEND transpiled_sources ${transpiled_dir}/corpus_${id}.cpp)
  endforeach()
  list(LENGTH transpiled_corpus corpus_count)
  target_compile_definitions(test_transpiler PRIVATE WARPFORGE_TRANSPILED_CORPUS_COUNT=${corpus_count})
else()
  target_compile_definitions(test_transpiler PRIVATE WARPFORGE_TRANSPILED_CORPUS_COUNT=0)
endif()
add_custom_command(OUTPUT ${transpiled_sources}
  COMMAND write_transpiled_sources ${transpiled_dir} ${transpiled_args}
  DEPENDS write_transpiled_sources ${transpiled_ptx}
  COMMENT "Transpiling the round-trip inputs to C++"
  VERBATIM)
target_sources(test_transpiler PRIVATE ${transpiled_sources})
# The generated functions are long straight-line builder code that runs once:
# GCC's optimiser buys nothing there and costs most of their compile time.
set_source_files_properties(${transpiled_sources} PROPERTIES COMPILE_OPTIONS -O0 SKIP_PRECOMPILE_HEADERS ON)
