// Cycles of the wgmma variant's score loop (wgmma_detail::score_products, the real code) and
// value loop (a copy of the kernel's) on one 64-token tile in shared memory: for one consumer
// warpgroup alone, two running the same loop, the score loop beside the value loop, and the
// score loop with 128 more live registers (the kernel's O^T), by rows per CTA and fp8 flavour.
// Compare with wgmma_rate_probe.cu (the bare wgmma rate: an m64n64k16 every ~33 cycles for one
// warpgroup, ~65 each for two). Build and run from the repository root:
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -DMLA_BACKEND_CUDA=1
//     -maxrregcount=240 -Ikernels -Iinclude
//     -o /tmp/slp docs/notes/experiments/wgmma_rate/score_loop_probe.cu && /tmp/slp
#include <cstdio>

#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

using namespace mla::splitkv;

// Word i of `bytes` of shared memory := v + i * step (every thread of the block takes part).
__device__ __forceinline__ void fill_words(uint8_t* p, int bytes, uint32_t v, uint32_t step) {
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x)
        reinterpret_cast<uint32_t*>(p)[i] = v + static_cast<uint32_t>(i) * step;
}

// The thread's warpgroup w, lane, warp in the warpgroup wq, and the lane's (g, t4) of the
// wgmma fragment layouts.
struct Pos {
    int w, lane, wq, g, t4;
    __device__ Pos()
        : w(static_cast<int>(threadIdx.x) / 128),
          lane(static_cast<int>(threadIdx.x) % 32),
          wq(static_cast<int>(threadIdx.x) / 32 % 4),
          g(lane >> 2),
          t4(lane & 3) {}
};

// kOLive: the kernel's O^T accumulators (128 registers at 64 rows) stay live across the loop,
// as they do in the consumer (the file is built with -maxrregcount=240, the consumers' budget).
template <KvFormat F, int kRows, bool kOLive = false>
__global__ void __launch_bounds__(256, 1)
    score_probe(int nwg, int reps, unsigned long long* out, float* sink) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows>;
    namespace hw = mla::arch::sm90;
    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t* qt = smem;
    uint8_t* tile = smem + (Cfg::kQtBytes + 1023) / 1024 * 1024;
    fill_words(qt, Cfg::kQtBytes, 0x3c003c00u, 0u);
    fill_words(tile, Cfg::kStageBytes, 0x38303438u, 1u);
    hw::fence_proxy_async_smem();
    __syncthreads();
    const Pos t;
    if (t.w >= nwg) return;
    const int wg = t.w, wq = t.wq, t4 = t.t4;
    const int s_tok0 = 16 * wq + Cfg::s_row_token(t.g, 0);
    const uint64_t qt_desc0 = hw::kmajor_desc(hw::smem_addr(qt), 128, 256);
    float acc = 0.0f;
    constexpr int kO = kOLive ? 2 * Cfg::kPairs * Cfg::N / 2 : 1;
    float o[kO];
#pragma unroll
    for (int i = 0; i < kO; ++i) o[i] = sink[(threadIdx.x + i) % 256];
    hw::named_barrier_sync(1, nwg * 128);
    const unsigned long long t0 = clock64();
#pragma unroll 1
    for (int r = 0; r < reps; ++r) {
        hw::fence_operands(o);
        float s[Cfg::N / 2];
        wgmma_detail::score_products<Cfg>(tile + s_tok0 * Cfg::kRowPitch + 16 * t4,
                                          tile + (s_tok0 + 1) * Cfg::kRowPitch + 16 * t4, qt_desc0,
                                          s);
#pragma unroll
        for (int i = 0; i < Cfg::N / 2; ++i) acc += s[i];
#pragma unroll
        for (int i = 0; i < kO; ++i) o[i] += s[i % (Cfg::N / 2)];
    }
    const unsigned long long t1 = clock64();
#pragma unroll
    for (int i = 0; i < kO; ++i) acc += o[i];
    sink[threadIdx.x] = acc;
    if (threadIdx.x % 128 == 0) out[wg] = t1 - t0;
#endif
}

