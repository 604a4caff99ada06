# Run with cmake -P. Installs the already-built tree into WORK_DIR/prefix, builds
# examples/embed as a separate project that only knows that prefix, and runs it.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
if(NOT EXISTS ${WORK_DIR}/prefix/lib/cmake/sohusim/sohusimConfig.cmake)
  message(FATAL_ERROR "install did not produce lib/cmake/sohusim/sohusimConfig.cmake")
endif()

set(extra)
if(SANITIZE)
  list(APPEND extra "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined"
                    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release ${extra})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/embed_example ${WORK_DIR}/prefix/share/sohusim/configs)
message(STATUS "embed_example output:\n${LAST_OUTPUT}")
if(NOT LAST_OUTPUT MATCHES "embed: ok")
  message(FATAL_ERROR "embed_example did not report success:\n${LAST_OUTPUT}")
endif()
