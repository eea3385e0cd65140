// AMD CDNA3 generation of the architecture layer (included by arch/device.h only), used by
// every AMD build: wave 64; matrix atom v_mfma_f32_16x16x16{f16,bf16_1k} (gfx90a+), f32
// accumulate, and v_mfma_f32_16x16x32_fp8_fp8 for e4m3 scores (gfx940+); plain loads into LDS.
//
// Fragment facts used below (AMD CDNA3 ISA, MFMA 16x16x16, 16-bit inputs), lane = 16 * q + r
// (r = lane % 16, q = lane / 16):
//   A (16x16): A[r][4q .. 4q+3]      B (16x16): B[4q .. 4q+3][r]      D: D[4q + i][r], i = 0..3
// Scores are computed transposed (A = K, B = Q^T) so that D's layout is exactly the A layout of
// P for the value product: lane holds S[head r][tokens 4q .. 4q+3].
//
// Copies into LDS are plain loads and stores here (no asynchronous path yet), so stages only
// bound LDS use; this backend is compile-checked, not yet run.
//
// CDNA4 (MI350 / MI355, gfx950) differs in what a later arch/amd/cdna4.h would use; nothing here
// depends on it yet, and every atom below still exists there. CI compiles every kernel, as is,
// to gfx950 device assembly (clang-22; tests/run.sh), so this file must keep compiling for it.
//   * LDS: 160 KiB per workgroup (64 KiB on gfx942; clang-22 enforces both limits). Not chosen
//     per target here: kMaxSharedBytesPerBlock sizes the launch (a kernel's kSmemBytes) in the
//     host pass too, which sees no device target, so a per-target value would disagree between
//     the passes of one build. Nor would it help yet: copies are synchronous, one tile in LDS,
//     which fits in 64 KiB. Asynchronous copies on gfx950 would size their stages from the
//     device's limit at run time (gpu::max_shared_bytes_per_block) instead.
//   * fp8: the OCP formats (e4m3fn, e5m2) are native in the conversion and matrix instructions;
//     CDNA3's are the fnuz variants (bias 8, 0x80 = NaN). The one fp8 matrix atom used here,
//     v_mfma_f32_16x16x32_fp8_fp8 (mma_scores_e4m3), reads e4m3fnuz on gfx942 and e4m3fn on
//     gfx950 (kE4M3MmaNative). v_cvt_pk_f32_fp8 reads e4m3fn on
//     gfx950 and e4m3fnuz on gfx942; gfx950 adds v_cvt_scalef32_pk_f16_fp8 (two e4m3fn codes ->
//     f16x2 times an f32 scale; __builtin_amdgcn_cvt_scalef32_pk_f16_fp8, not on gfx942). The
//     kernels decode both flavours with the exact integer decode of arch/fp8.h on every target
//     instead: a conversion path for gfx950 alone could be compile-checked here but neither
//     run nor timed, so it waits for an MI355.
//   * Matrix atoms with twice the K for 16-bit inputs (v_mfma_f32_16x16x32_{f16,bf16}) and
//     block-scaled fp8 / fp6 / fp4 ones (v_mfma_scale_f32_16x16x128_f8f6f4, MX scales in
//     hardware).
#pragma once

#include <cstdint>

