// NVIDIA Hopper (sm_90a) pieces of the architecture layer, on top of sm80.h: warpgroup MMA
// (wgmma) with A from registers and B from shared memory, shared-memory matrix descriptors,
// mbarriers, bulk asynchronous copies (the copy engine, 1-D form), proxy fences and named
// barriers. Included by arch/device.h only in sm_90a device passes (MLA_ARCH_SM90 is then
// defined); kernels that use it are built only for sm_90a. No asm here: each PTX instruction is
// a function of arch/nvidia/ptx_sm90.h (mla::arch::ptx, included by arch/device.h just before
// this file; arch/emu has the same functions for the emulator).
//
// Facts used below (PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"),
// checked on the H200 by a probe before this file was written (every element exact for f16,
// bf16 and e4m3):
//   * A warpgroup = 4 consecutive warps starting at a warp index divisible by 4. For
//     wgmma.m64nNk16 (16-bit) and m64nNk32 (e4m3) each warp w owns rows 16w .. 16w+15 of A and D.
//   * A from registers, per warp exactly the mma.m16n8k16 (16-bit) / m16n8k32 (8-bit) A layout,
//     lane = 4 g + t: 16-bit: a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1], a2 = A[g][2t+8, 2t+9],
//     a3 = A[g+8][2t+8, 2t+9]; e4m3: a0 = A[g][4t .. 4t+3], a1 = A[g+8][4t ..], a2 = A[g][4t+16 ..],
//     a3 = A[g+8][4t+16 ..] (low byte / half first).
//   * D (f32), per warp: d[4j + 2h + c] = D[g + 8h][8j + 2t + c], j < N / 8.
//   * B from shared memory, K-major, no swizzle: "core matrices" of 8 rows (n) x 16 bytes (k),
//     each 128 contiguous bytes (row i at byte 16 i). The descriptor's leading byte offset is the
//     distance between core matrices adjacent in K, its stride byte offset the distance between
//     core matrices adjacent in N.
#pragma once

#include <cstdint>


