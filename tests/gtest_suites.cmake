# Run by `cmake -P` after a GoogleTest program links (tests/CMakeLists.txt's
# warpforge_add_suites): writes OUT, one ctest entry per test suite of
# PROGRAM, named <program name>:<suite> and running --gtest_filter=<suite>.*.
# One process a suite rather than one a test: a test program's start, the
# simulator's and the kernel caches' warm-up, and ctest's own work per entry
# cost 27 ms of CPU and 64 ms of wall a test in test_ops (145.7 s wall for its
# 507 entries at -j1, 113.9 s as one process; docs/PERFORMANCE.md "Build
# time"). The output still names every test ([ RUN ] and [ OK ] lines, and
# each failure), and `ctest -R <suite>` picks a suite.
execute_process(COMMAND "${PROGRAM}" --gtest_list_tests WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --gtest_list_tests failed (${status}):\n${listing}")
endif()
get_filename_component(name "${PROGRAM}" NAME)
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  # A suite's line: "Suite." (typed suites add "  # TypeParam = ..."); its
  # tests' lines are indented.
  if(line MATCHES "^([^ ]+)\\.( |$)")
    set(entry "${name}:${CMAKE_MATCH_1}")
    string(APPEND script "add_test([==[${entry}]==] \"${PROGRAM}\" [==[--gtest_filter=${CMAKE_MATCH_1}.*]==])\n"
                         "set_tests_properties([==[${entry}]==] PROPERTIES LABELS ${LABEL} "
                         "WORKING_DIRECTORY \"${WORKING_DIRECTORY}\")\n")
  endif()
endforeach()
file(WRITE "${OUT}" "${script}")
