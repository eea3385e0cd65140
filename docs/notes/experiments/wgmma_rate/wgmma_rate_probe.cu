// wgmma issue-rate probe: cycles per m64nNk16 f16 wgmma for one warpgroup or two, A from
// registers (RS) or shared memory (SS), three issue patterns (see run()).
#include <cstdint>
#include <cstdio>
#include <string>

#include "wg_ops.h"

__device__ __forceinline__ void fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int K>
__device__ __forceinline__ void wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(K) : "memory");
}
__device__ __forceinline__ uint64_t desc(uint32_t addr) {
    return (uint64_t(addr >> 4) & 0x3fff) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
}
template <int N, bool SS>
__device__ __forceinline__ void mma(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t ad,
                                    uint64_t bd);
#define DEF(N)                                                                             \
    template <>                                                                            \
    __device__ __forceinline__ void mma<N, false>(float(&d)[N / 2], const uint32_t(&a)[4], \
                                                  uint64_t, uint64_t bd) {                 \
        wg_rs_##N(d, a, bd);                                                               \
    }                                                                                      \
    template <>                                                                            \
    __device__ __forceinline__ void mma<N, true>(float(&d)[N / 2], const uint32_t(&)[4],   \
                                                 uint64_t ad, uint64_t bd) {               \
        wg_ss_##N(d, ad, bd);                                                              \
    }
DEF(16)
DEF(32) DEF(64) DEF(128) DEF(256)

    constexpr int G = 64;  // groups of 4 wgmma
// pattern 0: one accumulator, 4 wgmma per group, fence / commit / wait<1> per group (S-like)
// pattern 1: four accumulators, one wgmma each per group (O-like), N <= 64
// pattern 2: one accumulator, all 4G wgmma in one group
template <int N, bool SS, int PAT>
__global__ void probe(int nwg, unsigned long long* out, float* sink) {
    __shared__ __align__(128) uint8_t sm[16384];
    for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x)
        reinterpret_cast<uint32_t*>(sm)[i] = 0;
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg >= nwg) return;
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
    const uint64_t ad = desc(base), bd = desc(base + 4096);
    constexpr int R = N / 2;
    constexpr int NA = (PAT == 1 && N <= 64) ? 4 : 1;
    float d[NA][R];
    for (int j = 0; j < NA; ++j)
        for (int i = 0; i < R; ++i) d[j][i] = 0.f;
    uint32_t a[4] = {threadIdx.x, 1u, 2u, 3u};
    asm volatile("bar.sync %0, %1;\n" ::"r"(1 + 0), "r"(nwg * 128));
    const unsigned long long t0 = clock64();
    if (PAT == 2) {
        fence();
#pragma unroll 1
        for (int g = 0; g < 4 * G; ++g) mma<N, SS>(d[0], a, ad, bd);
        commit();
        wait<0>();
    } else {
#pragma unroll 1
        for (int g = 0; g < G; ++g) {
            a[1] ^= g;  // an ordinary write of the A registers (the decode), then the fence
            fence();
            if (NA == 4) {
#pragma unroll
                for (int j = 0; j < NA; ++j) mma<N, SS>(d[j], a, ad, bd);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) mma<N, SS>(d[0], a, ad, bd);
            }
            commit();
            wait<1>();
        }
        wait<0>();
    }
    const unsigned long long t1 = clock64();
    float s = 0.f;
    for (int j = 0; j < NA; ++j)
        for (int i = 0; i < R; ++i) s += d[j][i];
    sink[threadIdx.x] = s;
    if (threadIdx.x % 128 == 0) out[wg] = t1 - t0;
}

template <int N, bool SS, int PAT>
void run(unsigned long long* dout, float* sink) {
    if (PAT == 1 && N > 64) return;
    for (int nwg = 1; nwg <= 2; ++nwg) {
        probe<N, SS, PAT><<<1, 256>>>(nwg, dout, sink);
        probe<N, SS, PAT><<<1, 256>>>(nwg, dout, sink);
        unsigned long long h[2] = {0, 0};
        cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
        const double per = double(h[0]) / (4 * G);
        const double macs = 64.0 * N * 16;
        printf(
            "N=%3d %s pattern %d warpgroups %d: %7.1f cycles per wgmma (wg0), %6.0f MAC/clk per "
            "wg%s\n",
            N, SS ? "SS" : "RS", PAT, nwg, per, macs / per,
            nwg == 2 ? (", wg1 " + std::to_string(double(h[1]) / (4 * G))).c_str() : "");
    }
}
#include <string>
int main() {
    unsigned long long* dout;
    float* sink;
    cudaMalloc(&dout, 16);
    cudaMalloc(&sink, 1024 * 4);
#define ALL(N)                    \
    run<N, false, 0>(dout, sink); \
    run<N, true, 0>(dout, sink);  \
    run<N, false, 1>(dout, sink); \
    run<N, true, 1>(dout, sink);  \
    run<N, false, 2>(dout, sink); \
    run<N, true, 2>(dout, sink);
    ALL(16) ALL(32) ALL(64) ALL(128) ALL(256) cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
