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

# The Python package, at the path the install printed, imported with nothing but that path:
# the program and the presets are found in the prefix.
if(PYTHON)
  if(NOT LAST_OUTPUT MATCHES "sohusim Python package: ([^ \n]+)")
    message(FATAL_ERROR "the install did not print where the Python package went:\n${LAST_OUTPUT}")
  endif()
  set(site ${CMAKE_MATCH_1})
  if(NOT EXISTS ${site}/sohusim/__init__.py OR NOT site MATCHES "^${WORK_DIR}/prefix/")
    message(FATAL_ERROR "no sohusim package at the printed path ${site}")
  endif()
  run(${CMAKE_COMMAND} -E env --unset=SOHUSIM_BIN --unset=SOHUSIM_CONFIGS PYTHONPATH=${site} PYTHONDONTWRITEBYTECODE=1
      ${PYTHON_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_python_package.py ${WORK_DIR}/prefix)
  message(STATUS "${LAST_OUTPUT}")
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
