# ctest: configure tests/package/shared (eager as shared libraries through
# add_subdirectory), build it, run it, and check the program really loads
# libeager_saving.so.
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DLAUNCHER=...] -P run_shared.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/shared -B ${WORK_DIR} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DEAGER_SOURCE_DIR=${SOURCE_DIR} ${launcher})
run(${CMAKE_COMMAND} --build ${WORK_DIR})
run(${WORK_DIR}/consumer ${WORK_DIR}/ckpt)
message(STATUS "${output}")
if(NOT output MATCHES "w = \\[1.5, -2.0\\]")
  message(FATAL_ERROR "unexpected output: ${output}")
endif()
find_program(LDD ldd)
if(LDD)
  run(${LDD} ${WORK_DIR}/consumer)
  if(NOT output MATCHES "libeager_saving")
    message(FATAL_ERROR "consumer does not load libeager_saving.so:\n${output}")
  endif()
endif()
