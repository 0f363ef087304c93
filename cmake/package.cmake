# eager as a library other CMake projects use, either way:
#
#   find_package(eager 0.1 CONFIG REQUIRED)     # after `cmake --install`
#   add_subdirectory(third_party/eager)         # or FetchContent
#   target_link_libraries(app PRIVATE eager::eager)
#
# eager::eager is everything (runtime, ops, autodiff, saving); eager::runtime,
# eager::ops, eager::autodiff and eager::saving are the layers, for programs
# that want less. The names are the same in both ways. Built with MPI,
# eager::distributed (MPI data parallelism) too, the package's component
# `distributed`; "eager.h" includes its API in the programs that link it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(eager_layers runtime ops autodiff saving)
foreach(layer IN LISTS eager_layers)
  set_target_properties(eager_${layer} PROPERTIES
    EXPORT_NAME ${layer}
    VERSION ${PROJECT_VERSION}
    # 0.x: a new minor version may break the ABI.
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  add_library(eager::${layer} ALIAS eager_${layer})
endforeach()

# eager::distributed (MPI data parallelism) when CMake found MPI; not part of
# eager::eager, so that programs without MPI need none.
if(TARGET eager_distributed)
  set_target_properties(eager_distributed PROPERTIES
    EXPORT_NAME distributed
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  add_library(eager::distributed ALIAS eager_distributed)
endif()

add_library(eager INTERFACE)
target_link_libraries(eager INTERFACE eager_autodiff eager_saving)
add_library(eager::eager ALIAS eager)

if(NOT EAGER_INSTALL)
  return()
endif()

# Headers keep their layer folders under include/eager, so that user code
# includes "eager.h" or "runtime/tensor.h" exactly as inside the repository.
# internal/ headers are private to each library and not installed, nor
# saving/tools/ (eager-ckpt's own target, eager_tools, which the library does
# not carry).
# Nor the headers eager's own folders share with each other but users have no
# business with (each says so in its first comment): Tensor's write side, the
# kernels' floating-point mode, the thread pool, and saving's file,
# checksum and object-graph plumbing.
set(eager_shared_private_headers)
foreach(header runtime/tensor_access.h runtime/flush_denormal.h runtime/machine_cores.h
               runtime/buffer_cache.h ops/parallel.h ops/apply_adam.h ops/fp_contract_off.h
               saving/bundle/posix_file.h saving/bundle/directory_lock.h
               saving/bundle/checkpoint_retention.h saving/bundle/crc32c.h saving/bundle/coding.h
               saving/bundle/partitioned_variables.h saving/checkpoint/object_graph.h)
  string(REPLACE "." "\\." header_regex "${header}")
  list(APPEND eager_shared_private_headers REGEX "/${header_regex}$" EXCLUDE)
endforeach()
set(EAGER_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/eager)
install(FILES ${PROJECT_SOURCE_DIR}/eager.h DESTINATION ${EAGER_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime ${PROJECT_SOURCE_DIR}/ops
                  ${PROJECT_SOURCE_DIR}/autodiff ${PROJECT_SOURCE_DIR}/saving
        DESTINATION ${EAGER_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "internal" EXCLUDE PATTERN "proto" EXCLUDE
                      PATTERN "tools" EXCLUDE ${eager_shared_private_headers})

set(eager_distributed_target)
set(EAGER_HAS_DISTRIBUTED OFF)
if(TARGET eager_distributed)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/distributed DESTINATION ${EAGER_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
  set(eager_distributed_target eager_distributed)
  set(EAGER_HAS_DISTRIBUTED ON)
endif()

# eager_saving_proto is an implementation detail, but a static eager_saving
# needs its archive at link time, so it is installed and exported too.
install(TARGETS eager eager_runtime eager_ops eager_autodiff eager_saving eager_saving_proto
                ${eager_distributed_target}
        EXPORT eagerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT eagerTargets NAMESPACE eager::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/eager)

# The command line tool finds a shared libeager_* next to it.
set_target_properties(eager-ckpt PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS eager-ckpt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(BUILD_SHARED_LIBS)
  set(EAGER_SHARED ON)
else()
  set(EAGER_SHARED OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/eagerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/eagerConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/eager)
# 0.x: only the same minor version is compatible (0.1.3 satisfies 0.1, not 0.2).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/eagerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/eagerConfig.cmake ${PROJECT_BINARY_DIR}/eagerConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/eager)
