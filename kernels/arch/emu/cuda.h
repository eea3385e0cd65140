// The emulated NVIDIA GPU (MLA_BACKEND=emu, target sm90a; simt.h): the CUDA names the NVIDIA
// arch layer and the kernels use (thread and block indices, the CTA barrier, warp shuffles and
// votes, the shared window, a few intrinsics), by the CUDA C++ Programming Guide's definitions,
// over the emulated machine. The PTX instructions themselves are emu/ptx_sm80.h and
// emu/ptx_sm90.h.
#pragma once

#include "arch/emu/simt.h"

#define __grid_constant__

namespace mla::emu {
[[noreturn]] void trap();  // the kernel stops here: the launch fails (ptx.cpp)
size_t shared_offset(const void* p);  // __cvta_generic_to_shared (ptx.cpp)

// threadIdx / blockIdx / blockDim / gridDim: x from the machine, y and z 0 (or 1 for sizes).
template <unsigned (*kX)(), unsigned kYZ>
struct Dim3Of {
    struct X {
        operator unsigned() const { return kX(); }
    } x;
    struct YZ {
        operator unsigned() const { return kYZ; }
    } y, z;
};
// A lane's part of a warp collective whose mask is not the full warp: not emulated.
void full_mask(unsigned mask);  // fails the launch unless mask == 0xffffffff
}  // namespace mla::emu

inline constexpr mla::emu::Dim3Of<mla::emu::thread_index, 0> threadIdx{};
inline constexpr mla::emu::Dim3Of<mla::emu::block_index, 0> blockIdx{};
inline constexpr mla::emu::Dim3Of<mla::emu::block_threads, 1> blockDim{};
inline constexpr mla::emu::Dim3Of<mla::emu::grid_blocks, 1> gridDim{};

inline void __syncthreads() { mla::emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    mla::emu::full_mask(mask);
    (void)mla::emu::wave_exchange(nullptr, 0);
}
[[noreturn]] inline void __trap() { mla::emu::trap(); }
inline size_t __cvta_generic_to_shared(const void* p) { return mla::emu::shared_offset(p); }
// Rounded to nearest, never contracted into an FMA (a separate statement each).
inline float __fmul_rn(float a, float b) {
    volatile float r = a * b;
    return r;
}
inline float __fadd_rn(float a, float b) {
    volatile float r = a + b;
    return r;
}

// Warp shuffles: lane l reads lane (l & ~(width - 1)) + (src % width) (__shfl_sync), or l ^ mask
// where that lies in l's width-segment, else its own value (__shfl_xor_sync).
template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    mla::emu::full_mask(mask);
    const uint8_t* all = mla::emu::wave_put(v);
    const int lane = static_cast<int>(mla::emu::thread_index()) % mla::emu::kWave;
    return mla::emu::lane_value<T>(all, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    mla::emu::full_mask(mask);
    const uint8_t* all = mla::emu::wave_put(v);
    const int lane = static_cast<int>(mla::emu::thread_index()) % mla::emu::kWave;
    const int partner = lane ^ lane_mask;
    const bool inside = partner < ((lane + width) & ~(width - 1));
    return mla::emu::lane_value<T>(all, inside ? partner : lane);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
    mla::emu::full_mask(mask);
    const uint8_t* all = mla::emu::wave_put(predicate != 0);
    unsigned r = 0;
    for (int l = 0; l < mla::emu::kWave; ++l)
        if (mla::emu::lane_value<bool>(all, l)) r |= 1u << l;
    return r;
}
inline int __any_sync(unsigned mask, int predicate) {
    return __ballot_sync(mask, predicate) != 0 ? 1 : 0;
}