namespace mla::arch {

// ---- hardware facts (kernel configurations derive their shapes from these) -----------------
inline constexpr int kWarpSize = 64;
// LDS per workgroup (gfx942, MI300).
inline constexpr int kMaxSharedBytesPerBlock = 64 * 1024;
// 32-bit registers a work-item may hold at one wave per SIMD (CDNA3 / CDNA4): 256 arch VGPRs,
// and 256 AccVGPRs beside them, where the compiler keeps matrix accumulators.
inline constexpr int kRegistersPerLane = 256;
inline constexpr int kAccRegistersPerLane = 256;
// No asynchronous global -> LDS path is used here: copies are loads and stores, so a kernel
// gains nothing from more than one tile in LDS.
inline constexpr bool kAsyncCopies = false;

// ---- work-item ids and the workgroup barrier --------------------------------------------------
// By the compiler's builtins: what HIP's threadIdx.x / blockIdx.x / blockDim.x / __syncthreads
// become once the device libraries are linked and inlined, without the external calls that a
// device-only compile keeps otherwise (-nogpulib, the CI check for gfx942 / gfx950, whose device
// libraries Debian lacks: a call waits for every load in flight and takes every register, so
// that assembly would not show what a real build does). The barrier's fences are at workgroup
// scope, which outside thread-group split mode waits for LDS only (s_waitcnt lgkmcnt(0)): loads
// into registers stay in flight across it, as mma16's staged copies need.
MLA_DEVICE unsigned thread_index() { return __builtin_amdgcn_workitem_id_x(); }
MLA_DEVICE unsigned block_index() { return __builtin_amdgcn_workgroup_id_x(); }
MLA_DEVICE unsigned block_threads() { return __builtin_amdgcn_workgroup_size_x(); }
MLA_DEVICE void sync_block() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

MLA_DEVICE int lane_id() { return static_cast<int>(thread_index()) & (kWarpSize - 1); }
MLA_DEVICE int warp_id() { return static_cast<int>(thread_index()) / kWarpSize; }

MLA_DEVICE float shfl_xor(float v, int mask) { return __shfl_xor(v, mask, kWarpSize); }
// Lane `src`'s v, to every lane of the wavefront.
MLA_DEVICE float shfl(float v, int src) { return __shfl(v, src, kWarpSize); }

MLA_DEVICE float fast_exp2(float x) { return __builtin_amdgcn_exp2f(x); }

// f16 bits (low 16 bits of h) -> float, exact.
MLA_DEVICE float f16_bits_to_float(uint32_t h) {
    const uint16_t b = static_cast<uint16_t>(h);
    _Float16 v;
    __builtin_memcpy(&v, &b, 2);
    return static_cast<float>(v);
}

// Two floats -> f16x2 (low half = a), round to nearest even.
MLA_DEVICE uint32_t pack_f16x2(float a, float b) {
    const _Float16 h[2] = {static_cast<_Float16>(a), static_cast<_Float16>(b)};
    uint32_t d;
    __builtin_memcpy(&d, h, 4);
    return d;
}

typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));

template <typename V>
MLA_DEVICE V pack4(uint32_t lo, uint32_t hi) {
    const uint32_t words[2] = {lo, hi};
    V v;
    __builtin_memcpy(&v, words, sizeof(v));
    return v;
}

template <MmaType T>
MLA_DEVICE void mfma_16x16x16(float (&c)[4], uint32_t a_lo, uint32_t a_hi, uint32_t b_lo,
                              uint32_t b_hi) {
    float4_t acc = {c[0], c[1], c[2], c[3]};
    if constexpr (T == MmaType::kF16) {
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(pack4<half4_t>(a_lo, a_hi),
                                                    pack4<half4_t>(b_lo, b_hi), acc, 0, 0, 0);
    } else {
        acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(pack4<short4_t>(a_lo, a_hi),
                                                        pack4<short4_t>(b_lo, b_hi), acc, 0, 0, 0);
    }
    c[0] = acc[0];
    c[1] = acc[1];
    c[2] = acc[2];
    c[3] = acc[3];
}

// ---- the score atom: S[16 heads][16 tokens] over 16 dims, one MFMA (A = K, B = Q^T) ---------
struct ScoreAtom {
    static constexpr int kTokensPerLane = 1;  // K row r
    static constexpr int kHeadsPerLane = 1;   // Q row r
    static constexpr int kAcc = 4;
    static constexpr int kKGroups = 4;
    MLA_DEVICE static int kgroup(int lane) { return lane >> 4; }
    MLA_DEVICE static int token(int lane, int) { return lane & 15; }
    MLA_DEVICE static int head(int lane, int) { return lane & 15; }
    MLA_DEVICE static int acc_head_slot(int) { return 0; }
    MLA_DEVICE static int acc_token(int lane, int i) { return 4 * (lane >> 4) + i; }
    // Reduce over the lanes holding parts of the same head rows (the kKGroups lanes of a row).
    MLA_DEVICE static float reduce_max_across_row(float v) {
        v = fmaxf(v, shfl_xor(v, 16));
        return fmaxf(v, shfl_xor(v, 32));
    }
    MLA_DEVICE static float reduce_sum_across_row(float v) {
        v += shfl_xor(v, 16);
        return v + shfl_xor(v, 32);
    }
};

template <MmaType T>
MLA_DEVICE void mma_scores(float (&acc)[ScoreAtom::kAcc], const Quad (&q)[1],
                           const Quad (&k)[1]) {
    mfma_16x16x16<T>(acc, k[0].lo, k[0].hi, q[0].lo, q[0].hi);
}

