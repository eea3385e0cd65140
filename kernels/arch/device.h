// Device-side entry to the architecture layer. Kernels include this header only; it pulls in
// the compiler's GPU headers and the architecture-specific pieces of the target, by generation:
//   nvidia/sm80.h  - every NVIDIA pass (warp 32, mma.sync m16n8k16, cp.async, ldmatrix; the
//                    grid dependency controls, which emit code in sm_90+ passes only)
//   nvidia/sm90.h  - in addition, sm_90a device passes only (warpgroup MMA, bulk copies,
//                    mbarriers), for the kernels built for sm_90a alone
//   amd/cdna3.h    - every AMD pass (wave 64, MFMA 16x16x16, plain loads into LDS, no grid
//                    dependency control; the file lists what CDNA4 changes), and the emulated
//                    AMD GPU of MLA_BACKEND=emu (emu/simt.h: the same code run on the CPU)
// plus fp8.h (bit-exact fp8 -> f16 decode), mxfp4.h and the portable helpers below. Each
// generation header states the hardware facts (warp size, shared memory per block, whether
// copies can be asynchronous); kernel configurations derive their shapes from those. Kernel code
// is written once against the names in mla::arch; nothing outside kernels/arch tests for the
// vendor.
#pragma once

#include <cstdint>

#include "arch/types.h"

#if defined(MLA_BACKEND_EMU) && defined(MLA_EMU_SM90)
#include "arch/emu/cuda.h"  // the NVIDIA path on the CPU: sm80.h / sm90.h over emulated PTX
#define MLA_ARCH_NVIDIA 1
#define MLA_ARCH_EMU 1
#elif defined(MLA_BACKEND_EMU)
#include "arch/emu/gfx942.h"  // the AMD path on the CPU: cdna3.h over an emulated wave 64
#define MLA_ARCH_AMD 1
#define MLA_ARCH_EMU 1
#elif defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) || defined(MLA_BACKEND_HIP)
#include <hip/hip_runtime.h>
#define MLA_ARCH_AMD 1
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define MLA_ARCH_NVIDIA 1
#else
#error "kernels/arch/device.h is for device compilation units (nvcc, hip-clang, or emu)"
#endif

#define MLA_DEVICE __device__ __forceinline__

namespace mla::arch {

// A k16 slice of one matrix row (a token's K or a head's Q) as the matrix atoms consume it:
// four 16-bit values in two packed 32-bit pairs. Which four physical dims land in which slot is
// fixed by the decoder that produced the quad (see fp8.h / load_quad_bf16) and is the same for
// Q and K, so the dot product is unchanged.
struct Quad {
    uint32_t lo;
    uint32_t hi;
};

template <typename T>
MLA_DEVICE T bit_cast_u32(uint32_t v) {
    static_assert(sizeof(T) == 4, "32-bit types only");
    T out;
    __builtin_memcpy(&out, &v, 4);
    return out;
}

MLA_DEVICE uint32_t float_bits(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    return u;
}

MLA_DEVICE float bits_float(uint32_t u) {
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}

// float -> bf16 bits, round to nearest even; NaN stays NaN (quiet).
MLA_DEVICE uint16_t float_to_bf16_rne(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

MLA_DEVICE float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// Packs two floats into a bf16x2 pair (low half = a), round to nearest even.
MLA_DEVICE uint32_t pack_bf16x2(float a, float b) {
    return static_cast<uint32_t>(float_to_bf16_rne(a)) |
           (static_cast<uint32_t>(float_to_bf16_rne(b)) << 16);
}

}  // namespace mla::arch

#include "arch/fp8.h"
#include "arch/mxfp4.h"

#if defined(MLA_ARCH_AMD)
#include "arch/amd/cdna3.h"
#else
#if defined(MLA_ARCH_EMU)
#include "arch/emu/ptx_sm80.h"  // the same instructions, emulated
#else
#include "arch/nvidia/ptx_sm80.h"
#endif
#include "arch/nvidia/sm80.h"
#endif

// ---- hook: Hopper atoms, sm_90a device passes only ------------------------------------------
// Defines MLA_ARCH_SM90 for the kernels that use them (those are compiled for sm_90a alone: see
// MLA_SM90_KERNEL_SOURCES in src/CMakeLists.txt). Host passes and other targets never see it;
// the emulated sm_90a (MLA_EMU_SM90) does, over the emulated instructions.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#if __has_include("arch/nvidia/sm90.h")
#define MLA_ARCH_SM90 1
#include "arch/nvidia/ptx_sm90.h"
#include "arch/nvidia/sm90.h"
#endif
#elif defined(MLA_ARCH_EMU) && defined(MLA_ARCH_NVIDIA)
#define MLA_ARCH_SM90 1
#include "arch/emu/ptx_sm90.h"
#include "arch/nvidia/sm90.h"
#endif
