// The emulated NVIDIA GPU (target sm90a; simt.h): the emulator's tensor maps, in the 128 opaque
// bytes a CUtensorMap takes (arch/nvidia/tma.h encodes them on the host; ptx.cpp's
// cp_async_bulk_tensor_2d_g2s reads them): a 2D tensor of `rows` rows of `width` bytes at base,
// `stride` bytes apart, copied in boxes of box_rows x box_bytes into the swizzle of
// `swizzle_bytes`.
#pragma once

#include <cstdint>
#include <cstring>

namespace mla::emu {

struct TensorMap {
    static constexpr uint64_t kMagic = 0x4d4c412d544d4150ull;  // "MLA-TMAP"
    uint64_t magic;
    const uint8_t* base;
    uint64_t width, rows, stride;
    uint32_t box_bytes, box_rows;
    int32_t swizzle_bytes;
};
static_assert(sizeof(TensorMap) <= 128, "a tensor map is 128 bytes");

// false where the hardware's encoder refuses the map too (box or swizzle out of its rules).
inline bool encode_tensor_map(unsigned char (&out)[128], const void* base, uint64_t width,
                              uint64_t rows, uint64_t stride, uint32_t box_bytes,
                              uint32_t box_rows, int swizzle_bytes) {
    // A box exactly one swizzle row wide (the only form the kernels use, and the one whose
    // shared-memory layout is the swizzled one unambiguously).
    if (box_bytes != static_cast<uint32_t>(swizzle_bytes) || box_rows == 0 || box_rows > 256 ||
        (swizzle_bytes != 128 && swizzle_bytes != 64 && swizzle_bytes != 32))
        return false;
    const TensorMap map{TensorMap::kMagic, static_cast<const uint8_t*>(base), width, rows, stride,
                        box_bytes, box_rows, swizzle_bytes};
    std::memset(out, 0, sizeof(out));
    std::memcpy(out, &map, sizeof(map));
    return true;
}

}  // namespace mla::emu
