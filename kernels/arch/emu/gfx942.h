// The emulated AMD GPU (MLA_BACKEND=emu, target gfx942; simt.h): the HIP and amdgcn builtins
// arch/amd/cdna3.h calls, under their own names, by the AMD CDNA3 ISA's definitions (fragment
// layouts: lane = 16 q + r; A[r][k] with k = 4q .. 4q+3 (16-bit, 16x16x16) or 8q .. 8q+7 (fp8,
// 16x16x32) in element order; B[k][r] likewise; D[4q + i][r] in element i), f32 accumulation in
// k order. The fp8 MFMA reads e4m3fnuz, as gfx942 does (__gfx942__ is the emulated target).
#pragma once

#include "arch/emu/simt.h"

// The emulated target: the architecture tests of cdna3.h and mxfp4.h take gfx942's branches.
#define __gfx942__ 1
#define __HIP_DEVICE_COMPILE__ 1

namespace mla::emu {

// D = C + A B for this lane's 4 outputs (D[4q + i][r], lane = 16 q + r): the wave's A B is
// computed once, by the first lane to get here, from every lane's operands: a(lane, j) / b(lane,
// j) give element j of a lane's A / B fragment as a float, kPerLane per lane (A[r][kPerLane q
// + j] and B[kPerLane q + j][r]), summed in k order.
template <int kPerLane, typename A, typename B>
void mfma_16x16(const A& a, const B& b, const float (&c)[4], float (&d)[4]) {
    bool fresh = false;
    float(&ab)[16][16] = *reinterpret_cast<float(*)[16][16]>(wave_once(&fresh));
    if (fresh) {
        float av[16][4 * kPerLane], bv[4 * kPerLane][16];
        for (int lane = 0; lane < kWave; ++lane)
            for (int j = 0; j < kPerLane; ++j) {
                av[lane % 16][kPerLane * (lane / 16) + j] = a(lane, j);
                bv[kPerLane * (lane / 16) + j][lane % 16] = b(lane, j);
            }
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 16; ++n) {
                float acc = 0.0f;
                for (int k = 0; k < 4 * kPerLane; ++k) acc += av[m][k] * bv[k][n];
                ab[m][n] = acc;
            }
    }
    const int lane = static_cast<int>(thread_index()) % kWave;
    for (int i = 0; i < 4; ++i) d[i] = c[i] + ab[4 * (lane / 16) + i][lane % 16];
}

}  // namespace mla::emu

// ---- the HIP and amdgcn builtins the AMD arch layer calls --------------------------------------
inline unsigned __builtin_amdgcn_workitem_id_x() { return mla::emu::thread_index(); }
inline unsigned __builtin_amdgcn_workgroup_id_x() { return mla::emu::block_index(); }
inline unsigned __builtin_amdgcn_workgroup_size_x() { return mla::emu::block_threads(); }
// Each work-item's memory operations are in program order here: the fences have nothing to do.
inline void __builtin_amdgcn_fence(int, const char*) {}
inline void __builtin_amdgcn_s_barrier() { mla::emu::sync_block(); }
inline float __builtin_amdgcn_exp2f(float x) { return std::exp2(x); }

// HIP's: a lane whose partner lies outside its width-segment keeps its own value; a source
// lane is taken modulo the width.
template <typename T>
T __shfl_xor(T v, int mask, int width) {
    const uint8_t* all = mla::emu::wave_put(v);
    const int lane = static_cast<int>(mla::emu::thread_index()) % mla::emu::kWave;
    const int partner = lane ^ mask;
    const bool inside = partner < ((lane + width) & ~(width - 1));
    return mla::emu::lane_value<T>(all, inside ? partner : lane);
}
template <typename T>
T __shfl(T v, int src, int width) {
    const uint8_t* all = mla::emu::wave_put(v);
    const int lane = static_cast<int>(mla::emu::thread_index()) % mla::emu::kWave;
    return mla::emu::lane_value<T>(all, (lane & ~(width - 1)) + (src & (width - 1)));
}

// v_perm_b32 (__builtin_amdgcn_perm(src0, src1, sel)): byte i of the result, by selector byte
// s_i, is byte s_i of {src0 (bytes 4..7), src1 (bytes 0..3)} for 0..7, the sign of byte 1, 3,
// 5 or 7 spread over the byte for 8..11, 0x00 for 12 and 0xFF for 13 and above.
inline uint32_t __builtin_amdgcn_perm(uint32_t src0, uint32_t src1, uint32_t sel) {
    const uint64_t bytes = (static_cast<uint64_t>(src0) << 32) | src1;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
        const uint32_t s = (sel >> (8 * i)) & 0xffu;
        uint32_t byte = 0xffu;
        if (s < 8) byte = (bytes >> (8 * s)) & 0xffu;
        else if (s < 12) byte = ((bytes >> (8 * (2 * (s - 8) + 1) + 7)) & 1u) ? 0xffu : 0u;
        else if (s == 12) byte = 0u;
        r |= byte << (8 * i);
    }
    return r;
}

namespace mla::emu {
// The operands of one 16-bit MFMA as a lane puts them in the exchange.
struct Mfma16Operands {
    uint16_t a[4], b[4];
};
template <typename V>
uint16_t bits16(const V& v, int i) {
    uint16_t b;
    const auto e = v[i];
    std::memcpy(&b, &e, 2);
    return b;
}
template <typename V, typename C>
C mfma_16bit(const V& a, const V& b, C c, float (*value)(uint16_t)) {
    Mfma16Operands mine;
    for (int i = 0; i < 4; ++i) {
        mine.a[i] = bits16(a, i);
        mine.b[i] = bits16(b, i);
    }
    const uint8_t* all = wave_put(mine);
    auto at = [&](int lane) {
        return reinterpret_cast<const Mfma16Operands*>(all + lane * kSlotBytes);
    };
    const float cin[4] = {c[0], c[1], c[2], c[3]};
    float d[4];
    mfma_16x16<4>([&](int lane, int j) { return value(at(lane)->a[j]); },
                  [&](int lane, int j) { return value(at(lane)->b[j]); }, cin, d);
    for (int i = 0; i < 4; ++i) c[i] = d[i];
    return c;
}
}  // namespace mla::emu

template <typename V, typename C>
C __builtin_amdgcn_mfma_f32_16x16x16f16(V a, V b, C c, int, int, int) {
    return mla::emu::mfma_16bit(a, b, c, mla::emu::f16_value);
}
template <typename V, typename C>
C __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(V a, V b, C c, int, int, int) {
    return mla::emu::mfma_16bit(a, b, c, mla::emu::bf16_value);
}
// A[r][8q + j] is byte j of lane 16 q + r's 64-bit operand (the lowest k in the lowest byte).
template <typename C>
C __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(int64_t a, int64_t b, C c, int, int, int) {
    const int64_t mine[2] = {a, b};
    const uint8_t* all = mla::emu::wave_put(mine);
    auto code = [&](int lane, int operand, int j) {
        return mla::emu::lane_value<uint8_t>(all + 8 * operand + j, lane);
    };
    const float cin[4] = {c[0], c[1], c[2], c[3]};
    float d[4];
    mla::emu::mfma_16x16<8>(
        [&](int lane, int j) { return mla::emu::e4m3fnuz_value(code(lane, 0, j)); },
        [&](int lane, int j) { return mla::emu::e4m3fnuz_value(code(lane, 1, j)); }, cin, d);
    for (int i = 0; i < 4; ++i) c[i] = d[i];
    return c;
}
