// Probe of the 128-byte-swizzle primitives that stage1/wgmma_rows64.h (the heads-as-M 64-row
// kernel, exp_wgmma64_heads_m.patch) adds to arch/nvidia/sm90.h: sw128_offset, sw128_desc,
// wgmma_ss_f16_m64n64_kk, wgmma_ss_f16_m64n256_kmn, wgmma_rs_f16_m64n256_mn, stmatrix_x4. One
// CTA of 128 threads (one warpgroup) a launch; f16 small integers (products and sums exact in
// f32); host reference in double. The shared-memory layout, descriptors and k-steps are the
// kernel's: Q at byte 0 (9 chunks), KV tile of stage s at 73728 + 73728 s (9 chunks; V = chunks
// 0..7, P over the rope chunk 8), a chunk = 64 rows x 64 f16, granule j of row r at
// sw128_offset(r, j). Tests (each line: "ok" or the first mismatches and an 8x8-block map):
//   1a-c  S = Q K^T, SS m64n64k16, both K-major, descriptors (16, 1024) stepped as the kernel
//         (+32 B in the atom, +8192 a chunk): 1 k-step (layout + descriptor), 4 (the +32 B
//         steps inside an atom), 36 (the kernel's whole loop: chunk steps).
//   2a-c  O = P V, SS m64n256k16 with trans-b, P K-major in chunk 8 (written by plain stores),
//         V MN-major (LBO 8192, SBO 1024, +2048 a k-step): 1 k-step and 4 for consumer 0
//         (dims 0..255, stage 0), 4 for consumer 1 (dims 256..511, stage 1).
//   3a-c  the same products, RS: P from registers packed from an f32 accumulator layout as the
//         kernel's pf (pack_f16x2 of s[k], s[k + 1]). 2 ok + 3 wrong: the A-fragment packing.
//   4a    stmatrix_x4 of that pf into chunk 8 at the kernel's addresses: the chunk's bytes.
//   4b    then SS P V as 2b (P from the stmatrix): 4a ok + 4b wrong: a proxy-fence problem.
// Reading: 1a wrong: sw128_offset / sw128_desc (swizzle mode, SBO) or the m64n64 wrapper;
// 1a ok, 1b wrong: the +32 B start inside an atom; 1b ok, 1c wrong: the chunk step. 2a wrong
// with 1 ok: MN-major V (trans-b flag, LBO / SBO roles); 2a ok, 2b wrong: the +2048 step.
// When 2a fails it is rerun with V's LBO and SBO swapped (a hint line; not counted).
// Build and run from the repository root of main (the patch applies to it; ~5 s of nvcc) - on
// h-headsm, where the patch is in, drop the copy and use -Ikernels:
//   T=$(mktemp -d) && cp -r kernels $T && patch -s -d $T -p1 <
//   docs/notes/experiments/exp_wgmma64_heads_m.patch && nvcc -gencode arch=compute_90a,code=sm_90a
//   -std=c++17 -I$T/kernels -o /tmp/probe docs/notes/experiments/wgmma_sw128_probe.cu && /tmp/probe
// Exit status: 0 all ok, 1 any mismatch, 2 a CUDA error (a fault belongs to the test after the
// last line printed). Expected: 11 lines "ok" and "summary: all ok", well under a second.
#include <cuda_fp16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "arch/device.h"

// Copied from wgmma_rows64.h (Rows64Config and rows64_consumer), not included: that header needs
// the whole stage-1 machinery.
constexpr int kHeadDimQk = 576;            // formats.h
constexpr int kChunkBytes = 64 * 128;      // kChunkBytes: 64 rows x 64 dims f16
constexpr int kChunks = kHeadDimQk / 64;   // 9
constexpr int kRopeChunk = 512 / 64;       // kKvLoraRank / 64: P goes here
constexpr int kTileBytes = kChunks * kChunkBytes;
constexpr int kOffQ = 0, kOffStages = kOffQ + kChunks * kChunkBytes;  // 73728
constexpr int kSmem = kOffStages + 2 * kTileBytes;  // both stages (the kernel's addresses)
constexpr int kKLbo = 16, kSbo = 1024;     // K-major: sw128_desc(addr, 16, 1024)
constexpr int kVLbo = kChunkBytes;         // V (MN-major): sw128_desc(addr, kC, 1024)
constexpr int kKStepBytes = 32, kVStepBytes = 2048;  // per k16 step: K-major, MN-major

struct Bufs {
    const uint16_t* q;   // 64 x 576 f16 bits
    const uint16_t* kv;  // 64 tokens x 576
    const uint16_t* p;   // 64 x 64 (rows x tokens)
    float* out;          // 64 x 64 (S) or 64 x 512 (O)
    uint16_t* pdump;     // 64 x 64 f16: chunk 8 after stmatrix, in its byte order
    int* status;         // [0]: 1 when dynamic shared memory is not 1024-aligned
};