namespace mla::arch::sm90 {

MLA_DEVICE uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes of shared memory at a 16-byte aligned shared address (ordered as a memory access
// against the barriers around it).
MLA_DEVICE uint4 load_shared_16(uint32_t addr) { return ptx::ld_shared_v4_u32(addr); }

// ---- shared-memory matrix descriptor (K-major, no swizzle) -----------------------------------
MLA_DEVICE uint64_t kmajor_desc(uint32_t smem_byte_addr, uint32_t k_core_stride_bytes,
                                uint32_t n_core_stride_bytes) {
    uint64_t d = static_cast<uint64_t>((smem_byte_addr >> 4) & 0x3fffu);
    d |= static_cast<uint64_t>((k_core_stride_bytes >> 4) & 0x3fffu) << 16;
    d |= static_cast<uint64_t>((n_core_stride_bytes >> 4) & 0x3fffu) << 32;
    return d;  // base offset 0, layout type 0 (no swizzle)
}
// K-major with the 128-byte (kSwizzle = 128) or 64-byte (64) swizzle: 8-row atoms of kSwizzle
// bytes a row, 16-byte piece c of row r at piece c ^ (r % 8) (128) or c ^ ((r % 8) / 2) (64) of
// the row, atoms aligned to 8 kSwizzle bytes; atom_stride_bytes between the 8-row atoms along M
// (N); the leading offset is unused (one k-step lies inside a row).
template <int kSwizzle>
MLA_DEVICE uint64_t kmajor_swizzled_desc(uint32_t smem_byte_addr, uint32_t atom_stride_bytes) {
    static_assert(kSwizzle == 128 || kSwizzle == 64, "the 128- and 64-byte swizzles");
    uint64_t d = static_cast<uint64_t>((smem_byte_addr >> 4) & 0x3fffu);
    d |= uint64_t{1} << 16;
    d |= static_cast<uint64_t>((atom_stride_bytes >> 4) & 0x3fffu) << 32;
    d |= uint64_t{kSwizzle == 128 ? 1u : 2u} << 62;
    return d;
}

// ---- warpgroup MMA ordering -----------------------------------------------------------------
// Before the first wgmma that reads registers written by ordinary instructions (A fragments,
// rescaled accumulators).
MLA_DEVICE void wgmma_fence() { ptx::wgmma_fence(); }
MLA_DEVICE void wgmma_commit() { ptx::wgmma_commit_group(); }
// Wait until at most N committed groups of this warpgroup are still in flight.
template <int N>
MLA_DEVICE void wgmma_wait() {
    ptx::wgmma_wait_group<N>();
}
// Keeps the compiler from moving ordinary reads or writes of `r` across this point (the
// accumulators of an in-flight wgmma must not be touched).
MLA_DEVICE void fence_operand(float& r) { ptx::register_fence(r); }
MLA_DEVICE void fence_operand(uint32_t& r) { ptx::register_fence(r); }
template <int kN>
MLA_DEVICE void fence_operands(float (&r)[kN]) {
#pragma unroll
    for (int i = 0; i < kN; ++i) fence_operand(r[i]);
}

// ---- wgmma, A from registers, B from a descriptor, f32 accumulate ----------------------------
// Wgmma<kType, kN>::run(d, a, desc, accumulate): d[kN / 2] (+)= A (64 x K, registers a[4]) * B
// (K x kN, shared memory through desc). kType: MmaType::kF16 / kBF16 (m64nNk16, B K-major) or
// MmaType::kE4M3 (m64nNk32, e4m3fn codes, B K-major). `accumulate` false overwrites d.
template <MmaType kType, int kN>
struct Wgmma {
    MLA_DEVICE static void run(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t desc,
                               bool acc) {
        ptx::wgmma_rs<kType, kN>(d, a, desc, acc);
    }
};

// ---- wgmma, A and B from descriptors (e4m3, both K-major), f32 accumulate ---------------------
// WgmmaSs<kN>::run(d, a_desc, b_desc, accumulate): d[kN / 2] (+)= A (64 x 32 e4m3 codes, shared
// memory through a_desc) * B (32 x kN, through b_desc); m64nNk32. The accumulator layout is
// the register form's (row m of A is row m of D).
template <int kN>
struct WgmmaSs;
template <>
struct WgmmaSs<64> {
    MLA_DEVICE static void run(float (&d)[32], uint64_t a_desc, uint64_t b_desc, bool acc) {
        ptx::wgmma_ss_e4m3<64>(d, a_desc, b_desc, acc);
    }
};

// ---- mbarriers (CTA scope) ------------------------------------------------------------------
MLA_DEVICE void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
    ptx::mbarrier_init(smem_addr(bar), arrivals);
}
// Ends a barrier's life, so that mbarrier_init may start another there: every arrival and copy
// it expects must have completed (a CTA-wide barrier after the last wait on it).
MLA_DEVICE void mbarrier_inval(uint64_t* bar) { ptx::mbarrier_inval(smem_addr(bar)); }
// Makes initialized barriers visible to the copy engine (once, after the inits, before a
// block-wide barrier).
MLA_DEVICE void mbarrier_init_fence() { ptx::fence_mbarrier_init(); }
MLA_DEVICE void mbarrier_arrive(uint64_t* bar) { ptx::mbarrier_arrive(smem_addr(bar)); }
// One arrival that also announces `bytes` of copies completing on this barrier.
MLA_DEVICE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
    ptx::mbarrier_arrive_expect_tx(smem_addr(bar), bytes);
}
// Blocks until the phase of parity `parity` has completed.
MLA_DEVICE void mbarrier_wait(uint64_t* bar, uint32_t parity) {
    ptx::mbarrier_wait_parity(smem_addr(bar), parity);
}

// An arrival on `bar` once every cp.async this thread has issued so far has landed (sm_80 copies
// completing on an mbarrier). .noinc: the barrier's expected count includes these arrivals.
MLA_DEVICE void copy_async_arrive_noinc(uint64_t* bar) {
    ptx::cp_async_mbarrier_arrive_noinc(smem_addr(bar));
}

// Waits for every cp.async this thread has issued, committed to a group or not.
MLA_DEVICE void copy_async_wait_all() { ptx::cp_async_wait_all(); }

// ---- TMA: a 2D box of a tensor map (arch/nvidia/tma.h) -> shared, completing on an mbarrier --
// map: the generic address of a __grid_constant__ kernel parameter's CUtensorMap; (x, y): the
// box's first element (innermost first); dst aligned as the map's swizzle needs (128-byte
// swizzle: 1024 bytes).
MLA_DEVICE void tma_load_2d(uint32_t dst, const void* map, int x, int y, uint64_t* bar) {
    ptx::cp_async_bulk_tensor_2d_g2s(dst, map, x, y, smem_addr(bar));
}

