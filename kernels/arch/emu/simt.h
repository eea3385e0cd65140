// The emulated GPU (MLA_BACKEND=emu): the kernels of one vendor's path, as they are, compiled as
// host C++ by clang and run on the CPU, so that the arch layer and the kernels written against
// it execute somewhere without that GPU (CI). It checks the kernels' logic on the target's
// layouts, not the compiler's code for the target nor any speed. Two targets
// (MLA_EMU_TARGET, cmake):
//   * gfx942 (the default): the AMD path, arch/amd/cdna3.h over the amdgcn builtins of
//     emu/gfx942.h; wave 64, 64 KiB of LDS, plain copies.
//   * sm90a (MLA_EMU_SM90): the NVIDIA path, arch/nvidia/sm80.h and sm90.h over the PTX
//     instructions of emu/ptx_sm80.h and emu/ptx_sm90.h (ptx.cpp) and the CUDA names of
//     emu/cuda.h; warp 32, 227 KiB of shared memory, mbarriers, asynchronous copies (cp.async,
//     bulk and tensor copies) and warpgroup MMA, the stage-1 wgmma kernels included.
//
// What this file and simt.cpp emulate for both:
//   * Work-items: every work-item (thread) of a workgroup (CTA) is a fiber on the launching host
//     thread; the workgroups of a grid run one after another. A fiber runs until it reaches a
//     collective (a workgroup barrier, a shuffle, a matrix instruction) or waits on a barrier
//     object, and waits there; work-items that returned count as arrived at workgroup and wave
//     collectives (as on the GPU).
//   * Shared memory / LDS: the kernels' extern arrays (one buffer, filled with 0xFF bytes before
//     each workgroup so that a read of what no work-item wrote shows as NaN).
// Launches are synchronous and serialized in the process (one emulated device, one kernel at a
// time); device memory is host memory.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "arch/runtime.h"  // mla::emu::kLdsBytes

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)

// ---- the vector types and integer helpers, as kernels use them ---------------------------------
struct alignas(8) uint2 {
    uint32_t x, y;
};
struct alignas(16) uint4 {
    uint32_t x, y, z, w;
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
inline uint2 make_uint2(uint32_t x, uint32_t y) { return {x, y}; }
inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max(int64_t a, int64_t b) { return a > b ? a : b; }
inline int __ffs(int x) { return __builtin_ffs(x); }
// The fast log2 (NVIDIA's lg2.approx, AMD's v_log_f32, within an ulp or two): exact here.
inline float __log2f(float x) { return std::log2(x); }
// CUDA's / HIP's __byte_perm: byte i of the result is byte (s >> 4i) & 7 of {x, y}.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const uint64_t bytes = (static_cast<uint64_t>(y) << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i)
        r |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
    return r;
}

namespace mla::emu {

// ---- the machine (simt.cpp) --------------------------------------------------------------------
#if defined(MLA_EMU_SM90)
inline constexpr int kWave = 32;  // an NVIDIA warp
#else
inline constexpr int kWave = 64;  // a CDNA wave
#endif
unsigned thread_index();
unsigned block_index();
unsigned block_threads();
unsigned grid_blocks();
void sync_block();
// Wave collective: this work-item's `bytes` (at most kSlotBytes) go to its wave's exchange, and
// once every live work-item of the wave has put its own, the result points at the wave's kWave
// slots (lane l's at l * kSlotBytes), valid until this work-item's next collective.
inline constexpr int kSlotBytes = 48;
const uint8_t* wave_exchange(const void* data, size_t bytes);
template <typename T>
const uint8_t* wave_put(const T& v) {
    static_assert(sizeof(T) <= kSlotBytes, "a lane's part of a wave collective fits its slot");
    return wave_exchange(&v, sizeof(T));
}
// Scratch of the wave's collective in progress (kOnceBytes): `fresh` when this work-item is the
// first of its wave to ask since the collective (it then fills it for every lane: what a wave
// instruction computes or reads at once); valid, as the exchange, until this work-item's next
// collective.
inline constexpr size_t kOnceBytes = 2048;
uint8_t* wave_once(bool* fresh);
// The fill of the kernels' extern LDS arrays (kLdsBytes each, arch/runtime.h) with 0xFF bytes
// before each workgroup (lds.cpp defines them).
void poison_lds();
bool lds_untouched_past(size_t bytes);  // no write past a launch's LDS size
uint8_t* lds_base();                    // the dynamic shared memory (address 0 of the window)
// A failure of the kernel the emulator detects (a trap, a misuse of a barrier): the launch
// fails with this message (the first of the launch), and the work-item goes on.
[[gnu::format(printf, 1, 2)]] void fail(const char* format, ...);

template <typename T>
T lane_value(const uint8_t* slots, int lane) {
    T v;
    std::memcpy(&v, slots + lane * kSlotBytes, sizeof(T));
    return v;
}

// Value decodes of matrix operands (f16, e4m3fn and e4m3fnuz by table).
float f16_value(uint16_t bits);
float bf16_value(uint16_t bits);
float e4m3fn_value(uint8_t code);
float e4m3fnuz_value(uint8_t code);

}  // namespace mla::emu
