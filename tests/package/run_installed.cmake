# ctest: install the already-built tree into a fresh temporary prefix, build
# tests/package/installed against it with find_package(eager), run it, and run
# the installed eager-ckpt on the checkpoint it wrote.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DLAUNCHER=...] -P run_installed.cmake
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix} ${WORK_DIR}/ckpt)
file(MAKE_DIRECTORY ${WORK_DIR}/ckpt)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file include/eager/eager.h include/eager/runtime/tensor.h include/eager/saving/bundle/bundle_writer.h
             lib/cmake/eager/eagerConfig.cmake lib/cmake/eager/eagerConfigVersion.cmake bin/eager-ckpt)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "cmake --install did not install ${file}")
  endif()
endforeach()
file(GLOB_RECURSE internal_headers ${prefix}/include/*/internal/*.h)
if(internal_headers)
  message(FATAL_ERROR "private headers installed: ${internal_headers}")
endif()
foreach(private saving/tools runtime/tensor_access.h saving/bundle/posix_file.h)
  if(EXISTS ${prefix}/include/eager/${private})
    message(FATAL_ERROR "not for users, yet installed: include/eager/${private}")
  endif()
endforeach()

set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/installed -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} ${launcher})
run(${CMAKE_COMMAND} --build ${consumer_build})
run(${consumer_build}/consumer ${WORK_DIR}/ckpt)
run(${prefix}/bin/eager-ckpt verify ${WORK_DIR}/ckpt/model.ckpt)
