# Install rules and the CMake package:
#   find_package(mla_decode) -> mla_decode::mla_decode (shared), mla_decode::mla_decode_static
# Both carry the include directory, MLA_BACKEND_<X>=1 and the GPU runtime they need.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MLA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mla_decode" CACHE STRING
    "Where mla_decodeConfig.cmake is installed, relative to the prefix")

install(TARGETS mla_decode mla_decode_static
  EXPORT mla_decodeTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/include/mla_decode.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/mla_decode" OPTIONAL)
install(EXPORT mla_decodeTargets
  NAMESPACE mla_decode::
  FILE mla_decodeTargets.cmake
  DESTINATION "${MLA_INSTALL_CMAKEDIR}")

# What a consumer must find before the targets resolve.
set(MLA_CONFIG_DEPENDENCIES "find_dependency(Threads)\n")  # the host reference's threads
if(MLA_BACKEND_RESOLVED STREQUAL "cuda")
  string(APPEND MLA_CONFIG_DEPENDENCIES "find_dependency(CUDAToolkit)\n")
elseif(MLA_BACKEND_RESOLVED STREQUAL "hip" AND MLA_HIP_MODE STREQUAL "language")
  string(APPEND MLA_CONFIG_DEPENDENCIES
         "list(APPEND CMAKE_PREFIX_PATH \"${MLA_ROCM_PATH}\")\nfind_dependency(hip CONFIG)\n")
endif()

set(_mla_package_init "@PACKAGE_INIT@")   # kept for configure_package_config_file
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake.in" @ONLY CONTENT [==[
# mla_decode @PROJECT_VERSION@ (backend: @MLA_BACKEND_RESOLVED@)
#   find_package(mla_decode CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE mla_decode::mla_decode)   # or mla_decode::mla_decode_static
@_mla_package_init@
include(CMakeFindDependencyMacro)
set(mla_decode_BACKEND "@MLA_BACKEND_RESOLVED@")
@MLA_CONFIG_DEPENDENCIES@
include("${CMAKE_CURRENT_LIST_DIR}/mla_decodeTargets.cmake")
check_required_components(mla_decode)
]==])
configure_package_config_file("${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake"
  INSTALL_DESTINATION "${MLA_INSTALL_CMAKEDIR}")
# 0.x: minor versions may break the ABI.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mla_decodeConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mla_decodeConfig.cmake"
              "${PROJECT_BINARY_DIR}/mla_decodeConfigVersion.cmake"
        DESTINATION "${MLA_INSTALL_CMAKEDIR}")

# The installed shared library finds its GPU runtime (e.g. /opt/rocm/lib, the CUDA toolkit's
# lib64) without LD_LIBRARY_PATH.
set_target_properties(mla_decode PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
