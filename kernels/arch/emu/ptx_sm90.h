// The emulated NVIDIA GPU (target sm90a; simt.h): the PTX instructions of
// arch/nvidia/ptx_sm90.h, the same functions, by the PTX ISA's definitions ("Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate", "mbarrier", "cp.async.bulk",
// "cp.async.bulk.tensor", "stmatrix", "bar", "cvt"). Implemented in ptx.cpp:
//   * wgmma: each thread's wgmma are recorded at issue (its A registers, the descriptors, where
//     its accumulators are) and run at the warpgroup's wgmma.wait_group, the latest moment the
//     hardware may read their shared-memory operands; the warpgroup's 128 threads must issue
//     the same sequence, and an operand whose shared bytes differ between issue and wait (a
//     wgmma issued before its tile arrived, or a tile overwritten before the wait) fails the
//     launch. Descriptors are decoded as the hardware does (start address, leading and stride
//     byte offsets, no swizzle or the 128- / 64- / 32-byte swizzle of address bits 4-6 by bits
//     7-9). The wait is a rendezvous of the warpgroup's 128 threads (the hardware's waits only
//     within each warp).
//   * mbarriers: arrivals, transaction counts and phases kept beside shared memory by address;
//     a wait blocks the thread until its phase completes. Arriving more often than the barrier
//     expects, or waiting on one never initialized, fails the launch.
//   * Bulk and tensor copies (and cp.async arrivals on mbarriers) land, in issue order, when no
//     thread of the CTA can go on without them; from issue until then their destination holds
//     0xFF bytes (a thread still reading what a copy replaces reads those). A tensor map here is the emulator's own
//     encoding (arch/nvidia/tma.h's encoder in emu builds): rows past the tensor read as zero,
//     the box is written in the map's swizzle, and its full size completes on the mbarrier.
//   * Named barriers count threads, as bar.sync does (exited threads do not arrive).
#pragma once

#include <cstdint>

#include "arch/emu/simt.h"
#include "arch/types.h"

namespace mla::arch::ptx {

uint4 ld_shared_v4_u32(uint32_t addr);

inline void wgmma_fence() {}
void wgmma_commit_group();
void wgmma_wait_groups(int n);
template <int N>
void wgmma_wait_group() {
    wgmma_wait_groups(N);
}
// Nothing to keep in place: the recorded wgmma write the accumulators at the wait.
inline void register_fence(float&) {}
inline void register_fence(uint32_t&) {}

// kind: 0 f16, 1 bf16, 2 e4m3 (A from registers), 3 e4m3 (A from shared memory).
void wgmma_issue(int kind, int n, float* d, const uint32_t* a, uint64_t a_desc, uint64_t b_desc,
                 bool acc);
template <MmaType kType, int kN>
void wgmma_rs(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t desc, bool acc) {
    static_assert(kN == 16 || kN == 32 || kN == 64, "wgmma_rs: N = 16, 32, 64");
    constexpr int kind = kType == MmaType::kF16 ? 0 : kType == MmaType::kBF16 ? 1 : 2;
    wgmma_issue(kind, kN, d, a, 0, desc, acc);
}
template <int kN>
void wgmma_ss_e4m3(float (&d)[kN / 2], uint64_t a_desc, uint64_t b_desc, bool acc) {
    static_assert(kN == 64, "wgmma_ss_e4m3: N = 64");
    wgmma_issue(3, kN, d, nullptr, a_desc, b_desc, acc);
}

void mbarrier_init(uint32_t bar, uint32_t count);
void mbarrier_inval(uint32_t bar);  // fails unless its phase is complete, none in flight to it
inline void fence_mbarrier_init() {}
void mbarrier_arrive(uint32_t bar);
void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes);
void mbarrier_wait_parity(uint32_t bar, uint32_t parity);
void cp_async_mbarrier_arrive_noinc(uint32_t bar);
void cp_async_wait_all();
void cp_async_bulk_tensor_2d_g2s(uint32_t dst, const void* map, int x, int y, uint32_t bar);
void cp_async_bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar);
void stmatrix_x4_trans_b16(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3);
// Two more, for the prepared experiments (docs/notes/experiments) that add them to
// arch/nvidia/ptx_sm90.h, so that those run here too: stmatrix without .trans, and the tensor
// map prefetch (nothing to fetch here).
void stmatrix_x4_b16(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3);
inline void prefetch_tensormap(const void*) {}
uint32_t cvt_rn_f16x2_e4m3x2_lo(uint32_t codes);  // NaN codes -> 0x7fff
uint32_t cvt_rn_f16x2_e4m3x2_hi(uint32_t codes);
uint32_t cvt_rn_satfinite_e4m3x2_f32(float a, float b);
uint32_t cvt_rn_bf16x2_f32(float a, float b);  // NaN -> 0x7fff
// Register budgets and proxies do not exist here.
template <int kRegs>
void setmaxnreg_dec() {}
template <int kRegs>
void setmaxnreg_inc() {}
inline void fence_proxy_async_shared_cta() {}
void bar_sync(int id, int threads);
bool bar_red_or_pred(int id, int threads, bool pred);
void bar_arrive(int id, int threads);

}  // namespace mla::arch::ptx
