// PTX instructions of the NVIDIA Hopper generation (arch/nvidia/sm90.h, sm_90a device passes
// only): one function per PTX instruction the arch layer uses; arguments in PTX operand order;
// arch/emu supplies the same functions for the CPU emulator. Included by arch/device.h only,
// right before sm90.h, which calls these and holds no asm of its own. Each function is the asm
// statement sm90.h had (operands, constraints, volatile and clobbers as they were), so the
// generated code is the same. Addresses named `addr`, `dst` or `bar` are shared-space addresses
// (__cvta_generic_to_shared); `desc`: a wgmma shared-memory matrix descriptor.
#pragma once

#include <cstdint>

#include "arch/types.h"

namespace mla::arch::ptx {

// ld.shared.v4.u32 {x, y, z, w}, [addr]: 16 bytes of shared memory ("memory" clobber).
MLA_DEVICE uint4 ld_shared_v4_u32(uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

// ---- warpgroup MMA ordering ------------------------------------------------------------------
// wgmma.fence.sync.aligned: orders earlier register writes before the next wgmma's reads.
MLA_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// wgmma.commit_group.sync.aligned: this warpgroup's uncommitted wgmma become one group.
MLA_DEVICE void wgmma_commit_group() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// wgmma.wait_group.sync.aligned N: waits until at most N committed groups are pending.
template <int N>
MLA_DEVICE void wgmma_wait_group() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Not an instruction (empty asm, r read and written, "memory" clobber): keeps the compiler from
// moving reads or writes of r across this point.
MLA_DEVICE void register_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }
MLA_DEVICE void register_fence(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

// ---- wgmma, A from registers, B from a descriptor, f32 accumulate ----------------------------
// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} {d}, {a0..a3}, desc, p, 1, 1, 0 (kType
// kF16 / kBF16) or .m64nNk32.f32.e4m3.e4m3 {d}, {a0..a3}, desc, p, 1, 1 (kE4M3): d (+)= A * B,
// scale-d p = acc (false overwrites d); N = kN in 16, 32, 64.
template <MmaType kType, int kN>
MLA_DEVICE void wgmma_rs(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t desc, bool acc) {
    static_assert(kN < 0, "wgmma_rs: instantiated for f16 / bf16 / e4m3 and N = 16, 32, 64 only");
}

#define MLA_WGMMA_OUT8(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define MLA_WGMMA_OUT16(d) MLA_WGMMA_OUT8(d), MLA_WGMMA_OUT8((d + 8))
#define MLA_WGMMA_OUT32(d) MLA_WGMMA_OUT16(d), MLA_WGMMA_OUT16((d + 16))
#define MLA_WGMMA_OPERANDS16 "{%0,%1,%2,%3,%4,%5,%6,%7}" ", {%8,%9,%10,%11}, %12"
#define MLA_WGMMA_PRED16 "%13"
#define MLA_WGMMA_OPERANDS32                                                                     \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"                                    \
    ", {%16,%17,%18,%19}, %20"
#define MLA_WGMMA_PRED32 "%21"
#define MLA_WGMMA_OPERANDS64                                                                     \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"   \
    "%24,%25,%26,%27,%28,%29,%30,%31}"                                                           \
    ", {%32,%33,%34,%35}, %36"
#define MLA_WGMMA_PRED64 "%37"
// kind: the PTX type suffix; tail: the immediates after scale-d (scale-a, scale-b and, for
// 16-bit types, the B transpose flag).
#define MLA_WGMMA_RS(kType, kN, kK, kind, tail)                                                  \
    template <>                                                                                  \
    MLA_DEVICE void wgmma_rs<kType, kN>(float (&d)[kN / 2], const uint32_t (&a)[4],             \
                                        uint64_t desc, bool acc) {                               \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " MLA_WGMMA_PRED##kN ", 0;\n"            \
                     "wgmma.mma_async.sync.aligned.m64n" #kN "k" #kK ".f32." kind " "            \
                     MLA_WGMMA_OPERANDS##kN ", p, " tail ";\n}\n"                                \
                     : MLA_WGMMA_OUT##kN##_(d)                                                   \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc),                    \
                       "r"(static_cast<int>(acc)));                                              \
    }
#define MLA_WGMMA_OUT16_(d) MLA_WGMMA_OUT8(d)
#define MLA_WGMMA_OUT32_(d) MLA_WGMMA_OUT16(d)
#define MLA_WGMMA_OUT64_(d) MLA_WGMMA_OUT32(d)
MLA_WGMMA_RS(MmaType::kF16, 16, 16, "f16.f16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kF16, 32, 16, "f16.f16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kF16, 64, 16, "f16.f16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kBF16, 16, 16, "bf16.bf16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kBF16, 32, 16, "bf16.bf16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kBF16, 64, 16, "bf16.bf16", "1, 1, 0")
MLA_WGMMA_RS(MmaType::kE4M3, 16, 32, "e4m3.e4m3", "1, 1")
MLA_WGMMA_RS(MmaType::kE4M3, 32, 32, "e4m3.e4m3", "1, 1")
MLA_WGMMA_RS(MmaType::kE4M3, 64, 32, "e4m3.e4m3", "1, 1")
#undef MLA_WGMMA_RS
#undef MLA_WGMMA_OUT16_
#undef MLA_WGMMA_OUT32_
#undef MLA_WGMMA_OUT64_
#undef MLA_WGMMA_OUT8
#undef MLA_WGMMA_OUT16
#undef MLA_WGMMA_OUT32
#undef MLA_WGMMA_OPERANDS16
#undef MLA_WGMMA_PRED16
#undef MLA_WGMMA_OPERANDS32
#undef MLA_WGMMA_PRED32
#undef MLA_WGMMA_OPERANDS64
#undef MLA_WGMMA_PRED64

// ---- wgmma, A and B from descriptors ---------------------------------------------------------
// wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 {d}, a_desc, b_desc, p, 1, 1: d (+)= A * B,
// scale-d p = acc; N = kN, 64 only.
template <int kN>
MLA_DEVICE void wgmma_ss_e4m3(float (&d)[kN / 2], uint64_t a_desc, uint64_t b_desc, bool acc) {
    static_assert(kN < 0, "wgmma_ss_e4m3: N = 64 only");
}
template <>
MLA_DEVICE void wgmma_ss_e4m3<64>(float (&d)[32], uint64_t a_desc, uint64_t b_desc, bool acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,"
        "%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
          "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
          "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
          "+f"(d[31])
        : "l"(a_desc), "l"(b_desc), "r"(static_cast<int>(acc)));
}

// ---- mbarriers (CTA scope) -------------------------------------------------------------------
// mbarrier.init.shared::cta.b64 [bar], count: expected arrival count `count`.
MLA_DEVICE void mbarrier_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// mbarrier.inval.shared::cta.b64 [bar]: the barrier's memory is no barrier any more, so that it
// may be initialized again (no arrival or copy may be pending on it).
MLA_DEVICE void mbarrier_inval(uint32_t bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// fence.mbarrier_init.release.cluster: makes the initialized mbarriers visible (copy engine).
MLA_DEVICE void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [bar]: one arrival (the state result discarded).
MLA_DEVICE void mbarrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: one arrival, `bytes` more expected.
MLA_DEVICE void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 done, [bar], parity, retried until done: the phase
// of parity `parity` has completed (the loop inside the asm).
MLA_DEVICE void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// ---- cp.async completion ---------------------------------------------------------------------
// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]: an arrival once this thread's cp.async
// so far have landed (.noinc: counted in the expected arrivals).
MLA_DEVICE void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// cp.async.wait_all: waits for every cp.async of this thread, committed or not.
MLA_DEVICE void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// ---- bulk copies global -> shared, completing on an mbarrier ---------------------------------
// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst],
// [map, {x, y}], [bar]: the 2D box at (x, y) of tensor map `map` (a generic address).
MLA_DEVICE void cp_async_bulk_tensor_2d_g2s(uint32_t dst, const void* map, int x, int y,
                                            uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(map), "r"(x), "r"(y), "r"(bar)
        : "memory");
}

// prefetch.tensormap [map]: tensor map `map` (a generic address) into the descriptor cache.
MLA_DEVICE void prefetch_tensormap(const void* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar].
MLA_DEVICE void cp_async_bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];\n" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar)
        : "memory");
}

