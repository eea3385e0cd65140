// Force-included (-include) into the AMD device-only check of the architectures that need a
// newer clang than the backend's (MLA_HIP_DEVICE_CHECK_NEW_ARCHS in cmake/MlaBackend.cmake:
// gfx950 with Debian 12's clang-22, over Debian's HIP 5.2.3 headers). Nothing else sees it:
// the library, its tests and the gfx940 / gfx942 checks compile without it.
//
// It changes no kernel code. It only restores two things that HIP 5.2's headers expect from the
// compiler and that clang 22 no longer provides; each piece is guarded so that it does nothing
// where the compiler (clang 19) or newer HIP headers still provide or no longer need it.
#pragma once

// 1. __AMDGCN_WAVEFRONT_SIZE: newer clangs (22 here; clang 19 still has it) no longer predefine
//    it (__builtin_amdgcn_wavefrontsize() replaces it); HIP's warpSize reads it. Every GFX9
//    target, CDNA 1-4 included, runs 64-lane waves, which is also what the kernels assume
//    (arch/amd/cdna3.h: kWarpSize).
#if defined(__AMDGCN__) && !defined(__AMDGCN_WAVEFRONT_SIZE)
#if defined(__GFX9__)
#define __AMDGCN_WAVEFRONT_SIZE 64
#else
#error "hip_device_check_compat.h: only GFX9 (wave 64) targets are checked with it"
#endif
#endif

// 2. __llvm_amdgcn_rcp_f16 / __llvm_amdgcn_rcp_2f16: clang 22 removed these pseudo-intrinsics
//    from __clang_hip_libdevice_declares.h (llvm-project pull request 171123; deprecated since
//    HIP 5.6). HIP < 5.6's amd_hip_fp16.h still calls them in hrcp / h2rcp. No kernel includes
//    that header (hip/hip_fp16.h) today or calls hrcp; these keep one that does compiling here.
//    They are the definitions clang 19 shipped. __2f16 and HIP_VERSION_* come from clang's HIP
//    wrapper headers, which the compiler includes before this file.
#if defined(__AMDGCN__) && __clang_major__ >= 22 && defined(HIP_VERSION_MAJOR) && \
    HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR < 506
__device__ inline _Float16 __llvm_amdgcn_rcp_f16(_Float16 x) { return ((_Float16)1.0f) / x; }
__device__ inline __2f16 __llvm_amdgcn_rcp_2f16(__2f16 x) { return ((__2f16)1.0f) / x; }
#endif