template <KvFormat F, int kRows, bool kOLive = false>
void run(const char* name, unsigned long long* dout, float* sink) {
    using Cfg = WgmmaConfig<F, kRows>;
    const int smem = (Cfg::kQtBytes + 1023) / 1024 * 1024 + Cfg::kStageBytes;
    cudaFuncSetAttribute(score_probe<F, kRows, kOLive>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         smem);
    const int reps = 50;
    for (int nwg = 1; nwg <= 2; ++nwg) {
        score_probe<F, kRows, kOLive><<<1, 256, smem>>>(nwg, reps, dout, sink);
        score_probe<F, kRows, kOLive><<<1, 256, smem>>>(nwg, reps, dout, sink);
        unsigned long long h[2] = {0, 0};
        cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
        const double per = double(h[0]) / reps;
        printf(
            "%-12s rows %2d, %d warpgroup(s)%s: %6.0f cycles per tile's S (36 wgmma: %5.1f "
            "each; bare m64n%dk16 %s)\n",
            name, kRows, nwg, kOLive ? ", O live" : "", per, per / 36, kRows,
            kRows == 64 ? (nwg == 1 ? "~33" : "~65") : "see wgmma_rate_probe");
    }
}

// One tile's value products as the kernel's step 4 does them (a copy: it is inline there):
// 4 k-steps of kPParts x kPairs x 2 wgmma, V^T fragments from 4-byte loads of 4 token rows.
template <class Cfg>
__device__ __forceinline__ void value_tile(const uint8_t* v_tile, int v_pair, uint64_t pt_desc0,
                                           float (&o)[2 * Cfg::kPairs][Cfg::N / 2]) {
#if defined(MLA_ARCH_SM90)
    namespace hw = mla::arch::sm90;
    constexpr int N = Cfg::N, kPairs = Cfg::kPairs, kDimBytes = Cfg::Decode::kDimBytes;
    typename Cfg::Decode::VWord vw[kPairs][4];
    auto load_v = [&](int kk) {
#pragma unroll
        for (int pp = 0; pp < kPairs; ++pp) {
            const uint8_t* src = v_tile + (16 * kk) * Cfg::kRowPitch + 128 * kDimBytes * pp;
            vw[pp][0] = Cfg::Decode::load_v(src);
            vw[pp][1] = Cfg::Decode::load_v(src + v_pair);
            vw[pp][2] = Cfg::Decode::load_v(src + Cfg::kRowPitch);
            vw[pp][3] = Cfg::Decode::load_v(src + v_pair + Cfg::kRowPitch);
        }
    };
    load_v(0);
    uint32_t ax[2][kPairs][4], ay[2][kPairs][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        const int f = kk & 1;
#pragma unroll
        for (int pp = 0; pp < kPairs; ++pp)
            Cfg::Decode::v_fragments(vw[pp][0], vw[pp][1], vw[pp][2], vw[pp][3], ax[f][pp],
                                     ay[f][pp]);
        if (kk + 1 < 4) load_v(kk + 1);
        hw::wgmma_fence();
#pragma unroll
        for (int part = 0; part < Cfg::kPParts; ++part) {
            const uint64_t desc = pt_desc0 + ((part * Cfg::kPtBytes + kk * Cfg::kPtStepBytes) >> 4);
#pragma unroll
            for (int pp = 0; pp < kPairs; ++pp) {
                hw::Wgmma<Cfg::Decode::kValueMma, N>::run(o[2 * pp], ax[f][pp], desc, true);
                hw::Wgmma<Cfg::Decode::kValueMma, N>::run(o[2 * pp + 1], ay[f][pp], desc, true);
            }
        }
        hw::wgmma_commit();
        hw::wgmma_wait<1>();
    }
    hw::wgmma_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 2 * kPairs; ++mb) hw::fence_operands(o[mb]);
#endif
}

// The value loop (value_tile) on one tile, `reps` times, by one warpgroup or two at once.
template <KvFormat F, int kRows>
__global__ void __launch_bounds__(256, 1)
    value_probe(int nwg, int reps, unsigned long long* out, float* sink) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows>;
    namespace hw = mla::arch::sm90;
    constexpr int N = Cfg::N, kPairs = Cfg::kPairs, kDimBytes = Cfg::Decode::kDimBytes;
    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t* pt = smem;
    uint8_t* tile = smem + (Cfg::kPtBytes * Cfg::kPParts + 1023) / 1024 * 1024;
    fill_words(pt, Cfg::kPtBytes * Cfg::kPParts, 0x3c003c00u, 0u);
    fill_words(tile, Cfg::kStageBytes, 0x38303438u, 1u);
    hw::fence_proxy_async_smem();
    __syncthreads();
    const Pos t;
    if (t.w >= nwg) return;
    const int w = t.w, wq = t.wq, g = t.g, t4 = t.t4;
    const uint64_t pt_desc0 = hw::kmajor_desc(hw::smem_addr(pt), 128, 256);
    const int v_row = Cfg::s_row_token(2 * t4, 0);
    const int v_off = v_row * Cfg::kRowPitch + kDimBytes * (Cfg::kValueDims * w + 32 * wq + 4 * g);
    const int v_pair = (Cfg::s_row_token(2 * t4 + 1, 0) - v_row) * Cfg::kRowPitch;
    float o[2 * kPairs][N / 2];
