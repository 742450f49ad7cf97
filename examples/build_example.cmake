# Installs the lockstep build in LOCKSTEP_BUILD_DIR to a fresh prefix under WORK_DIR, then
# configures, builds and tests the example project EXAMPLE_SOURCE_DIR against it.
# cmake -DLOCKSTEP_BUILD_DIR=... -DEXAMPLE_SOURCE_DIR=... -DWORK_DIR=... [-DEXTRA_FLAGS=...]
#       [-DGENERATOR=Ninja] -P examples/build_example.cmake
foreach(v LOCKSTEP_BUILD_DIR EXAMPLE_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "build_example.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "example: ${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "example: ${what}: ok")
endfunction()

step("install lockstep" ${CMAKE_COMMAND} --install ${LOCKSTEP_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
set(gen)
if(GENERATOR)
  set(gen -G ${GENERATOR})
endif()
step("configure the example" ${CMAKE_COMMAND} -S ${EXAMPLE_SOURCE_DIR} -B ${WORK_DIR}/build ${gen}
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=RelWithDebInfo
     "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
step("build the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
step("test the example" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
