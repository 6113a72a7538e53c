# README.md's C++ blocks, compiled against the build tree's package and run
# (tests/readme/extract_programs.cpp says how blocks become programs).
add_executable(readme_extract_programs ${CMAKE_CURRENT_LIST_DIR}/extract_programs.cpp)
add_test(NAME readme_code
         COMMAND ${CMAKE_COMMAND} -DEXTRACT=$<TARGET_FILE:readme_extract_programs>
                 -DREADME=${PROJECT_SOURCE_DIR}/README.md -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/readme_test
                 -DPROJECT_DIR=${CMAKE_CURRENT_LIST_DIR}/project -DPACKAGE_DIR=${PROJECT_BINARY_DIR}
                 -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -P ${CMAKE_CURRENT_LIST_DIR}/run_readme.cmake)
set_tests_properties(readme_code PROPERTIES LABELS readme)
