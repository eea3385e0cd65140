# Install rules, the CMake package and the pkg-config files.
#   find_package(mla_decode) -> mla_decode::mla_decode         (shared; component "shared")
#                               mla_decode::mla_decode_static  (static; component "static")
# The shared library holds its GPU runtime (src/CMakeLists.txt): its target carries the include
# directory and nothing else, and the package looks up nothing for it. The static archive needs,
# at its user's link, the C++ standard library (its target adds it where a C driver links),
# threads and the GPU runtime (CUDA: the toolkit's static runtime; HIP: libamdhip64), and carries
# MLA_BACKEND_<X>=1 and MLA_DECODE_STATIC=1: the package defines it only when Threads and the
# runtime's package are found (quietly, unless the static component is required).
# pkg-config: mla_decode.pc (the shared library) and mla_decode-static.pc (the archive by its full
# path, with the flags above). A second file rather than Libs.private: `-lmla_decode` picks the
# shared library wherever both are installed, so `pkg-config --static` could not select the
# archive, and the archive's compile flags differ.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MLA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mla_decode" CACHE STRING
    "Where mla_decodeConfig.cmake is installed, relative to the prefix")

set(_mla_destinations
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(TARGETS mla_decode EXPORT mla_decodeTargets ${_mla_destinations})
install(TARGETS mla_decode_static EXPORT mla_decode_staticTargets ${_mla_destinations})
install(FILES "${PROJECT_SOURCE_DIR}/include/mla_decode.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/mla_decode" OPTIONAL)
foreach(_set mla_decodeTargets mla_decode_staticTargets)
  install(EXPORT ${_set} NAMESPACE mla_decode:: FILE ${_set}.cmake
          DESTINATION "${MLA_INSTALL_CMAKEDIR}")
endforeach()

# The installed shared library finds libamdhip64 (e.g. /opt/rocm/lib) without LD_LIBRARY_PATH.
set_target_properties(mla_decode PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

# What the static archive's users need: packages (CMake) and flags (pkg-config).
set(MLA_STATIC_FINDS "_mla_static_needs(Threads)\n")
set(_pc_cflags -DMLA_DECODE_STATIC=1)
set(_pc_libs "")
if(MLA_BACKEND_RESOLVED STREQUAL "cuda")
  string(APPEND MLA_STATIC_FINDS "_mla_static_needs(CUDAToolkit)\n")
  list(GET CUDAToolkit_INCLUDE_DIRS 0 _inc)
  list(APPEND _pc_cflags -DMLA_BACKEND_CUDA=1 -I${_inc})
  list(APPEND _pc_libs -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static)
  foreach(_lib IN LISTS CMAKE_DL_LIBS ITEMS rt)   # what the static runtime needs
    list(APPEND _pc_libs -l${_lib})
  endforeach()
elseif(MLA_BACKEND_RESOLVED STREQUAL "hip")
  if(MLA_HIP_MODE STREQUAL "language")
    string(APPEND MLA_STATIC_FINDS
           "list(APPEND CMAKE_PREFIX_PATH \"${MLA_ROCM_PATH}\")\n_mla_static_needs(hip CONFIG)\n")
    find_library(MLA_AMDHIP64_LIBRARY amdhip64 HINTS "${MLA_ROCM_PATH}/lib")
    set(MLA_HIP_INCLUDE_DIR "${MLA_ROCM_PATH}/include")
  endif()
  get_filename_component(_dir "${MLA_AMDHIP64_LIBRARY}" DIRECTORY)
  list(APPEND _pc_cflags -DMLA_BACKEND_HIP=1 -D__HIP_PLATFORM_AMD__=1)
  if(NOT MLA_HIP_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    list(APPEND _pc_cflags -I${MLA_HIP_INCLUDE_DIR})
  endif()
  list(APPEND _pc_libs -L${_dir} -lamdhip64)
  if(NOT _dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    list(APPEND _pc_libs -Wl,-rpath,${_dir})
  endif()
endif()
# The C++ compiler's own libraries beyond the C compiler's (GCC: stdc++ and m): in the .pc, and
# on the static target for a program linked by another language's driver (a C project).
set(_cxx_libs ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
if(CMAKE_C_IMPLICIT_LINK_LIBRARIES)
  list(REMOVE_ITEM _cxx_libs ${CMAKE_C_IMPLICIT_LINK_LIBRARIES})
endif()
list(REMOVE_DUPLICATES _cxx_libs)
foreach(_lib IN LISTS _cxx_libs)
  list(APPEND _pc_libs -l${_lib})
  target_link_libraries(mla_decode_static INTERFACE "$<$<NOT:$<LINK_LANGUAGE:CXX>>:${_lib}>")
endforeach()
list(APPEND _pc_libs ${CMAKE_THREAD_LIBS_INIT})
list(JOIN _pc_cflags " " _pc_cflags)
list(JOIN _pc_libs " " _pc_libs)

set(_mla_package_init "@PACKAGE_INIT@")   # kept for configure_package_config_file
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake.in" @ONLY CONTENT [==[
# mla_decode @PROJECT_VERSION@ (backend: @MLA_BACKEND_RESOLVED@)
#   find_package(mla_decode 0.7 CONFIG REQUIRED)  # COMPONENTS shared / static to require one
#   target_link_libraries(app PRIVATE mla_decode::mla_decode)         # needs nothing else
#   target_link_libraries(app PRIVATE mla_decode::mla_decode_static)  # brings the C++ library,
#                                                                     # threads, the GPU runtime
@_mla_package_init@
include(CMakeFindDependencyMacro)
set(mla_decode_BACKEND "@MLA_BACKEND_RESOLVED@")
include("${CMAKE_CURRENT_LIST_DIR}/mla_decodeTargets.cmake")
set(mla_decode_shared_FOUND TRUE)

# The static archive's dependencies: required only with COMPONENTS static.
set(_mla_static_missing "")
macro(_mla_static_needs name)
  if(mla_decode_FIND_REQUIRED_static)
    find_dependency(${name} ${ARGN})
  else()
    find_package(${name} ${ARGN} QUIET)
  endif()
  if(NOT ${name}_FOUND)
    list(APPEND _mla_static_missing ${name})
  endif()
endmacro()
@MLA_STATIC_FINDS@
if(_mla_static_missing)
  set(mla_decode_static_FOUND FALSE)
  if(NOT mla_decode_FIND_QUIETLY)
    message(STATUS "mla_decode: no mla_decode::mla_decode_static (not found: "
                   "${_mla_static_missing}); mla_decode::mla_decode needs none of them")
  endif()
else()
  include("${CMAKE_CURRENT_LIST_DIR}/mla_decode_staticTargets.cmake")
  set(mla_decode_static_FOUND TRUE)
endif()
unset(_mla_static_missing)
check_required_components(mla_decode)
]==])
configure_package_config_file("${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake"
  INSTALL_DESTINATION "${MLA_INSTALL_CMAKEDIR}")
# 0.x: minor versions may break the ABI (so the SONAME carries major.minor, src/CMakeLists.txt).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mla_decodeConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake"
              "${PROJECT_BINARY_DIR}/mla_decodeConfigVersion.cmake"
        DESTINATION "${MLA_INSTALL_CMAKEDIR}")

# pkg-config files, written at install time for the prefix installed to (%PREFIX%).
set(_pc_libdir "${CMAKE_INSTALL_LIBDIR}")
if(NOT IS_ABSOLUTE "${_pc_libdir}")
  set(_pc_libdir "\${prefix}/${_pc_libdir}")
endif()
set(_pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
if(NOT IS_ABSOLUTE "${_pc_includedir}")
  set(_pc_includedir "\${prefix}/${_pc_includedir}")
endif()
set(_pc_dir "${PROJECT_BINARY_DIR}/pkgconfig")
set(_pc_head "prefix=%PREFIX%\nlibdir=${_pc_libdir}\nincludedir=${_pc_includedir}\n\n")
set(_pc_desc "${PROJECT_DESCRIPTION}, backend ${MLA_BACKEND_RESOLVED}")
file(WRITE "${_pc_dir}/mla_decode.pc.in" "${_pc_head}Name: mla_decode
Description: ${_pc_desc} (shared library, GPU runtime inside)
Version: ${PROJECT_VERSION}
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmla_decode
")
file(WRITE "${_pc_dir}/mla_decode-static.pc.in" "${_pc_head}Name: mla_decode-static
Description: ${_pc_desc} (static archive)
Version: ${PROJECT_VERSION}
Cflags: -I\${includedir} ${_pc_cflags}
Libs: \${libdir}/${CMAKE_STATIC_LIBRARY_PREFIX}mla_decode${CMAKE_STATIC_LIBRARY_SUFFIX} ${_pc_libs}
")
install(CODE "set(_mla_pc_dir \"${_pc_dir}\")")
install(CODE [==[
  foreach(_pc mla_decode mla_decode-static)
    file(READ "${_mla_pc_dir}/${_pc}.pc.in" _text)
    string(REPLACE "%PREFIX%" "${CMAKE_INSTALL_PREFIX}" _text "${_text}")
    file(WRITE "${_mla_pc_dir}/${_pc}.pc" "${_text}")
  endforeach()
]==])
install(FILES "${_pc_dir}/mla_decode.pc" "${_pc_dir}/mla_decode-static.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
