// The emulated NVIDIA GPU (target sm90a; simt.h): the PTX instructions of
// arch/nvidia/ptx_sm80.h, the same functions, by the PTX ISA's definitions ("Matrix Fragments for
// mma.m16n8k16" / "mma.m16n8k32", "ldmatrix", "cp.async", "cvt", "ex2"). The warp-wide ones are
// wave collectives of the emulated machine; cp.async copies land at the thread's wait (or, for
// an mbarrier arrival, when nothing else can go on): the latest moment the hardware may land
// them. Their destination holds 0xFF bytes from issue until then, so a read that does not wait,
// or that should have finished before the copy was issued, sees the fill. Implemented in
// ptx.cpp.
#pragma once

#include <cstdint>

#include "arch/emu/simt.h"
#include "arch/types.h"

namespace mla::arch::ptx {

uint32_t cvt_rn_f16x2_f32(float a, float b);  // a -> the upper half; NaN -> 0x7fff
float cvt_f32_f16(uint16_t h);
float ex2_approx_ftz_f32(float x);  // exact exp2, subnormal inputs and results flushed
// D = A B + C over the warp, f32 sums in k order, C added last (c is C and D).
void mma_m16n8k16_f16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                      uint32_t b0, uint32_t b1);
void mma_m16n8k16_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                       uint32_t b0, uint32_t b1);
void mma_m16n8k32_e4m3(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                       uint32_t b0, uint32_t b1);  // e4m3fn codes
void ldmatrix_x4_trans_b16(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                           uint32_t addr);
void cp_async_cg_16(uint32_t dst, const void* src, int src_bytes);
void cp_async_cg_16_if(uint32_t dst, const void* src, int src_bytes, bool issue);
void cp_async_ca_4(uint32_t dst, const void* src, int src_bytes);
void cp_async_ca_4_if(uint32_t dst, const void* src, int src_bytes, bool issue);
void cp_async_commit_group();
void cp_async_wait_groups(int n);  // cp.async.wait_group n
template <int N>
void cp_async_wait_group() {
    cp_async_wait_groups(N);
}
// Launches run one after another here: a dependent grid starts after its prior grid ended.
inline void griddepcontrol_wait() {}
inline void griddepcontrol_launch_dependents() {}

}  // namespace mla::arch::ptx
