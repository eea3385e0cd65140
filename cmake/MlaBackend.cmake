# Resolves MLA_BACKEND (auto|cuda|hip|none|emu) into MLA_BACKEND_RESOLVED and provides
#   mla_gpu_sources(<target> <files...>)  compiles the HIP kernel sources for that backend
#                                         (and adds the backend's usage requirements);
#   mla_backend_usage(<target>)           adds only the backend's public compile definitions
#                                         and runtime library to <target>.
#
# hip backend, two ways to compile the .hip sources (MLA_HIP_COMPILE):
#   language  CMake's HIP language (a ROCm install, e.g. /opt/rocm). Architectures from
#             CMAKE_HIP_ARCHITECTURES, default gfx942;gfx950 (MI300 / MI355).
#   cxx       The .hip files are compiled as CXX by a clang++ with `-x hip` (Debian's clang-19
#             and HIP packages, where CMake's HIP language cannot find hip-lang). Configure the
#             whole project with CMAKE_CXX_COMPILER=clang++-19. Architectures from
#             CMAKE_HIP_ARCHITECTURES, default gfx942 when the device library has it, else gfx940.
#   auto      language when <rocm>/lib/cmake/hip-lang exists, cxx otherwise.
# MLA_HIP_DEVICE_CHECK_ARCHS (cxx mode default gfx942): extra device-only compile of every kernel
# source to assembly for these architectures (-nogpulib: no device library needed), part of ALL,
# so a kernel that does not compile for them fails the build. Empty = no check.
# MLA_HIP_DEVICE_CHECK_NEW_ARCHS (default empty) with MLA_HIP_DEVICE_CHECK_NEW_COMPILER: the same
# check for architectures the backend's compiler does not know, by a newer clang (gfx950, MI355:
# Debian 12's clang-22, where the build itself uses clang-19). Newer clangs dropped pieces that
# HIP 5.x headers rely on; cmake/hip_device_check_compat.h restores them for this check alone.
include(CheckLanguage)

set(_backend "${MLA_BACKEND}")
if(_backend STREQUAL "auto")
  if(EXISTS "/opt/rocm/bin/hipcc" OR DEFINED ENV{ROCM_PATH})
    set(_backend hip)
  else()
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(_backend cuda)
    else()
      set(_backend none)
    endif()
  endif()
endif()
if(NOT _backend MATCHES "^(cuda|hip|none|emu)$")
  message(FATAL_ERROR "MLA_BACKEND must be auto, cuda, hip, none or emu (got '${MLA_BACKEND}')")
endif()
set(MLA_BACKEND_RESOLVED "${_backend}")
message(STATUS "libmla_decode backend: ${MLA_BACKEND_RESOLVED}")

# ----------------------------------------------------------------------------------------------
# cuda
# ----------------------------------------------------------------------------------------------
if(MLA_BACKEND_RESOLVED STREQUAL "cuda")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90a)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
endif()