// ---- the e4m3 score atom: e4m3 Q and K codes as stored, 32 dims a step -------------------
// The same S[16 heads][16 tokens], lanes and accumulator as ScoreAtom, from one
// v_mfma_f32_16x16x32_fp8_fp8 (A = K, B = Q^T; f32 accumulate). Fragment facts (AMD matrix
// instruction calculator, CDNA3, lane = 16 q + r): A[r][8q .. 8q+7] in two registers (the
// lowest k in the low byte of the first), B[8q .. 8q+7][r] likewise, D as for 16x16x16. A Quad
// here is 8 codes of one row (lo: 4, hi: 4), the same 8 dims for Q and K. The instruction reads
// e4m3fnuz on CDNA3 (gfx940, gfx941, gfx942) and OCP e4m3fn on CDNA4 (gfx950):
// kE4M3MmaNative<F> says whether this pass multiplies flavour F. Plans take this atom only where
// the device's code has it (mla::stage1_e4m3_scores); in other passes it traps.
// kE4M3MmaPass: {e4m3fn, e4m3fnuz} (Fp8Flavor's order).
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
inline constexpr bool kE4M3MmaPass[2] = {false, true};
#elif defined(__gfx950__)
inline constexpr bool kE4M3MmaPass[2] = {true, false};
#else
inline constexpr bool kE4M3MmaPass[2] = {false, false};
#endif
template <Fp8Flavor F>
inline constexpr bool kE4M3MmaNative = kE4M3MmaPass[static_cast<int>(F)];

template <Fp8Flavor F>
MLA_DEVICE void mma_scores_e4m3(float (&acc)[ScoreAtom::kAcc], const Quad (&q)[1],
                                const Quad (&k)[1]) {
    if constexpr (kE4M3MmaNative<F>) {
        const int64_t a = static_cast<int64_t>((static_cast<uint64_t>(k[0].hi) << 32) | k[0].lo);
        const int64_t b = static_cast<int64_t>((static_cast<uint64_t>(q[0].hi) << 32) | q[0].lo);
        float4_t c = {acc[0], acc[1], acc[2], acc[3]};
        c = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, c, 0, 0, 0);
        acc[0] = c[0];
        acc[1] = c[1];
        acc[2] = c[2];
        acc[3] = c[3];
    } else {
        __builtin_trap();
    }
}

// ---- the value atom: O[16 heads][16 dims] += P[16][16 tokens] * V[16 tokens][16 dims] -----
struct ValueAtom {
    static constexpr int kPRegs = 2;
    static constexpr int kTileDims = 16;
    static constexpr int kOAcc = 4;
    MLA_DEVICE static int o_head(int lane, int i) { return 4 * (lane >> 4) + i; }
    MLA_DEVICE static int o_col(int lane, int) { return lane & 15; }
};

template <MmaType T>
MLA_DEVICE void mma_values(float (&o)[4], const uint32_t (&p)[2], const uint32_t (&v)[2]) {
    mfma_16x16x16<T>(o, p[0], p[1], v[0], v[1]);
}

// ---- value fragments: lane needs V[tokens 4q .. 4q+3][one dim] per tile ----------------------
// Reads 4 dims (16-bit values) of each of the lane's 4 token rows and transposes in registers;
// tile j column c is dim 4c + j.
struct ValueLoader16 {
    static constexpr int kTiles = 4;
    static constexpr int kDims = 64;
    MLA_DEVICE static int dim(int tile, int col) { return 4 * col + tile; }
    MLA_DEVICE static void load(const uint8_t* tile_rows, int row_bytes, int row0, int dim0,
                                uint32_t (&v)[kTiles][2]) {
        const int lane = lane_id();
        const uint8_t* base = tile_rows + 2 * (dim0 + 4 * (lane & 15));
        const int r0 = row0 + 4 * (lane >> 4);
        uint32_t w[4][2];  // token r: (dims 0,1), (dims 2,3)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const uint2 x = *reinterpret_cast<const uint2*>(base + (r0 + r) * row_bytes);
            w[r][0] = x.x;
            w[r][1] = x.y;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
            v[j][0] = byte_perm(w[0][j >> 1], w[1][j >> 1], sel);
            v[j][1] = byte_perm(w[2][j >> 1], w[3][j >> 1], sel);
        }
    }
};

// ---- global -> LDS copies (synchronous for now) ---------------------------------------------
MLA_DEVICE void copy_16_async(void* smem, const void* gmem, bool valid) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (valid) v = *reinterpret_cast<const uint4*>(gmem);
    *reinterpret_cast<uint4*>(smem) = v;
}
MLA_DEVICE void copy_4_async(void* smem, const void* gmem, bool valid) {
    *reinterpret_cast<uint32_t*>(smem) = valid ? *reinterpret_cast<const uint32_t*>(gmem) : 0u;
}
MLA_DEVICE void copy_commit() {}
template <int N>
MLA_DEVICE void copy_wait() {}

// ---- programmatic dependent launch: none on AMD -----------------------------------------------
// HIP launches every kernel after the one before it in the stream has finished (there is no
// gpu::launch_dependent), so there is nothing to wait for or allow.
MLA_DEVICE void wait_prior_grid() {}
MLA_DEVICE void allow_dependent_launch() {}

}  // namespace mla::arch
