# ctest: install the already-built tree into a fresh temporary prefix, build
# tests/package/installed against it with find_package(eager), run it, and run
# the installed eager-ckpt on the checkpoint it wrote.
# Built with MPI (-DMPIEXEC=mpirun... given): also the distributed consumer,
# alone and on 2 ranks, and eager-ckpt on the checkpoint the ranks wrote.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DLAUNCHER=...]
#         [-DMPIEXEC=...] -P run_installed.cmake
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix} ${WORK_DIR}/ckpt ${WORK_DIR}/ckpt_np1 ${WORK_DIR}/ckpt_np2)
file(MAKE_DIRECTORY ${WORK_DIR}/ckpt ${WORK_DIR}/ckpt_np1 ${WORK_DIR}/ckpt_np2)

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
set(distributed OFF)
if(MPIEXEC)
  set(distributed ON)
  if(NOT EXISTS ${prefix}/include/eager/distributed/distributed.h)
    message(FATAL_ERROR "cmake --install did not install include/eager/distributed/distributed.h")
  endif()
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/installed -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DEXPECT_DISTRIBUTED=${distributed}
    ${launcher})
run(${CMAKE_COMMAND} --build ${consumer_build})
run(${consumer_build}/consumer ${WORK_DIR}/ckpt)
run(${prefix}/bin/eager-ckpt verify ${WORK_DIR}/ckpt/model.ckpt)
if(distributed)
  run(${consumer_build}/distributed_consumer ${WORK_DIR}/ckpt_np1)
  run(${prefix}/bin/eager-ckpt verify ${WORK_DIR}/ckpt_np1/ckpt-1)
  separate_arguments(mpiexec UNIX_COMMAND "${MPIEXEC}")
  run(${mpiexec} 2 ${consumer_build}/distributed_consumer ${WORK_DIR}/ckpt_np2)
  foreach(file ckpt-1.index ckpt-1.data-00000-of-00002 ckpt-1.data-00001-of-00002)
    if(NOT EXISTS ${WORK_DIR}/ckpt_np2/${file})
      message(FATAL_ERROR "the 2-rank consumer wrote no ${file}")
    endif()
  endforeach()
  run(${prefix}/bin/eager-ckpt verify ${WORK_DIR}/ckpt_np2/ckpt-1)
endif()