#pragma unroll
    for (int mb = 0; mb < 2 * kPairs; ++mb)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) o[mb][i] = 0.0f;
    hw::named_barrier_sync(1, nwg * 128);
    const unsigned long long t0 = clock64();
#pragma unroll 1
    for (int r = 0; r < reps; ++r) value_tile<Cfg>(tile + v_off, v_pair, pt_desc0, o);
    const unsigned long long t1 = clock64();
    float acc = 0.0f;
#pragma unroll
    for (int mb = 0; mb < 2 * kPairs; ++mb)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) acc += o[mb][i];
    sink[threadIdx.x] = acc;
    if (threadIdx.x % 128 == 0) out[w] = t1 - t0;
#endif
}

template <KvFormat F, int kRows>
void run_value(const char* name, unsigned long long* dout, float* sink) {
    using Cfg = WgmmaConfig<F, kRows>;
    const int smem = (Cfg::kPtBytes * Cfg::kPParts + 1023) / 1024 * 1024 + Cfg::kStageBytes;
    cudaFuncSetAttribute(value_probe<F, kRows>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    const int reps = 50;
    for (int nwg = 1; nwg <= 2; ++nwg) {
        value_probe<F, kRows><<<1, 256, smem>>>(nwg, reps, dout, sink);
        value_probe<F, kRows><<<1, 256, smem>>>(nwg, reps, dout, sink);
        unsigned long long h[2] = {0, 0};
        cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
        const double per = double(h[0]) / reps;
        const int n_mma = 4 * Cfg::kPParts * 2 * Cfg::kPairs;
        printf(
            "%-12s rows %2d, %d warpgroup(s): %6.0f cycles per tile's O (%d wgmma: %5.1f each)\n",
            name, kRows, nwg, per, n_mma, per / n_mma);
    }
}

// Warpgroup 0 runs the score loop while warpgroup 1 runs the value loop (as the seesaw's two
// consumers overlap in the kernel), each `reps` times on the same tile; cycles of each (CTA 0).
// With `spin`, warpgroup 2 waits on an mbarrier that completes only when both are done (the
// kernel's producer waiting for a free stage, by the same try_wait loop); launched on `ctas`
// CTAs (1, or one per SM: every SM busy, as in the kernel).
template <KvFormat F, int kRows>
__global__ void __launch_bounds__(384, 1)
    mixed_probe(int reps_s, int reps_o, int spin, unsigned long long* out, float* sink) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows>;
    namespace hw = mla::arch::sm90;
    constexpr int N = Cfg::N, kPairs = Cfg::kPairs, kDimBytes = Cfg::Decode::kDimBytes;
    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t* qt = smem;
    uint8_t* pt = qt + (Cfg::kQtBytes + 1023) / 1024 * 1024;
    uint8_t* tile = pt + (Cfg::kPtBytes * Cfg::kPParts + 1023) / 1024 * 1024;
    fill_words(qt, Cfg::kQtBytes, 0x3c003c00u, 0u);
    fill_words(pt, Cfg::kPtBytes * Cfg::kPParts, 0x3c003c00u, 0u);
    fill_words(tile, Cfg::kStageBytes, 0x38303438u, 1u);
    __shared__ uint64_t done_bar;
    if (threadIdx.x == 0) {
        hw::mbarrier_init(&done_bar, 256);
        hw::mbarrier_init_fence();
    }
    hw::fence_proxy_async_smem();
    __syncthreads();
    const int w = threadIdx.x / 128;
    if (w == 2) {  // the registers as the kernel moves them (setmaxnreg)
        hw::warpgroup_registers_dec<24>();
        if (spin) hw::mbarrier_wait(&done_bar, 0);
        return;
    }
    hw::warpgroup_registers_inc<240>();
    const Pos t;
    const int wq = t.wq, g = t.g, t4 = t.t4;
    float acc = 0.0f;
    unsigned long long t0 = 0, t1 = 0, ns0 = 0, ns1 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
    if (w == 0) {
        const int s_tok0 = 16 * wq + Cfg::s_row_token(g, 0);
        const uint64_t qt_desc0 = hw::kmajor_desc(hw::smem_addr(qt), 128, 256);
        hw::named_barrier_sync(1, 256);
        t0 = clock64();
#pragma unroll 1
        for (int r = 0; r < reps_s; ++r) {
            float sc[N / 2];
            wgmma_detail::score_products<Cfg>(tile + s_tok0 * Cfg::kRowPitch + 16 * t4,
                                              tile + (s_tok0 + 1) * Cfg::kRowPitch + 16 * t4,
                                              qt_desc0, sc);
#pragma unroll
            for (int i = 0; i < N / 2; ++i) acc += sc[i];
        }
        t1 = clock64();
    } else {
        const uint64_t pt_desc0 = hw::kmajor_desc(hw::smem_addr(pt), 128, 256);
        const int v_row = Cfg::s_row_token(2 * t4, 0);
        const int v_off =
            v_row * Cfg::kRowPitch + kDimBytes * (Cfg::kValueDims * 1 + 32 * wq + 4 * g);
        const int v_pair = (Cfg::s_row_token(2 * t4 + 1, 0) - v_row) * Cfg::kRowPitch;
        float o[2 * kPairs][N / 2];
#pragma unroll
        for (int mb = 0; mb < 2 * kPairs; ++mb)
#pragma unroll
            for (int i = 0; i < N / 2; ++i) o[mb][i] = 0.0f;
        hw::named_barrier_sync(1, 256);
        t0 = clock64();
#pragma unroll 1
        for (int r = 0; r < reps_o; ++r) value_tile<Cfg>(tile + v_off, v_pair, pt_desc0, o);
        t1 = clock64();
#pragma unroll
        for (int mb = 0; mb < 2 * kPairs; ++mb)
#pragma unroll
            for (int i = 0; i < N / 2; ++i) acc += o[mb][i];
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
    hw::mbarrier_arrive(&done_bar);
    sink[threadIdx.x] = acc;
    if (blockIdx.x == 0 && threadIdx.x % 128 == 0) {
        out[w] = t1 - t0;
        out[2 + w] = ns1 - ns0;  // the same span (with the barrier) in ns: clock64's rate
    }
#endif
}

template <KvFormat F, int kRows>
void run_mixed(const char* name, unsigned long long* dout, float* sink) {
    using Cfg = WgmmaConfig<F, kRows>;
    const int smem = (Cfg::kQtBytes + 1023) / 1024 * 1024 +
                     (Cfg::kPtBytes * Cfg::kPParts + 1023) / 1024 * 1024 + Cfg::kStageBytes;
    cudaFuncSetAttribute(mixed_probe<F, kRows>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    // reps chosen so that both loops run about as long (S ~2.5x an O tile alone)
    const int reps_s = 40, reps_o = 100;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    for (int ctas : {1, sms})
        for (int spin = 0; spin <= 1; ++spin) {
            mixed_probe<F, kRows><<<ctas, 384, smem>>>(reps_s, reps_o, spin, dout, sink);
            mixed_probe<F, kRows><<<ctas, 384, smem>>>(reps_s, reps_o, spin, dout, sink);
            unsigned long long h[4] = {0, 0, 0, 0};
            cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
            printf(
                "%-12s rows %2d, S on warpgroup 0 beside O on warpgroup 1, %3d CTA(s), %s: "
                "S %6.0f cycles a tile, O %6.0f (spans %llu / %llu; %.2f clock64 per ns)\n",
                name, kRows, ctas, spin ? "warpgroup 2 waiting on an mbarrier" : "no third",
                double(h[0]) / reps_s, double(h[1]) / reps_o, h[0], h[1],
                h[2] ? double(h[0]) / double(h[2]) : 0.0);
        }
}

int main() {
    unsigned long long* dout;
    float* sink;
    cudaMalloc(&dout, 32);
    cudaMalloc(&sink, 1024 * 4);
    run<KvFormat::kFp8E4M3FN, 16>("e4m3fn", dout, sink);
    run<KvFormat::kFp8E4M3FN, 32>("e4m3fn", dout, sink);
    run<KvFormat::kFp8E4M3FN, 64>("e4m3fn", dout, sink);
    run<KvFormat::kFp8E4M3FNUZ, 64>("e4m3fnuz", dout, sink);
    run<KvFormat::kFp8E4M3FN, 64, true>("e4m3fn", dout, sink);
    run<KvFormat::kBf16, 32>("bf16", dout, sink);
    run_value<KvFormat::kFp8E4M3FN, 16>("e4m3fn", dout, sink);
    run_value<KvFormat::kFp8E4M3FN, 32>("e4m3fn", dout, sink);
    run_value<KvFormat::kFp8E4M3FN, 64>("e4m3fn", dout, sink);
    run_value<KvFormat::kFp8E4M3FNUZ, 64>("e4m3fnuz", dout, sink);
    run_mixed<KvFormat::kFp8E4M3FN, 16>("e4m3fn", dout, sink);
    run_mixed<KvFormat::kFp8E4M3FN, 64>("e4m3fn", dout, sink);
    const cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