# ----------------------------------------------------------------------------------------------
# hip
# ----------------------------------------------------------------------------------------------
if(MLA_BACKEND_RESOLVED STREQUAL "hip")
  set(MLA_HIP_COMPILE "auto" CACHE STRING
      "How .hip sources are compiled on the hip backend: auto, language or cxx")
  set_property(CACHE MLA_HIP_COMPILE PROPERTY STRINGS auto language cxx)

  # Root of the HIP install: ROCM_PATH (variable or environment), /opt/rocm, or Debian's /usr.
  if(NOT MLA_ROCM_PATH)
    if(DEFINED ROCM_PATH)
      set(_rocm "${ROCM_PATH}")
    elseif(DEFINED ENV{ROCM_PATH})
      set(_rocm "$ENV{ROCM_PATH}")
    elseif(EXISTS "/opt/rocm/include/hip/hip_runtime.h")
      set(_rocm "/opt/rocm")
    else()
      set(_rocm "/usr")
    endif()
    set(MLA_ROCM_PATH "${_rocm}" CACHE PATH "Root of the ROCm / HIP install")
  endif()

  set(_hip_mode "${MLA_HIP_COMPILE}")
  if(_hip_mode STREQUAL "auto")
    if(EXISTS "${MLA_ROCM_PATH}/lib/cmake/hip-lang/hip-lang-config.cmake")
      set(_hip_mode language)
    else()
      set(_hip_mode cxx)
    endif()
  endif()
  if(NOT _hip_mode MATCHES "^(language|cxx)$")
    message(FATAL_ERROR "MLA_HIP_COMPILE must be auto, language or cxx (got '${MLA_HIP_COMPILE}')")
  endif()
  set(MLA_HIP_MODE "${_hip_mode}")

  if(MLA_HIP_MODE STREQUAL "language")
    # A ROCm install: CMake's HIP language plus the hip package (hip::host).
    if(NOT CMAKE_HIP_ARCHITECTURES)
      set(CMAKE_HIP_ARCHITECTURES "gfx942;gfx950" CACHE STRING "AMD GPU architectures")
    endif()
    list(APPEND CMAKE_PREFIX_PATH "${MLA_ROCM_PATH}")
    enable_language(HIP)
    set(CMAKE_HIP_STANDARD 17)
    set(CMAKE_HIP_STANDARD_REQUIRED ON)
    set(CMAKE_HIP_EXTENSIONS OFF)
    find_package(hip REQUIRED CONFIG)
    set(MLA_HIP_ARCHS "${CMAKE_HIP_ARCHITECTURES}")
    set(MLA_HIP_DEVICE_COMPILER "${CMAKE_HIP_COMPILER}")
    set(_check_default "")
  else()
    # clang++ -x hip on CXX sources (Debian: clang-19, libamdhip64-dev, rocm-device-libs).
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      message(FATAL_ERROR "MLA_BACKEND=hip with MLA_HIP_COMPILE=cxx compiles the kernels as C++ "
              "with clang: configure with -DCMAKE_CXX_COMPILER=clang++-19 (got "
              "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}), or point ROCM_PATH at a ROCm "
              "install for CMake's HIP language.")
    endif()
    find_path(MLA_HIP_INCLUDE_DIR hip/hip_runtime.h
              HINTS "${MLA_ROCM_PATH}/include" NO_DEFAULT_PATH)
    find_path(MLA_HIP_INCLUDE_DIR hip/hip_runtime.h)
    find_library(MLA_AMDHIP64_LIBRARY amdhip64
                 HINTS "${MLA_ROCM_PATH}/lib" "${MLA_ROCM_PATH}/lib64"
                       "${MLA_ROCM_PATH}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
    file(GLOB _llvm_bitcode_dirs "${MLA_ROCM_PATH}/lib/llvm/lib/clang/*/lib/amdgcn/bitcode")
    find_path(MLA_HIP_DEVICE_LIB_PATH ocml.bc
              HINTS "${MLA_ROCM_PATH}/amdgcn/bitcode"
                    "${MLA_ROCM_PATH}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode"
                    "${MLA_ROCM_PATH}/lib/amdgcn/bitcode" ${_llvm_bitcode_dirs}
              NO_DEFAULT_PATH)
    foreach(_v MLA_HIP_INCLUDE_DIR MLA_AMDHIP64_LIBRARY MLA_HIP_DEVICE_LIB_PATH)
      if(NOT ${_v})
        message(FATAL_ERROR "hip backend (cxx mode): ${_v} not found under ${MLA_ROCM_PATH}. "
                "On Debian 12: apt-get install clang-19 lld-19 libamdhip64-dev "
                "rocm-device-libs (tests/run.sh does this).")
      endif()
    endforeach()
    if(CMAKE_HIP_ARCHITECTURES)
      set(MLA_HIP_ARCHS "${CMAKE_HIP_ARCHITECTURES}")
    elseif(EXISTS "${MLA_HIP_DEVICE_LIB_PATH}/oclc_isa_version_942.bc")
      set(MLA_HIP_ARCHS gfx942)
    else()
      set(MLA_HIP_ARCHS gfx940)
      message(STATUS "libmla_decode hip: no gfx942 device library in ${MLA_HIP_DEVICE_LIB_PATH}; "
                     "building for gfx940 (set CMAKE_HIP_ARCHITECTURES to override)")
    endif()
    set(MLA_HIP_DEVICE_COMPILER "${CMAKE_CXX_COMPILER}")
    set(_check_default gfx942)
  endif()

  set(MLA_HIP_DEVICE_CHECK_ARCHS "${_check_default}" CACHE STRING
      "Device-only assembly check of the kernels for these AMD architectures (empty: none)")
  set(MLA_HIP_DEVICE_CHECK_NEW_ARCHS "" CACHE STRING
      "Device-only assembly check by MLA_HIP_DEVICE_CHECK_NEW_COMPILER for these architectures")
  set(MLA_HIP_DEVICE_CHECK_NEW_COMPILER "" CACHE STRING
      "clang++ (name or path) of the MLA_HIP_DEVICE_CHECK_NEW_ARCHS check, e.g. clang++-22")
  unset(MLA_HIP_NEW_DEVICE_COMPILER)  # found below (a set variable stops find_program)
  set(_mla_hip_check_compat "${CMAKE_CURRENT_LIST_DIR}/hip_device_check_compat.h")
  if(MLA_HIP_DEVICE_CHECK_NEW_ARCHS)
    if(MLA_HIP_DEVICE_CHECK_NEW_COMPILER)
      find_program(MLA_HIP_NEW_DEVICE_COMPILER NAMES "${MLA_HIP_DEVICE_CHECK_NEW_COMPILER}"
                   NO_CACHE)
    endif()
    if(NOT MLA_HIP_NEW_DEVICE_COMPILER)
      message(FATAL_ERROR "MLA_HIP_DEVICE_CHECK_NEW_ARCHS=${MLA_HIP_DEVICE_CHECK_NEW_ARCHS} needs "
              "MLA_HIP_DEVICE_CHECK_NEW_COMPILER, a clang++ that knows them (got "
              "'${MLA_HIP_DEVICE_CHECK_NEW_COMPILER}'). On Debian 12: apt-get install clang-22 "
              "lld-22 (tests/run.sh does this), then clang++-22.")
    endif()
  endif()
  set(_new_check "")
  if(MLA_HIP_DEVICE_CHECK_NEW_ARCHS)
    set(_new_check "; by ${MLA_HIP_NEW_DEVICE_COMPILER}: ${MLA_HIP_DEVICE_CHECK_NEW_ARCHS}")
  endif()
  message(STATUS "libmla_decode hip: mode ${MLA_HIP_MODE}, architectures ${MLA_HIP_ARCHS}, "
                 "device check: ${MLA_HIP_DEVICE_CHECK_ARCHS}${_new_check}")
endif()

# ----------------------------------------------------------------------------------------------
# emu: one vendor path's kernels as host C++ (clang: cdna3.h's vector types), run on the CPU
# ----------------------------------------------------------------------------------------------
# MLA_EMU_TARGET: which vendor's path the emulated GPU runs: gfx942 (the AMD path: arch/amd/cdna3.h
# over an emulated wave 64) or sm90a (the NVIDIA path: arch/nvidia/sm80.h and sm90.h, the
# stage-1 wgmma kernels included, over emulated PTX instructions).
set(MLA_EMU_TARGET "gfx942" CACHE STRING "MLA_BACKEND=emu: the emulated GPU, gfx942 or sm90a")
set_property(CACHE MLA_EMU_TARGET PROPERTY STRINGS gfx942 sm90a)
if(MLA_BACKEND_RESOLVED STREQUAL "emu" AND NOT MLA_EMU_TARGET MATCHES "^(gfx942|sm90a)$")
  message(FATAL_ERROR "MLA_EMU_TARGET must be gfx942 or sm90a (got '${MLA_EMU_TARGET}')")
endif()
if(MLA_BACKEND_RESOLVED STREQUAL "emu" AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "MLA_BACKEND=emu compiles the kernels as host C++ with clang (the AMD ones' "
          "ext_vector_type operands): configure with -DCMAKE_CXX_COMPILER=clang++-19 (got "
          "${CMAKE_CXX_COMPILER_ID})")
endif()

# Public compile definitions and runtime library of the backend on <target>.
function(mla_backend_usage target)
  if(MLA_BACKEND_RESOLVED STREQUAL "cuda")
    target_compile_definitions(${target} PUBLIC MLA_BACKEND_CUDA=1)
    target_link_libraries(${target} PUBLIC CUDA::cudart)
  elseif(MLA_BACKEND_RESOLVED STREQUAL "hip")
    target_compile_definitions(${target} PUBLIC MLA_BACKEND_HIP=1)
    if(MLA_HIP_MODE STREQUAL "language")
      target_link_libraries(${target} PUBLIC hip::host)
    else()
      target_compile_definitions(${target} PUBLIC __HIP_PLATFORM_AMD__=1)
      if(NOT MLA_HIP_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        target_include_directories(${target} SYSTEM PUBLIC "${MLA_HIP_INCLUDE_DIR}")
      endif()
      target_link_libraries(${target} PUBLIC "${MLA_AMDHIP64_LIBRARY}")
    endif()
  elseif(MLA_BACKEND_RESOLVED STREQUAL "emu")
    target_compile_definitions(${target} PUBLIC MLA_BACKEND_EMU=1)
    if(MLA_EMU_TARGET STREQUAL "sm90a")
      target_compile_definitions(${target} PUBLIC MLA_EMU_SM90=1)
    endif()
  endif()
endfunction()

# Device-only compile of <files> to assembly for each arch of MLA_HIP_DEVICE_CHECK_ARCHS (by the
# backend's compiler) and of MLA_HIP_DEVICE_CHECK_NEW_ARCHS (by the newer clang, with the compat
# header), with the include directories and definitions of <target>; all of it hangs off the ALL
# target mla_hip_device_check.
function(_mla_hip_device_check target)
  set(_jobs "")  # <arch>|<compiler>|<new: 1 for the newer clang>
  foreach(_arch IN LISTS MLA_HIP_DEVICE_CHECK_ARCHS)
    list(APPEND _jobs "${_arch}|${MLA_HIP_DEVICE_COMPILER}|0")
  endforeach()
  foreach(_arch IN LISTS MLA_HIP_DEVICE_CHECK_NEW_ARCHS)
    list(APPEND _jobs "${_arch}|${MLA_HIP_NEW_DEVICE_COMPILER}|1")
  endforeach()
  if(NOT _jobs)
    return()
  endif()
  set(_incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(_defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(_outputs "")
  foreach(_src IN LISTS ARGN)
    get_filename_component(_abs "${_src}" ABSOLUTE)
    get_filename_component(_name "${_src}" NAME_WE)
    # The mma16 kernels once more in the other AMD form of their tile copies (AMD's default is
    # staged through registers; MLA_MMA16_COPIES=single waits for each tile), so that both forms
    # compile for every checked target whatever the build's own setting. A form's flags are
    # comma-separated; its -U takes back the build's own setting.
    set(_forms "|")
    if(_name MATCHES "^stage1_mma16")
      if(MLA_MMA16_COPIES STREQUAL "single")
        list(APPEND _forms ".staged|-UMLA_MMA16_COPIES_SINGLE,-DMLA_MMA16_COPIES_STAGED=1")
      else()
        list(APPEND _forms ".single|-UMLA_MMA16_COPIES_STAGED,-DMLA_MMA16_COPIES_SINGLE=1")
      endif()
    endif()
    foreach(_job_form IN LISTS _jobs)
     foreach(_form IN LISTS _forms)
      string(REPLACE "|" ";" _job "${_job_form}")
      list(GET _job 0 _arch)
      list(GET _job 1 _compiler)
      list(GET _job 2 _new)
      string(REPLACE "|" ";" _form "${_form}")
      list(GET _form 0 _suffix)
      list(LENGTH _form _form_len)
      set(_form_def "")
      if(_form_len GREATER 1)
        list(GET _form 1 _form_def)
        string(REPLACE "," ";" _form_def "${_form_def}")
      endif()
      set(_out "${CMAKE_CURRENT_BINARY_DIR}/device_check/${_name}${_suffix}.${_arch}.s")
      set(_extra -MD -MF "${_out}.d")
      if(_new)
        # The compat header; and the header dependencies asked of the device compile itself:
        # since clang 21 the driver leaves -MD / -MF to the host compile (llvm-project pull
        # request 125646), and a device-only compile has none.
        set(_extra -include "${_mla_hip_check_compat}" -Xclang -dependency-file -Xclang
                   "${_out}.d" -Xclang -MT -Xclang "${_out}")
      endif()
      add_custom_command(
        OUTPUT "${_out}"
        COMMAND "${_compiler}" -x hip "--offload-arch=${_arch}" -nogpulib
                --cuda-device-only -S -std=c++17 -O3 -Wall -Wextra
                "--rocm-path=${MLA_ROCM_PATH}"
                "$<$<BOOL:${_defs}>:-D$<JOIN:${_defs},;-D>>"
                "$<$<BOOL:${_incs}>:-I$<JOIN:${_incs},;-I>>"
                ${_form_def} ${_extra} -o "${_out}" "${_abs}"
        DEPENDS "${_abs}"
        DEPFILE "${_out}.d"
        COMMENT "Device-only compile of ${_name}${_suffix} for ${_arch} (assembly)"
        COMMAND_EXPAND_LISTS VERBATIM)
      list(APPEND _outputs "${_out}")
     endforeach()
    endforeach()
  endforeach()
  if(NOT TARGET mla_hip_device_check)
    add_custom_target(mla_hip_device_check ALL)
  endif()
  string(MAKE_C_IDENTIFIER "mla_hip_device_check_${target}" _sub)
  add_custom_target(${_sub} DEPENDS ${_outputs})
  add_dependencies(mla_hip_device_check ${_sub})
endfunction()

function(mla_gpu_sources target)
  if(MLA_BACKEND_RESOLVED STREQUAL "cuda")
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CUDA)
    target_sources(${target} PRIVATE ${ARGN})
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xptxas=-warn-spills -lineinfo>)
  elseif(MLA_BACKEND_RESOLVED STREQUAL "hip")
    if(MLA_HIP_MODE STREQUAL "language")
      set_source_files_properties(${ARGN} PROPERTIES LANGUAGE HIP)
      set_target_properties(${target} PROPERTIES HIP_VISIBILITY_PRESET hidden)
    else()
      set(_flags -x hip "--rocm-path=${MLA_ROCM_PATH}"
                 "--rocm-device-lib-path=${MLA_HIP_DEVICE_LIB_PATH}")
      foreach(_arch IN LISTS MLA_HIP_ARCHS)
        list(APPEND _flags "--offload-arch=${_arch}")
      endforeach()
      set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "${_flags}")
    endif()
    target_sources(${target} PRIVATE ${ARGN})
    _mla_hip_device_check(${target} ${ARGN})
  elseif(MLA_BACKEND_RESOLVED STREQUAL "emu")
    # Kernels may pun types through pointers as device code does: no strict aliasing.
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CXX
                                COMPILE_OPTIONS "-x;c++;-fno-strict-aliasing")
    target_sources(${target} PRIVATE ${ARGN} ${PROJECT_SOURCE_DIR}/kernels/arch/emu/simt.cpp
                   ${PROJECT_SOURCE_DIR}/kernels/arch/emu/lds.cpp)
    if(MLA_EMU_TARGET STREQUAL "sm90a")
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/kernels/arch/emu/ptx.cpp)
    endif()
  else()
    return()
  endif()
  mla_backend_usage(${target})
endfunction()