#if defined(MLA_ARCH_SM90)
namespace hw = mla::arch::sm90;

// 64 rows x `chunks` chunks of a row-major matrix with `row_elems` f16 a row -> swizzled chunks,
// 16-byte stores at sw128_offset (as write_q and the producer do).
__device__ void load_swizzled(uint8_t* dst, const uint16_t* src, int row_elems, int chunks) {
    const int pieces = chunks * 8;
    for (int i = threadIdx.x; i < 64 * pieces; i += blockDim.x) {
        const int r = i / pieces, piece = i % pieces;
        const uint4 v = *reinterpret_cast<const uint4*>(src + r * row_elems + 8 * piece);
        *reinterpret_cast<uint4*>(dst + (piece / 8) * kChunkBytes +
                                  hw::sw128_offset(r, piece % 8)) = v;
    }
}

// D (64 x 2 kD, f32) -> out; warp wq, lane 4 g + t: d[4 j + 2 h + c] = D[16 wq + g + 8 h][8 j +
// 2 t + c] (sm90.h's D layout).
template <int kD>
__device__ __forceinline__ void store_d(const float (&d)[kD], float* out, int ld, int col0) {
    const int wq = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kD; ++i)
        out[(16 * wq + g + 8 * ((i >> 1) & 1)) * ld + col0 + 8 * (i >> 2) + 2 * t + (i & 1)] =
            d[i];
}

__device__ bool aligned(const uint8_t* smem, const Bufs& b) {
    if ((hw::smem_addr(smem) & 1023u) == 0u) return true;
    if (threadIdx.x == 0) b.status[0] = 1;
    return false;
}
#endif

extern __shared__ __align__(1024) uint8_t smem[];

// Test 1: S (64 x 64) over the first 16 kSteps dims, as rows64_consumer's step 1 (stage 0).
template <int kSteps>
__global__ void __launch_bounds__(128, 1) probe_s(Bufs b) {
#if defined(MLA_ARCH_SM90)
    if (!aligned(smem, b)) return;
    load_swizzled(smem + kOffQ, b.q, kHeadDimQk, kChunks);
    load_swizzled(smem + kOffStages, b.kv, kHeadDimQk, kChunks);
    hw::fence_proxy_async_smem();
    __syncthreads();
    const uint64_t q_desc = hw::sw128_desc(hw::smem_addr(smem + kOffQ), kKLbo, kSbo);
    const uint64_t k_desc = hw::sw128_desc(hw::smem_addr(smem + kOffStages), kKLbo, kSbo);
    float s[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) s[i] = 0.0f;
    hw::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
        const uint32_t off = ((ks / 4) * kChunkBytes + kKStepBytes * (ks % 4)) >> 4;
        hw::wgmma_ss_f16_m64n64_kk(s, q_desc + off, k_desc + off, ks > 0);
    }
    hw::wgmma_commit();
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
    store_d(s, b.out, 64, 0);
#endif
}

