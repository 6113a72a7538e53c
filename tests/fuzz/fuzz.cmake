# The fuzz targets (tests/fuzz/*_fuzzer.cpp, libFuzzer's entry point), each
# built with the standalone driver so that any compiler builds them, and run
# by ctest for a few seconds over the committed corpus and the saved
# regression inputs. scripts/fuzz.sh runs them for as long as asked (with
# libFuzzer under clang where clang is installed).
set(WARPFORGE_FUZZ_SECONDS 5 CACHE STRING "Seconds each fuzz target runs in ctest")
foreach(target parse transpile)
  add_executable(fuzz_${target} ${CMAKE_CURRENT_LIST_DIR}/${target}_fuzzer.cpp
                                ${CMAKE_CURRENT_LIST_DIR}/standalone_driver.cpp)
  target_link_libraries(fuzz_${target} PRIVATE warpforge_transpiler)
  add_test(NAME fuzz_${target}_short
           COMMAND fuzz_${target} --seconds ${WARPFORGE_FUZZ_SECONDS}
                   --crash-file ${CMAKE_CURRENT_BINARY_DIR}/fuzz_${target}-crash-input
                   ${CMAKE_CURRENT_LIST_DIR}/corpus ${CMAKE_CURRENT_LIST_DIR}/regressions)
  set_tests_properties(fuzz_${target}_short PROPERTIES LABELS fuzz TIMEOUT 120)
endforeach()
