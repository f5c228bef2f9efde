# `cmake --install build --prefix P` lays tilemm out like any other library:
#
#   P/include/tilemm/*.h, *.hpp         the public headers
#   P/lib/libtilemm.a                   static (the code the in-tree binaries link)
#   P/lib/libtilemm.so.X.Y.Z            shared, SONAME libtilemm.so.<SOVERSION>
#   P/bin/tilemm-tune, tilemm-check,    the CLI, the differential check of the entry points
#         tilemm-bench                  and the benchmark against cuBLAS
#   P/share/tilemm/preloaded/*.json     the preloaded caches (already embedded in the library)
#   P/lib/cmake/tilemm/                 the CMake package: tilemm::tilemm (shared by default),
#                                       tilemm::tilemm_shared, tilemm::tilemm_static
#   P/lib/pkgconfig/tilemm.pc           pkg-config for libtilemm.so; tilemm-static.pc for the .a
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TILEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilemm)

# The exported names say the variant; tilemm::tilemm is chosen in tilemmConfig.cmake.
set_target_properties(tilemm PROPERTIES EXPORT_NAME tilemm_static)
set_target_properties(tilemm_shared PROPERTIES EXPORT_NAME tilemm_shared)

# The installed files name no directory of the build machine, so that the package can be copied
# to another machine or prefix: the libraries and programs find NVRTC and cuBLAS the way the
# system's loader does (the CUDA toolkit's ld.so.conf entry, or LD_LIBRARY_PATH). For a private
# install on a machine whose loader does not know the toolkit, TILEMM_INSTALL_CUDA_RPATH=ON keeps
# the directories they were linked from, as a build-tree binary does.
option(TILEMM_INSTALL_CUDA_RPATH "Installed binaries keep the CUDA library directories (not relocatable)" OFF)
set(TILEMM_INSTALLED_PROGRAMS tilemm-tune tilemm-check)
if(TARGET tilemm-bench)
  list(APPEND TILEMM_INSTALLED_PROGRAMS tilemm-bench)
endif()
set_target_properties(tilemm_shared ${TILEMM_INSTALLED_PROGRAMS}
  PROPERTIES INSTALL_RPATH_USE_LINK_PATH ${TILEMM_INSTALL_CUDA_RPATH})

install(TARGETS tilemm tilemm_shared
  EXPORT tilemmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${TILEMM_INSTALLED_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tilemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${TILEMM_EMBEDDED_PRELOADED_FILES} DESTINATION ${CMAKE_INSTALL_DATADIR}/tilemm/preloaded)

# --- CMake package -------------------------------------------------------------------------------
install(EXPORT tilemmTargets NAMESPACE tilemm:: DESTINATION ${TILEMM_CMAKE_DIR})
set(TILEMM_PRELOADED_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/tilemm/preloaded)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tilemmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install/tilemmConfig.cmake
  INSTALL_DESTINATION ${TILEMM_CMAKE_DIR}
  PATH_VARS TILEMM_PRELOADED_INSTALL_DIR)
# Before 1.0 a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/tilemmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/tilemmConfig.cmake
              ${PROJECT_BINARY_DIR}/install/tilemmConfigVersion.cmake
  DESTINATION ${TILEMM_CMAKE_DIR})

# --- pkg-config ----------------------------------------------------------------------------------
# Relocatable: the prefix is found from the .pc file's own directory, so `--prefix` at install
# time needs no reconfigure. The CUDA toolkit is one variable, cudaroot, that the include and
# library flags are relative to: `pkg-config --define-variable=cudaroot=/opt/cuda` points them at
# another toolkit. Its default is the toolkit tilemm was built against, named by the unversioned
# link (/usr/local/cuda) where that link leads to the same toolkit, so that a later 13.x found there
# serves.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(TILEMM_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(TILEMM_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TILEMM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH TILEMM_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" TILEMM_PC_UP "${TILEMM_PC_UP}")
  set(TILEMM_PC_PREFIX "\${pcfiledir}/${TILEMM_PC_UP}")
endif()
get_filename_component(TILEMM_PC_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
if(TILEMM_PC_CUDA_ROOT MATCHES "^(.*)/cuda-[0-9.]+$")
  set(_tilemm_unversioned "${CMAKE_MATCH_1}/cuda")
  if(EXISTS "${_tilemm_unversioned}")
    file(REAL_PATH "${_tilemm_unversioned}" _tilemm_unversioned_real)
    file(REAL_PATH "${TILEMM_PC_CUDA_ROOT}" _tilemm_root_real)
    if(_tilemm_unversioned_real STREQUAL _tilemm_root_real)
      set(TILEMM_PC_CUDA_ROOT "${_tilemm_unversioned}")
    endif()
  endif()
endif()
# A toolkit directory as "${cudaroot}/<path>" where it lies inside the toolkit; as it is otherwise.
function(tilemm_pc_cuda_path dir out)
  get_filename_component(root_real "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  file(REAL_PATH "${root_real}" root_real)
  file(REAL_PATH "${dir}" dir_real)
  file(RELATIVE_PATH relative "${root_real}" "${dir_real}")
  if(relative MATCHES "^\\.\\.")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${cudaroot}/${relative}" PARENT_SCOPE)
  endif()
endfunction()
set(TILEMM_PC_CUDA_CFLAGS "")
foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  tilemm_pc_cuda_path("${dir}" pc_dir)
  string(APPEND TILEMM_PC_CUDA_CFLAGS " -I${pc_dir}")
endforeach()
tilemm_pc_cuda_path("${CUDAToolkit_LIBRARY_DIR}" TILEMM_PC_CUDA_LIBDIR)
# What every user links: the static CUDA runtime, as with tilemm::tilemm. Never libcuda.
set(TILEMM_PC_CUDART "-L${TILEMM_PC_CUDA_LIBDIR} -lcudart_static -ldl -lrt -pthread")
# What libtilemm.a needs besides: NVRTC, SQLite, hiredis and the C++ runtime (for C programs).
set(TILEMM_PC_STATIC_DEPS "-lnvrtc -lsqlite3 -lhiredis -lstdc++ -lm")

set(TILEMM_PC_NAME tilemm)
set(TILEMM_PC_DESCRIPTION "Autotuned SGEMM for the GPU it runs on (shared library)")
set(TILEMM_PC_LIBS "-L\${libdir} -ltilemm ${TILEMM_PC_CUDART}")
set(TILEMM_PC_LIBS_PRIVATE "${TILEMM_PC_STATIC_DEPS}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tilemm.pc.in ${PROJECT_BINARY_DIR}/install/tilemm.pc
  @ONLY)

set(TILEMM_PC_NAME tilemm-static)
set(TILEMM_PC_DESCRIPTION "Autotuned SGEMM for the GPU it runs on (static library)")
set(TILEMM_PC_LIBS "\${libdir}/libtilemm.a ${TILEMM_PC_CUDART} ${TILEMM_PC_STATIC_DEPS}")
set(TILEMM_PC_LIBS_PRIVATE "")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tilemm.pc.in
  ${PROJECT_BINARY_DIR}/install/tilemm-static.pc @ONLY)

install(FILES ${PROJECT_BINARY_DIR}/install/tilemm.pc ${PROJECT_BINARY_DIR}/install/tilemm-static.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
