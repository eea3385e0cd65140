// NVIDIA sm_80 generation of the architecture layer (included by arch/device.h only), used by
// every NVIDIA build: warp 32; matrix atom mma.sync.m16n8k16, f32 accumulate; cp.async;
// ldmatrix. These atoms run unchanged on sm_90 (Hopper), the generation this build targets;
// Hopper's own atoms (warpgroup MMA, bulk copies, mbarriers) are in arch/nvidia/sm90.h. No asm
// here: each PTX instruction is a function of arch/nvidia/ptx_sm80.h (mla::arch::ptx, included
// by arch/device.h just before this file; arch/emu has the same functions for the emulator).
//
// Fragment facts used below (PTX ISA, "Matrix Fragments for mma.m16n8k16", 16-bit types), for
// lane = 4 * g + t (g = groupID 0..7, t = threadID_in_group 0..3):
//   A (16x16, row): a0a1 = A[g][2t..2t+1], a2a3 = A[g+8][2t..], a4a5 = A[g][2t+8..],
//                   a6a7 = A[g+8][2t+8..]
//   B (16x8, col):  b0b1 = B[2t..2t+1][g], b2b3 = B[2t+8..2t+9][g]
//   C (16x8):       c0c1 = C[g][2t..2t+1], c2c3 = C[g+8][2t..2t+1]
#pragma once

#include <cstdint>

namespace mla::arch {

// ---- hardware facts (kernel configurations derive their shapes from these) -----------------
inline constexpr int kWarpSize = 32;
// Opt-in shared memory per block of the target: 227 KiB on sm_90 (H100 / H200), the NVIDIA
// architecture this build compiles for (sm_80 has 163 KiB, sm_86 / sm_89 99 KiB). One value for
// the host and device passes: the host launches with the size the kernel's layout assumes.
inline constexpr int kMaxSharedBytesPerBlock = 227 * 1024;
// 32-bit registers a thread may hold (the ISA's limit, at one CTA of 256 threads per SM); the
// matrix accumulators are among them (no separate accumulator registers).
inline constexpr int kRegistersPerLane = 255;
inline constexpr int kAccRegistersPerLane = 0;
// Global -> shared copies can be asynchronous (cp.async), so a kernel may keep several tiles in
// flight while it computes.
inline constexpr bool kAsyncCopies = true;

// Work-item ids and the CTA barrier, as the AMD generation header has them (there by builtins).
MLA_DEVICE unsigned thread_index() { return threadIdx.x; }
MLA_DEVICE unsigned block_index() { return blockIdx.x; }
MLA_DEVICE unsigned block_threads() { return blockDim.x; }
MLA_DEVICE void sync_block() { __syncthreads(); }

MLA_DEVICE int lane_id() { return static_cast<int>(thread_index()) & (kWarpSize - 1); }
MLA_DEVICE int warp_id() { return static_cast<int>(thread_index()) / kWarpSize; }

MLA_DEVICE float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
// Lane `src`'s v, to every lane of the warp.
MLA_DEVICE float shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }

// Two floats -> f16x2 (low half = a), round to nearest even.
MLA_DEVICE uint32_t pack_f16x2(float a, float b) { return ptx::cvt_rn_f16x2_f32(b, a); }

// f16 bits (low 16 bits of h) -> float, exact.
MLA_DEVICE float f16_bits_to_float(uint32_t h) {
    return ptx::cvt_f32_f16(static_cast<uint16_t>(h));
}

MLA_DEVICE float fast_exp2(float x) { return ptx::ex2_approx_ftz_f32(x); }

// ---- the score atom: S[16 heads][16 tokens] += Q[16][16 dims] * K[16 tokens][16 dims]^T ----
// Computed as two m16n8k16 products, A = Q (heads are rows), B = K^T (tokens are columns).
struct ScoreAtom {
    static constexpr int kTokensPerLane = 2;  // this lane feeds K rows g and g + 8
    static constexpr int kHeadsPerLane = 2;   // and Q rows g and g + 8
    static constexpr int kAcc = 8;            // S floats per lane
    static constexpr int kKGroups = 4;        // lanes sharing a row split its 16 dims 4 ways
    MLA_DEVICE static int kgroup(int lane) { return lane & 3; }
    MLA_DEVICE static int token(int lane, int i) { return (lane >> 2) + 8 * i; }
    MLA_DEVICE static int head(int lane, int i) { return (lane >> 2) + 8 * i; }
    // Accumulator element i: n8 tile i/4, register i%4.
    MLA_DEVICE static int acc_head_slot(int i) { return (i & 3) >> 1; }
    MLA_DEVICE static int acc_token(int lane, int i) {
        return 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
    }
        // Reduce over the lanes holding parts of the same head rows (the kKGroups lanes of a row).
    MLA_DEVICE static float reduce_max_across_row(float v) {
        v = fmaxf(v, shfl_xor(v, 1));
        return fmaxf(v, shfl_xor(v, 2));
    }
    MLA_DEVICE static float reduce_sum_across_row(float v) {
        v += shfl_xor(v, 1);
        return v + shfl_xor(v, 2);
    }
};

