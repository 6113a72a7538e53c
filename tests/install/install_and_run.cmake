# cmake -DBUILD_DIR=<warpforge build> -DWORK_DIR=<scratch> -DSOURCE_DIR=<this folder>
#       [-DLAUNCHER=ccache] -P install_and_run.cmake
# Installs the build into WORK_DIR/prefix, configures tests/install against it
# with find_package(warpforge), builds it and runs the program; any failing
# step fails the test with that step's output.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../run_steps.cmake)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
step("configuring against the installed package" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${launcher})
step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running the consumer" ${WORK_DIR}/build/consumer)