// Tests 2-4: O (64 x 256, dims 256 w ..) += P V over the first 16 kSteps tokens, tile of
// `stage`. kMode 0: P by plain stores, SS; 1: P from registers, RS; 2: P by stmatrix, SS.
template <int kMode, int kSteps>
__global__ void __launch_bounds__(128, 1)
    probe_pv(Bufs b, int w, int stage, int v_lbo, int v_sbo) {
#if defined(MLA_ARCH_SM90)
    if (!aligned(smem, b)) return;
    uint8_t* tile = smem + kOffStages + stage * kTileBytes;
    load_swizzled(tile, b.kv, kHeadDimQk, kRopeChunk);  // V: chunks 0..7 (dims 0..511)
    if constexpr (kMode == 0) load_swizzled(tile + kRopeChunk * kChunkBytes, b.p, 64, 1);
    const int wq = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t4 = lane & 3;
    uint32_t pf[4][4];  // as the kernel's softmax: pf[k / 8][(k % 8) / 2] = s[k], s[k + 1]
    if constexpr (kMode != 0) {
        float s[32];  // P in the S accumulator layout
#pragma unroll
        for (int k = 0; k < 32; ++k)
            s[k] = mla::arch::f16_bits_to_float(
                b.p[(16 * wq + g + 8 * ((k >> 1) & 1)) * 64 + 8 * (k >> 2) + 2 * t4 + (k & 1)]);
#pragma unroll
        for (int k = 0; k < 32; k += 2)
            pf[k / 8][(k % 8) / 2] = mla::arch::pack_f16x2(s[k], s[k + 1]);
    }
    if constexpr (kMode == 2) {  // the kernel's step 4, verbatim
        uint8_t* p_chunk = tile + kRopeChunk * kChunkBytes;
        const int mi = lane >> 3, r = lane & 7;
        const int prow = 16 * wq + 8 * (mi & 1) + r;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            const uint32_t at = hw::smem_addr(p_chunk + hw::sw128_offset(prow, 2 * kk + (mi >> 1)));
            hw::stmatrix_x4(at, pf[kk][0], pf[kk][1], pf[kk][2], pf[kk][3]);
        }
    }
    hw::fence_proxy_async_smem();
    __syncthreads();
    if constexpr (kMode == 2)
        for (int i = threadIdx.x; i < kChunkBytes / 16; i += blockDim.x)
            reinterpret_cast<uint4*>(b.pdump)[i] =
                reinterpret_cast<const uint4*>(tile + kRopeChunk * kChunkBytes)[i];
    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.0f;
    const uint32_t tile_addr = hw::smem_addr(tile);
    const uint64_t v_desc = hw::sw128_desc(tile_addr + 4 * w * kChunkBytes, v_lbo, v_sbo);
    hw::wgmma_fence();
    if constexpr (kMode == 1) {  // the kernel's step 5
#pragma unroll
        for (int kk = 0; kk < kSteps; ++kk)
            hw::wgmma_rs_f16_m64n256_mn(o, pf[kk], v_desc + ((kVStepBytes * kk) >> 4), true);
    } else {  // issue_pv_shared
        const uint64_t a = hw::sw128_desc(tile_addr + kRopeChunk * kChunkBytes, kKLbo, kSbo);
#pragma unroll
        for (int kk = 0; kk < kSteps; ++kk)
            hw::wgmma_ss_f16_m64n256_kmn(o, a + ((kKStepBytes * kk) >> 4),
                                         v_desc + ((kVStepBytes * kk) >> 4), true);
    }
    hw::wgmma_commit();
    hw::wgmma_wait<0>();
    hw::fence_operands(o);
    store_d(o, b.out, 512, 256 * w);
#endif
}

// ---- host ------------------------------------------------------------------------------------
static int g_fail = 0;
#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            printf("CUDA error %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

static uint16_t f16(int v) {
    return static_cast<__half_raw>(__float2half(static_cast<float>(v))).x;
}
// Small integers, distinct per index (no structure a layout error could hide behind).
static int val(int seed, int r, int c) {
    uint32_t x = seed * 0x9e3779b9u ^ (r * 0x85ebca6bu) ^ (c * 0xc2b2ae35u);
    x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12;
    return static_cast<int>(x % 9u) - 4;  // -4 .. 4
}

// got / want: 64 x cols (row stride ld, from column col0); prints ok or the first mismatches.
static bool check(const char* name, const float* got, const std::vector<double>& want, int ld,
                  int col0, int cols) {
    int bad = 0;
    char map[8][33] = {};
    for (int i = 0; i < 8; ++i) memset(map[i], '.', cols / 8);
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < cols; ++c) {
            const float gv = got[r * ld + col0 + c];
            const double wv = want[r * ld + col0 + c];
            if (static_cast<double>(gv) == wv) continue;
            if (bad < 6) printf("  %s: row %d col %d got %g want %g\n", name, r, c, gv, wv);
            ++bad;
            map[r / 8][c / 8] = 'X';
        }
    printf("%-48s %s", name, bad ? "FAIL" : "ok");
    if (bad) {
        printf(" (%d of %d wrong; 8x8 blocks, rows down, cols across:)\n", bad, 64 * cols);
        for (int i = 0; i < 8; ++i) printf("    %s\n", map[i]);
        ++g_fail;
    } else {
        printf("\n");
    }
    return bad == 0;
}