// ---- matrix store to shared memory -----------------------------------------------------------
// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [addr], {r0..r3}: four 8x8 b16 matrices,
// transposed; addr: this lane's row.
MLA_DEVICE void stmatrix_x4_trans_b16(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                      uint32_t r3) {
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
        "r"(r0), "r"(r1), "r"(r2), "r"(r3)
        : "memory");
}

// ---- conversions (sm_89+) --------------------------------------------------------------------
// cvt.rn.f16x2.e4m3x2 d, codes' low half: the e4m3fn codes in bytes 0, 1 -> f16x2 (byte 0 low).
MLA_DEVICE uint32_t cvt_rn_f16x2_e4m3x2_lo(uint32_t codes) {
    uint32_t d;
    asm("{.reg .b16 l, h;\nmov.b32 {l, h}, %1;\ncvt.rn.f16x2.e4m3x2 %0, l;\n}"
        : "=r"(d)
        : "r"(codes));
    return d;
}

// cvt.rn.f16x2.e4m3x2 d, codes' high half: the codes in bytes 2, 3 -> f16x2 (byte 2 low).
MLA_DEVICE uint32_t cvt_rn_f16x2_e4m3x2_hi(uint32_t codes) {
    uint32_t d;
    asm("{.reg .b16 l, h;\nmov.b32 {l, h}, %1;\ncvt.rn.f16x2.e4m3x2 %0, h;\n}"
        : "=r"(d)
        : "r"(codes));
    return d;
}