// Fetches a tensor map (the generic address of a __grid_constant__ kernel parameter's
// CUtensorMap) into the TMA unit's descriptor cache ahead of its first use.
MLA_DEVICE void prefetch_tensormap(const void* map) { ptx::prefetch_tensormap(map); }

// ---- bulk copy global -> shared, completing on an mbarrier -----------------------------------
// dst and src 16-byte aligned, bytes a multiple of 16.
MLA_DEVICE void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    ptx::cp_async_bulk_g2s(smem_addr(dst), src, bytes, smem_addr(bar));
}

// ---- stmatrix --------------------------------------------------------------------------------
// Four 8x8 matrices of 16-bit values, stored transposed: register i of lane (g, t) holds row g,
// columns 2t and 2t+1 of matrix i (the mma / wgmma D fragment layout, lower column in the lower
// half), which land at rows 2t and 2t+1, column g; lanes 8i .. 8i+7 give the shared-memory
// addresses of matrix i's 8 stored rows (16 bytes each, 16-byte aligned).
MLA_DEVICE void stmatrix_x4_trans(uint32_t row_smem_addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                  uint32_t r3) {
    ptx::stmatrix_x4_trans_b16(row_smem_addr, r0, r1, r2, r3);
}

// ---- e4m3 conversions (sm_89+) ----------------------------------------------------------------
// The e4m3fn codes in bytes 0, 1 (lo) and 2, 3 (hi) of a word -> their values, exactly, as f16x2
// (the lower byte in the lower half). One conversion per two codes: on the H200 it decodes ~80
// codes per clock and SM against ~40 for the bit operations of arch/fp8.h (scratch microbench).
MLA_DEVICE uint32_t e4m3x2_lo_to_f16x2(uint32_t codes) {
    return ptx::cvt_rn_f16x2_e4m3x2_lo(codes);
}
MLA_DEVICE uint32_t e4m3x2_hi_to_f16x2(uint32_t codes) {
    return ptx::cvt_rn_f16x2_e4m3x2_hi(codes);
}
// Two floats as e4m3fn codes in the low 16 bits (lo in byte 0), each rounded to nearest even,
// saturated to +-448 (cvt puts its first source in the upper byte).
MLA_DEVICE uint32_t f32x2_to_e4m3x2(float lo, float hi) {
    return ptx::cvt_rn_satfinite_e4m3x2_f32(hi, lo);
}

// ---- f32 -> bf16x2 ---------------------------------------------------------------------------
// Two floats as a bf16x2 word (lo in the lower half), each rounded to nearest even by one
// conversion (cvt puts its first source in the upper half).
MLA_DEVICE uint32_t f32x2_to_bf16x2(float lo, float hi) { return ptx::cvt_rn_bf16x2_f32(hi, lo); }

// ---- warpgroup roles ------------------------------------------------------------------------
// Index of this thread's warpgroup / warp, made visibly warp-uniform for the compiler (a value
// derived from threadIdx alone counts as divergent, which makes ptxas serialize wgmma inside
// branches on it).
MLA_DEVICE int warpgroup_index() {
    return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}
MLA_DEVICE int warp_index() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0); }
// Per-thread register budget of this warpgroup (a multiple of 8 in [24, 256]); every warp of the
// warpgroup executes it. Effective only under a register cap at entry (__launch_bounds__(n, 1)).
template <int kRegs>
MLA_DEVICE void warpgroup_registers_dec() {
    ptx::setmaxnreg_dec<kRegs>();
}
template <int kRegs>
MLA_DEVICE void warpgroup_registers_inc() {
    ptx::setmaxnreg_inc<kRegs>();
}

// ---- fences and barriers --------------------------------------------------------------------
// Shared memory written by ordinary stores, read next by wgmma (the async proxy): each writing
// thread fences before the barrier that hands the data over.
MLA_DEVICE void fence_proxy_async_smem() { ptx::fence_proxy_async_shared_cta(); }
// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a multiple of the warp size).
MLA_DEVICE void named_barrier_sync(int id, int threads) { ptx::bar_sync(id, threads); }
// Barrier `id` over `threads` threads that also returns whether `pred` held in any of them
// (the same value in every thread: bar.red.or).
MLA_DEVICE bool named_barrier_any(int id, int threads, bool pred) {
    return ptx::bar_red_or_pred(id, threads, pred);
}
// Arrives at barrier `id` without waiting for the other threads (they bar.sync on it).
MLA_DEVICE void named_barrier_arrive(int id, int threads) { ptx::bar_arrive(id, threads); }

}  // namespace mla::arch::sm90
