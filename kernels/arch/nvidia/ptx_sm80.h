// PTX instructions of the NVIDIA sm_80 generation (arch/nvidia/sm80.h, every NVIDIA pass): one
// function per PTX instruction the arch layer uses; arguments in PTX operand order; arch/emu
// supplies the same functions for the CPU emulator. Included by arch/device.h only, right before
// sm80.h, which calls these and holds no asm of its own. Each function is the asm statement
// sm80.h had (operands, constraints, volatile and clobbers as they were), so the generated code
// is the same.
//
// Instructions an older target lacks (the .e4m3 mma.sync: sm_89+ and PTX ISA 8.4; griddepcontrol:
// sm_90+) are defined in every pass too, but sm80.h calls them only under its __CUDA_ARCH__
// guards: a __forceinline__ function no code calls emits no PTX.
#pragma once

#include <cstdint>

namespace mla::arch::ptx {

// ---- conversions -----------------------------------------------------------------------------
// cvt.rn.f16x2.f32 d, a, b: two floats -> f16x2, nearest even; a -> upper half, b -> lower half.
MLA_DEVICE uint32_t cvt_rn_f16x2_f32(float a, float b) {
    uint32_t d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(a), "f"(b));
    return d;
}

// cvt.f32.f16 d, h: f16 bits h -> float (exact).
MLA_DEVICE float cvt_f32_f16(uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// ex2.approx.ftz.f32 d, x: 2^x, approximate, subnormal inputs and results flushed to zero.
MLA_DEVICE float ex2_approx_ftz_f32(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---- warp matrix multiply-accumulate, f32 accumulate in place --------------------------------
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {c}, {a0..a3}, {b0, b1}, {c}: c += A * B, f16.
MLA_DEVICE void mma_m16n8k16_f16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                 uint32_t a3, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {c}, {a0..a3}, {b0, b1}, {c}: bf16.
MLA_DEVICE void mma_m16n8k16_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                  uint32_t a3, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {c}, {a0..a3}, {b0, b1}, {c}: e4m3 codes
// (sm_89+, PTX ISA 8.4; called only where sm80.h's kE4M3FnMmaPass holds).
MLA_DEVICE void mma_m16n8k32_e4m3(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                  uint32_t a3, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// ---- matrix load from shared memory ----------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {r0..r3}, [addr]: four 8x8 b16 blocks, each
// transposed; addr: this lane's row (shared address).
MLA_DEVICE void ldmatrix_x4_trans_b16(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                      uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// ---- asynchronous copies global -> shared ----------------------------------------------------
// cp.async.cg.shared.global [dst], [src], 16, src_bytes: 16 bytes, L1 bypass; zero-fill past
// src_bytes (0 or 16).
MLA_DEVICE void cp_async_cg_16(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}

// @p cp.async.cg.shared.global [dst], [src], 16, src_bytes, with p = issue (no branch).
MLA_DEVICE void cp_async_cg_16_if(uint32_t dst, const void* src, int src_bytes, bool issue) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %3, 0;\n"
        "@p cp.async.cg.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(dst),
        "l"(src), "r"(src_bytes), "r"(static_cast<int>(issue)));
}

// cp.async.ca.shared.global [dst], [src], 4, src_bytes: 4 bytes; zero-fill past src_bytes.
MLA_DEVICE void cp_async_ca_4(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}

// @p cp.async.ca.shared.global [dst], [src], 4, src_bytes, with p = issue (no branch).
MLA_DEVICE void cp_async_ca_4_if(uint32_t dst, const void* src, int src_bytes, bool issue) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %3, 0;\n"
        "@p cp.async.ca.shared.global [%0], [%1], 4, %2;\n}\n" ::"r"(dst),
        "l"(src), "r"(src_bytes), "r"(static_cast<int>(issue)));
}

// cp.async.commit_group: this thread's uncommitted cp.async become one group.
MLA_DEVICE void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::); }

// cp.async.wait_group N: waits until at most N of this thread's committed groups are pending.
template <int N>
MLA_DEVICE void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---- grid dependency control (sm_90+; called only in sm_90+ passes) --------------------------
// griddepcontrol.wait: waits for the prerequisite grid's completion and memory ("memory" clobber).
MLA_DEVICE void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// griddepcontrol.launch_dependents: lets the dependent grid be scheduled (a hint).
MLA_DEVICE void griddepcontrol_launch_dependents() {
    asm volatile("griddepcontrol.launch_dependents;\n" ::);
}

}  // namespace mla::arch::ptx