// cvt.rn.satfinite.e4m3x2.f32 c, a, b: a -> upper byte, b -> lower; c zero-extended to 32 bits.
MLA_DEVICE uint32_t cvt_rn_satfinite_e4m3x2_f32(float a, float b) {
    uint32_t d;
    asm("{.reg .b16 c;\ncvt.rn.satfinite.e4m3x2.f32 c, %1, %2;\ncvt.u32.u16 %0, c;\n}"
        : "=r"(d)
        : "f"(a), "f"(b));
    return d;
}

// cvt.rn.bf16x2.f32 d, a, b: two floats -> bf16x2, nearest even; a -> upper half, b -> lower.
MLA_DEVICE uint32_t cvt_rn_bf16x2_f32(float a, float b) {
    uint32_t d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(a), "f"(b));
    return d;
}

// ---- register budget -------------------------------------------------------------------------
// setmaxnreg.dec.sync.aligned.u32 kRegs: lowers this warpgroup's per-thread register count.
template <int kRegs>
MLA_DEVICE void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// setmaxnreg.inc.sync.aligned.u32 kRegs: raises it (waits for free registers).
template <int kRegs>
MLA_DEVICE void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- fences and named barriers ---------------------------------------------------------------
// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared accesses against the
// async proxy's.
MLA_DEVICE void fence_proxy_async_shared_cta() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// bar.sync id, threads: barrier `id` over `threads` threads (a multiple of the warp size).
MLA_DEVICE void bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar.red.or.pred q, id, threads, pred: bar.sync that also returns the OR of pred over them.
MLA_DEVICE bool bar_red_or_pred(int id, int threads, bool pred) {
    uint32_t r;
    asm volatile(
        "{\n.reg .pred p, q;\nsetp.ne.b32 p, %1, 0;\nbar.red.or.pred q, %2, %3, p;\n"
        "selp.u32 %0, 1, 0, q;\n}\n"
        : "=r"(r)
        : "r"(static_cast<int>(pred)), "r"(id), "r"(threads)
        : "memory");
    return r != 0;
}

// bar.arrive id, threads: arrives at barrier `id` without waiting.
MLA_DEVICE void bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace mla::arch::ptx
