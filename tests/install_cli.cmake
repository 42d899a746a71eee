# `make install PREFIX=P` puts a memlab on PATH that works: installs the build into a scratch prefix, then runs
# the installed command by its bare name from P/bin, as the README's quickstart leaves it.
# -DBUILD=<memlab build dir> -DWORK=<scratch dir>
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
if(NOT EXISTS ${WORK}/prefix/bin/memlab)
  message(FATAL_ERROR "the install has no bin/memlab")
endif()
foreach(_args "--version" "list")
  separate_arguments(_argv UNIX_COMMAND "${_args}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${WORK}/prefix/bin:$ENV{PATH}" memlab ${_argv}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed memlab ${_args}: exit ${rc}\n${out}${err}")
  endif()
endforeach()
if(NOT out MATCHES "copy:")
  message(FATAL_ERROR "the installed memlab list names no lab:\n${out}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "memlab installed under a prefix runs from its bin/ by name: --version and list")
