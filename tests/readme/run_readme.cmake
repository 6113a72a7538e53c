# cmake -DEXTRACT=<extract_programs> -DREADME=<README.md> -DWORK_DIR=<scratch>
#       -DPROJECT_DIR=<tests/readme/project> -DPACKAGE_DIR=<build dir> [-DLAUNCHER=ccache]
#       -P run_readme.cmake
# Extracts README.md's C++ blocks into programs, builds them (one executable)
# against the build tree's warpforge package and runs them; a block that
# stops compiling or a program that fails fails the test, naming README.md's
# line.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../run_steps.cmake)
step("extracting README.md's C++ blocks" ${EXTRACT} ${README} ${WORK_DIR}/programs)
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
step("configuring the README's programs" ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -G Ninja
     -DCMAKE_BUILD_TYPE=Release -Dwarpforge_DIR=${PACKAGE_DIR} -DREADME_DIR=${WORK_DIR}/programs ${launcher})
step("compiling the README's code" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running the README's programs (the output names each block's line)" ${WORK_DIR}/build/readme_programs)
