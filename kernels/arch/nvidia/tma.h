// NVIDIA Hopper tensor memory access (TMA): the tensor maps a stage-1 kernel takes as a
// __grid_constant__ parameter, and their encoding on the host. Host and device code include
// this; the encoder exists in CUDA builds (MLA_BACKEND_CUDA: the driver's cuTensorMapEncodeTiled,
// reached through the runtime's driver entry point, no link against libcuda) and for the
// emulated sm_90a (MLA_EMU_SM90: the emulator's own encoding, arch/emu/tensor_map.h); both
// define MLA_HAVE_TMA_ENCODER. Elsewhere a map is never valid.
#pragma once

#include <cstdint>

#if defined(MLA_BACKEND_CUDA)
#include <cuda.h>  // CUtensorMap and its enums (types only)
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#define MLA_HAVE_TMA_ENCODER 1
#elif defined(MLA_BACKEND_EMU) && defined(MLA_EMU_SM90)
#include "arch/emu/tensor_map.h"
#define MLA_HAVE_TMA_ENCODER 1
#endif

namespace mla::arch::tma {

// Two 2D maps over the cache's rows (opaque CUtensorMap bytes): `kv` the latent rows' first
// 512 bytes in boxes of 64 rows x 128 bytes (128-byte swizzle), `kpe` the rope rows' 64 bytes
// in boxes of 64 rows x 64 bytes (64-byte swizzle): wgmma's K-major swizzled layouts, byte for
// byte, at 1024- / 512-byte aligned shared addresses. ok == 0: no maps (the kernel copies).
struct alignas(128) KvMaps {  // CUtensorMap's own alignment (CUDA 13: 128)
    unsigned char kv[128];
    unsigned char kpe[128];
    int32_t ok;
};

#if defined(MLA_BACKEND_CUDA)
namespace detail {
inline PFN_cuTensorMapEncodeTiled_v12000 encoder() {
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
        const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                               cudaEnableDefault, &q);
#else
        const cudaError_t e =
            cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q);
#endif
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
            // The failed lookup's own error, not reported again by the next launch's check
            // (only where the call failed: a symbol not found sets none, and a caller's
            // earlier error must then stay).
            if (e != cudaSuccess) (void)cudaGetLastError();
            return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
        }
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
    }();
    return fn;
}
// A map of rows [0, rows) x bytes [0, width) at base with row stride `stride` bytes, boxes of
// 64 rows x box_bytes, in the swizzle of `swizzle_bytes` (128 or 64); false where the driver
// refuses it.
inline bool encode_rows(unsigned char (&out)[128], const void* base, uint64_t width,
                        uint64_t rows, uint64_t stride, uint32_t box_bytes, int swizzle_bytes) {
    const CUtensorMapSwizzle sw =
        swizzle_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    const auto fn = encoder();
    if (fn == nullptr) return false;
    static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
    CUtensorMap map;
    const cuuint64_t dims[2] = {width, rows};
    const cuuint64_t strides[1] = {stride};
    const cuuint32_t box[2] = {box_bytes, 64};
    const cuuint32_t elem[2] = {1, 1};
    const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims,
                          strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return false;
    static_assert(sizeof(out) == sizeof(map), "opaque bytes of the map");
    __builtin_memcpy(out, &map, sizeof(map));
    return true;
}
}  // namespace detail
#elif defined(MLA_HAVE_TMA_ENCODER)
namespace detail {
inline bool encode_rows(unsigned char (&out)[128], const void* base, uint64_t width,
                        uint64_t rows, uint64_t stride, uint32_t box_bytes, int swizzle_bytes) {
    return emu::encode_tensor_map(out, base, width, rows, stride, box_bytes, 64, swizzle_bytes);
}
}  // namespace detail
#endif

#if defined(MLA_HAVE_TMA_ENCODER)
// The maps of a cache of `rows` slots: latent rows at kv (stride kv_stride bytes), rope rows
// at kpe (stride kpe_stride). ok only where TMA can address them: 16-byte aligned bases and
// strides, 1 .. 2^31 - 1 rows (coordinates are int32).
inline KvMaps encode_kv_maps(const uint8_t* kv, int64_t kv_stride, const uint8_t* kpe,
                             int64_t kpe_stride, int64_t rows) {
    KvMaps m{};
    const auto aligned = [](const void* p, int64_t s) {
        return p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 == 0 && s > 0 && s % 16 == 0;
    };
    if (!aligned(kv, kv_stride) || !aligned(kpe, kpe_stride) || rows <= 0 ||
        rows >= (int64_t{1} << 31))
        return m;
    const bool ok =
        detail::encode_rows(m.kv, kv, 512, static_cast<uint64_t>(rows),
                            static_cast<uint64_t>(kv_stride), 128, 128) &&
        detail::encode_rows(m.kpe, kpe, 64, static_cast<uint64_t>(rows),
                            static_cast<uint64_t>(kpe_stride), 64, 64);
    m.ok = ok ? 1 : 0;
    return m;
}
#endif

}  // namespace mla::arch::tma
