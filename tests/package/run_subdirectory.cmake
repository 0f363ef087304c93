# ctest: configure tests/package/subdirectory (which adds eager's source tree
# with add_subdirectory, in Debug), build it and run it.
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DLAUNCHER=...] -P run_subdirectory.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}")
  endif()
endfunction()

set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/subdirectory -B ${WORK_DIR} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Debug -DEAGER_SOURCE_DIR=${SOURCE_DIR} ${launcher})
run(${CMAKE_COMMAND} --build ${WORK_DIR})
# eager's own files are compiled with the parent's Debug flags, not Release's.
if(EXISTS ${WORK_DIR}/build.ninja)
  file(READ ${WORK_DIR}/build.ninja ninja)
  if(ninja MATCHES "-DNDEBUG" OR ninja MATCHES " -O3")
    message(FATAL_ERROR "eager's files were compiled with Release flags in a Debug parent")
  endif()
endif()
run(${WORK_DIR}/consumer)