template <MmaType T>
MLA_DEVICE void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                          uint32_t b0, uint32_t b1) {
    if constexpr (T == MmaType::kF16) {
        ptx::mma_m16n8k16_f16(c, a0, a1, a2, a3, b0, b1);
    } else {
        ptx::mma_m16n8k16_bf16(c, a0, a1, a2, a3, b0, b1);
    }
}

// acc += Q * K^T for one k16 step. q[i]: head(lane, i) quad; k[i]: token(lane, i) quad.
template <MmaType T>
MLA_DEVICE void mma_scores(float (&acc)[ScoreAtom::kAcc], const Quad (&q)[2],
                           const Quad (&k)[2]) {
    float(&c0)[4] = *reinterpret_cast<float(*)[4]>(&acc[0]);
    float(&c1)[4] = *reinterpret_cast<float(*)[4]>(&acc[4]);
    mma_16816<T>(c0, q[0].lo, q[1].lo, q[0].hi, q[1].hi, k[0].lo, k[0].hi);
    mma_16816<T>(c1, q[0].lo, q[1].lo, q[0].hi, q[1].hi, k[1].lo, k[1].hi);
}

// ---- the e4m3 score atom: e4m3 Q and K codes as stored, 32 dims a step -------------------
// The same S[16 heads][16 tokens], lanes and accumulator as ScoreAtom, from two m16n8k32 .e4m3
// products (sm_89+; f32 accumulate). Fragment facts (PTX ISA, "Matrix Fragments for
// mma.m16n8k32", 8-bit types; the lowest k in the low byte): A (16x32, row): a0 = A[g][4t ..
// 4t+3], a1 = A[g+8][4t ..], a2 = A[g][4t+16 ..], a3 = A[g+8][4t+16 ..]; B (32x8, col): b0 =
// B[4t .. 4t+3][g], b1 = B[4t+16 .. 4t+19][g]. A Quad here is 8 codes of one row (lo: 4, hi:
// 4), the same 8 dims for Q and K: Q's lo meets K's lo at k 4t .. 4t+3, hi at 4t+16 ...
// kE4M3MmaNative<F>: whether this pass multiplies flavour F natively (OCP e4m3fn from sm_89 on,
// with CUDA 12.4+: the instruction needs PTX ISA 8.4; e4m3fnuz never). Plans take this atom
// only where the device's code has it (mla::stage1_e4m3_scores); in other passes it traps.
// The emulated sm_90a (arch/emu) has it.
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && \
     (__CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204)) || \
    defined(MLA_ARCH_EMU)
inline constexpr bool kE4M3FnMmaPass = true;
#else
inline constexpr bool kE4M3FnMmaPass = false;
#endif
template <Fp8Flavor F>
inline constexpr bool kE4M3MmaNative = F == Fp8Flavor::kE4M3FN && kE4M3FnMmaPass;

template <Fp8Flavor F>
MLA_DEVICE void mma_scores_e4m3(float (&acc)[ScoreAtom::kAcc], const Quad (&q)[2],
                                const Quad (&k)[2]) {
    if constexpr (kE4M3MmaNative<F>) {
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            float(&c)[4] = *reinterpret_cast<float(*)[4]>(&acc[4 * n]);
            ptx::mma_m16n8k32_e4m3(c, q[0].lo, q[1].lo, q[0].hi, q[1].hi, k[n].lo, k[n].hi);
        }
    } else {
        __trap();
    }
}

// ---- the value atom: O[16 heads][8 dims] += P[16][16 tokens] * V[16 tokens][8 dims] -------
// P comes from the S accumulator: its C layout over two n8 tiles is the A layout of P.
struct ValueAtom {
    static constexpr int kPRegs = 4;     // packed P pairs per lane
    static constexpr int kTileDims = 8;  // output columns per atom
    static constexpr int kOAcc = 4;      // O floats per lane per atom
    MLA_DEVICE static int o_head(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
    MLA_DEVICE static int o_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }
};

