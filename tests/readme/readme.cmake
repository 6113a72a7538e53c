# README.md's C++ blocks, compiled against the build tree's package and run
# (tests/readme/extract_programs.cpp says how blocks become programs).
add_executable(readme_extract_programs ${CMAKE_CURRENT_LIST_DIR}/extract_programs.cpp)
# README.md's blocks, and those of the docs pages that carry runnable examples.
foreach(page "README.md;readme_code;10" "docs/AMD.md;amd_doc_code;4")
  list(GET page 0 file)
  list(GET page 1 test)
  list(GET page 2 seconds)
  add_test(NAME ${test}
           COMMAND ${CMAKE_COMMAND} -DEXTRACT=$<TARGET_FILE:readme_extract_programs>
                   -DREADME=${PROJECT_SOURCE_DIR}/${file} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/${test}
                   -DPROJECT_DIR=${CMAKE_CURRENT_LIST_DIR}/project -DPACKAGE_DIR=${PROJECT_BINARY_DIR}
                   -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -P ${CMAKE_CURRENT_LIST_DIR}/run_readme.cmake)
  # COST: seconds it takes from a fresh build (it compiles the page's programs),
  # so that ctest -j starts README's early.
  set_tests_properties(${test} PROPERTIES LABELS readme COST ${seconds})
endforeach()