template <class T>
static T* upload(const std::vector<T>& h) {
    T* d;
    CK(cudaMalloc(&d, h.size() * sizeof(T)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

int main() {
    std::vector<uint16_t> hq(64 * 576), hkv(64 * 576), hp(64 * 64);
    std::vector<int> iq(hq.size()), ikv(hkv.size()), ip(hp.size());
    for (size_t i = 0; i < hq.size(); ++i) {
        iq[i] = val(1, i / 576, i % 576), hq[i] = f16(iq[i]);
        ikv[i] = val(2, i / 576, i % 576), hkv[i] = f16(ikv[i]);
    }
    for (size_t i = 0; i < hp.size(); ++i) ip[i] = val(3, i / 64, i % 64) + 4, hp[i] = f16(ip[i]);
    std::vector<float> out(64 * 512);
    std::vector<uint16_t> pd(64 * 64);
    std::vector<int> status(1, 0);
    float* dout = upload(out);
    uint16_t* dpd = upload(pd);
    int* dst = upload(status);
    const Bufs b{upload(hq), upload(hkv), upload(hp), dout, dpd, dst};

    // Runs the kernel with kSmem bytes of shared memory, fetches out and the alignment flag.
    auto launch = [&](auto kernel, auto... args) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
        CK(cudaMemset(dout, 0xff, 64 * 512 * 4));  // NaN: an element never written shows
        kernel<<<1, 128, kSmem>>>(b, args...);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
        int st = 0;
        CK(cudaMemcpy(&st, dst, 4, cudaMemcpyDeviceToHost));
        if (st) printf("dynamic shared memory not 1024-aligned: nothing computed\n"), exit(2);
    };
    auto ref_s = [&](int steps) {
        std::vector<double> s(64 * 64);
        for (int r = 0; r < 64; ++r)
            for (int n = 0; n < 64; ++n) {
                for (int d = 0; d < 16 * steps; ++d)
                    s[r * 64 + n] += double(iq[r * 576 + d]) * ikv[n * 576 + d];
            }
        return s;
    };
    std::vector<double> o1(64 * 512), o4(64 * 512);  // P V over 16 / 64 tokens, dims 0..511
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 512; ++c)
            for (int k = 0; k < 64; ++k) {
                const double x = double(ip[r * 64 + k]) * ikv[k * 576 + c];
                o4[r * 512 + c] += x;
                if (k < 16) o1[r * 512 + c] += x;
            }

    const int L = kVLbo, B = kSbo;  // V's descriptor strides, as the kernel's
    launch(probe_s<1>);
    check("1a S SS m64n64, 1 k-step (layout, descriptor)", out.data(), ref_s(1), 64, 0, 64);
    launch(probe_s<4>);
    check("1b S SS m64n64, 4 k-steps (+32 B in the atom)", out.data(), ref_s(4), 64, 0, 64);
    launch(probe_s<36>);
    check("1c S SS m64n64, 36 k-steps (+8192 a chunk)", out.data(), ref_s(36), 64, 0, 64);
    launch(probe_pv<0, 1>, 0, 0, L, B);
    if (!check("2a PV SS m64n256 trans-b, 1 k-step, dims 0..255", out.data(), o1, 512, 0, 256)) {
        const int failed = g_fail;  // a hypothesis, not counted
        launch(probe_pv<0, 1>, 0, 0, B, L);
        const bool swapped = check("  (2a, V's LBO and SBO swapped)", out.data(), o1, 512, 0, 256);
        printf("  hint: 2a with LBO %d, SBO %d: %s\n", B, L, swapped ? "ok" : "wrong too");
        g_fail = failed;
    }
    launch(probe_pv<0, 4>, 0, 0, L, B);
    check("2b PV SS, 4 k-steps (+2048), dims 0..255", out.data(), o4, 512, 0, 256);
    launch(probe_pv<0, 4>, 1, 1, L, B);
    check("2c PV SS, 4 k-steps, dims 256..511, stage 1", out.data(), o4, 512, 256, 256);
    launch(probe_pv<1, 1>, 0, 0, L, B);
    check("3a PV RS m64n256 trans-b, 1 k-step, dims 0..255", out.data(), o1, 512, 0, 256);
    launch(probe_pv<1, 4>, 0, 0, L, B);
    check("3b PV RS, 4 k-steps, dims 0..255", out.data(), o4, 512, 0, 256);
    launch(probe_pv<1, 4>, 1, 1, L, B);
    check("3c PV RS, 4 k-steps, dims 256..511, stage 1", out.data(), o4, 512, 256, 256);
    launch(probe_pv<2, 4>, 0, 0, L, B);
    CK(cudaMemcpy(pd.data(), dpd, pd.size() * 2, cudaMemcpyDeviceToHost));
    {   // 4a: P(r, c) must sit at byte 128 r + 16 ((c / 8) ^ (r % 8)) + 2 (c % 8) of the chunk
        std::vector<float> got(64 * 64);
        std::vector<double> want(64 * 64);
        for (int r = 0; r < 64; ++r)
            for (int c = 0; c < 64; ++c) {
                const int e = (128 * r + 16 * ((c / 8) ^ (r % 8)) + 2 * (c % 8)) / 2;
                __half_raw h;
                h.x = pd[e];
                got[r * 64 + c] = __half2float(__half(h));
                want[r * 64 + c] = ip[r * 64 + c];
            }
        check("4a stmatrix_x4 into chunk 8: bytes", got.data(), want, 64, 0, 64);
    }
    check("4b PV SS after stmatrix, 4 k-steps, dims 0..255", out.data(), o4, 512, 0, 256);
    printf("summary: %s (%d test(s) failed)\n", g_fail ? "FAIL" : "all ok", g_fail);
    return g_fail ? 1 : 0;
}