template <MmaType T>
MLA_DEVICE void mma_values(float (&o)[4], const uint32_t (&p)[4], const uint32_t (&v)[2]) {
    mma_16816<T>(o, p[0], p[1], p[2], p[3], v[0], v[1]);
}

// ---- value fragments from a shared-memory tile of token rows ---------------------------------
// Rows `row0 .. row0 + 15` of the tile are the 16 tokens of one P block, in P's column order.
// The loader fills kTiles B fragments covering kDims output dims starting at dim0, and says
// which dim column c of tile j is (the O accumulator uses the same mapping).

// 16-bit values (bf16, or f16 decoded from fp8): ldmatrix.trans of four 8x8 blocks
// (tokens 0-7 / 8-15 x dims 0-7 / 8-15).
struct ValueLoader16 {
    static constexpr int kTiles = 2;
    static constexpr int kDims = 16;
    MLA_DEVICE static int dim(int tile, int col) { return 8 * tile + col; }
    MLA_DEVICE static void load(const uint8_t* tile_rows, int row_bytes, int row0, int dim0,
                                uint32_t (&v)[kTiles][2]) {
        const int lane = lane_id();
        const int row = row0 + (lane & 7) + 8 * ((lane >> 3) & 1);
        const int col = dim0 + 8 * (lane >> 4);
        const uint8_t* p = tile_rows + row * row_bytes + 2 * col;
        const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
        ptx::ldmatrix_x4_trans_b16(v[0][0], v[0][1], v[1][0], v[1][1], addr);
    }
};

// ---- global -> shared copies ----------------------------------------------------------------
// 16 bytes, asynchronous (cp.async, L1 bypass); `valid` false writes 16 zero bytes instead.
// `dst`: a shared-space address (__cvta_generic_to_shared), for loops that form it once.
MLA_DEVICE void copy_16_async(uint32_t dst, const void* gmem, bool valid) {
    ptx::cp_async_cg_16(dst, gmem, valid ? 16 : 0);
}
MLA_DEVICE void copy_16_async(void* smem, const void* gmem, bool valid) {
    copy_16_async(static_cast<uint32_t>(__cvta_generic_to_shared(smem)), gmem, valid);
}
// The same, issued only where `issue` holds (a predicated instruction, no branch: lanes of one
// warp-wide copy that have nothing to copy).
MLA_DEVICE void copy_16_async_if(uint32_t dst, const void* gmem, bool valid, bool issue) {
    ptx::cp_async_cg_16_if(dst, gmem, valid ? 16 : 0, issue);
}
// 4 bytes (cp.async.ca: the source needs only 4-byte alignment); `valid` false writes zeros.
MLA_DEVICE void copy_4_async(uint32_t dst, const void* gmem, bool valid) {
    ptx::cp_async_ca_4(dst, gmem, valid ? 4 : 0);
}
MLA_DEVICE void copy_4_async_if(uint32_t dst, const void* gmem, bool valid, bool issue) {
    ptx::cp_async_ca_4_if(dst, gmem, valid ? 4 : 0, issue);
}
MLA_DEVICE void copy_4_async(void* smem, const void* gmem, bool valid) {
    copy_4_async(static_cast<uint32_t>(__cvta_generic_to_shared(smem)), gmem, valid);
}
MLA_DEVICE void copy_commit() { ptx::cp_async_commit_group(); }
// Wait until at most `N` committed groups of this thread are still in flight.
template <int N>
MLA_DEVICE void copy_wait() {
    ptx::cp_async_wait_group<N>();
}

// ---- programmatic dependent launch (sm_90+; no-ops in passes for older targets) -------------
// A kernel launched as a programmatic dependent of the one before it in the stream
// (gpu::launch_dependent) may start while that one still runs. Here, not in sm90.h: these need
// sm_90, not sm_90a, so every pass for an sm_90+ target emits them (sm90.h is sm_90a only).
// Before the first read of what the prior grid wrote: waits until it has completed and its
// memory operations are visible to this grid. Returns at once where there is no such grid (a
// plain launch). The clobber keeps the compiler from hoisting loads above it.
MLA_DEVICE void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ptx::griddepcontrol_wait();
#endif
}
// Lets the dependent grid be scheduled once every CTA of this grid has called it or exited: a
// hint, ordering nothing (the dependent's wait_prior_grid still waits for this grid to finish).
MLA_DEVICE void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ptx::griddepcontrol_launch_dependents();
#endif
}

}  // namespace mla::arch
