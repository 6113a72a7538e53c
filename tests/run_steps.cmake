# step(WHAT COMMAND...) for the tests that are CMake scripts (tests/install,
# tests/readme): runs the command, prints its output, and fails the script
# naming WHAT when it fails.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status})")
  endif()
endfunction()
