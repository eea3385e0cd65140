// wgmma_rate_probe.cu (sixtieth session; a standalone probe, not part of the library): the
// tensor rate that the wgmma shapes stage 1 issues can reach on one SM, in MACs a
// cycle, against the peak (f16 2,048, e4m3 4,096 MACs a cycle and SM on H100 / H200).
// Every CTA (one an SM) runs W warpgroups; each issues chains of C wgmma on one accumulator
// (or A accumulators in turn: the value product's m-blocks), commits, and waits for the group
// (wait 0) before the next chain, as stage 1's score and value chains do. Operands are
// fixed (A in registers for rs, loaded once from shared memory: with literal constants ptxas
// serializes the chains, C7511; shared-memory descriptors, no swizzle, for ss and B).
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -o wgmma_rate_probe wgmma_rate_probe.cu && ./wgmma_rate_probe
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

__device__ __forceinline__ uint64_t desc(uint32_t addr) {
    // K-major, no swizzle: core matrices of 8 rows x 16 bytes, 128 contiguous bytes each; leading
    // byte offset (the next core matrix along K) 128, stride byte offset (along M / N) 256.
    uint64_t d = 0;
    d |= (uint64_t)((addr >> 4) & 0x3FFF);
    d |= (uint64_t)((128 >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)((256 >> 4) & 0x3FFF) << 32;
    return d;
}
// Accumulator operands (d[0 .. n / 2 - 1], read and written) and their placeholders.
#define D8(o) "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), \
    "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define D16(o) D8(o), D8(o + 8)
#define D32(o) D16(o), D16(o + 16)
#define D64(o) D32(o), D32(o + 32)
#define D128(o) D64(o), D64(o + 64)
#define P8 "{%0,%1,%2,%3,%4,%5,%6,%7}"
#define P16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define P32 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define P64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define P128 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
// One wrapper: NAME(d, A, bdesc), A the registers a[4] (RS) or a descriptor (SS); SHAPE the
// instruction's shape and types, AB its A and B placeholders, TAIL the immediates after scale-d.
#define WG(NAME, ND, SIG_A, SHAPE, AB, TAIL, IN)                                                  \
    __device__ __forceinline__ void NAME(float (&d)[ND], SIG_A, uint64_t bdesc) {                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned." SHAPE \
                     " " P##ND ", " AB ", p, " TAIL ";\n}\n"                                        \
                     : D##ND(0)                                                                  \
                     : IN);                                                                      \
    }
#define RS_IN "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bdesc)
#define SS_IN "l"(adesc), "l"(bdesc)
// The four wrappers of one N (ND = N / 2 accumulators): f16 m64nNk16 and e4m3 m64nNk32, RS / SS.
#define WG4(N, ND, RS_AB, SS_AB)                                                                  \
    WG(wg_f16_rs_##N, ND, const uint32_t (&a)[4], "m64n" #N "k16.f32.f16.f16", RS_AB, "1, 1, 0", \
       RS_IN)                                                                                    \
    WG(wg_f16_ss_##N, ND, uint64_t adesc, "m64n" #N "k16.f32.f16.f16", SS_AB, "1, 1, 0, 0", SS_IN) \
    WG(wg_e4m3_rs_##N, ND, const uint32_t (&a)[4], "m64n" #N "k32.f32.e4m3.e4m3", RS_AB, "1, 1",  \
       RS_IN)                                                                                    \
    WG(wg_e4m3_ss_##N, ND, uint64_t adesc, "m64n" #N "k32.f32.e4m3.e4m3", SS_AB, "1, 1", SS_IN)
WG4(16, 8, "{%8, %9, %10, %11}, %12", "%8, %9")
WG4(32, 16, "{%16, %17, %18, %19}, %20", "%16, %17")
WG4(64, 32, "{%32, %33, %34, %35}, %36", "%32, %33")
WG4(128, 64, "{%64, %65, %66, %67}, %68", "%64, %65")
WG4(256, 128, "{%128, %129, %130, %131}, %132", "%128, %129")

template <int kKind, int kN, bool kSs, int kChain, int kAccs>
__global__ void __launch_bounds__(384, 1) probe(int iters, long long* cycles, float* sink) {
    extern __shared__ __align__(1024) uint8_t smem[];
    for (int i = threadIdx.x; i < 64 * 1024 / 4; i += blockDim.x)
        reinterpret_cast<uint32_t*>(smem)[i] = 0x3C003C00u ^ (i * 0x00010001u & 0x03FF03FFu);
    __syncthreads();
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const int wgi = threadIdx.x / 128;
    // each warpgroup its own A (ss) and B regions: 16 KB apart
    const uint64_t adesc = desc(base + wgi * 16384);
    const uint64_t bdesc = desc(base + 32768 + wgi * 8192);
    uint32_t a[4]; { const uint32_t* q = reinterpret_cast<const uint32_t*>(smem) + threadIdx.x * 4; a[0]=q[0]; a[1]=q[1]; a[2]=q[2]; a[3]=q[3]; }
    float d[kAccs][kN / 2];
#pragma unroll
    for (int j = 0; j < kAccs; ++j)
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) d[j][i] = 0.0f;
    asm volatile("bar.sync 0;" ::: "memory");
    const long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int c = 0; c < kChain; ++c) {
#pragma unroll
            for (int j = 0; j < kAccs; ++j) {
#define ISSUE(KI, KIND, NN)                                                                   \
    if constexpr (kKind == KI && kN == NN) {                                                     \
        if constexpr (kSs) wg_##KIND##_ss_##NN(d[j], adesc, bdesc);                              \
        else wg_##KIND##_rs_##NN(d[j], a, bdesc);                                                \
    }
                ISSUE(0, f16, 16) ISSUE(0, f16, 32) ISSUE(0, f16, 64) ISSUE(0, f16, 128) ISSUE(0, f16, 256)
                ISSUE(1, e4m3, 16) ISSUE(1, e4m3, 32) ISSUE(1, e4m3, 64) ISSUE(1, e4m3, 128)
                ISSUE(1, e4m3, 256)
#undef ISSUE
            }
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    const long long t1 = clock64();
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < kAccs; ++j)
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) s += d[j][i];
    if (s == 12345.0f) sink[threadIdx.x] = s;
    if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 3 + wgi] = t1 - t0;
}

template <int kKind, int kN, bool kSs, int kChain, int kAccs>
void run(const char* what, int wgs, int sms) {
    const int iters = 2000;
    long long* cyc; float* sink;
    cudaMalloc(&cyc, sms * 3 * sizeof(long long));
    cudaMemset(cyc, 0, sms * 3 * sizeof(long long));
    cudaMalloc(&sink, 1024 * sizeof(float));
    auto k = probe<kKind, kN, kSs, kChain, kAccs>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    k<<<sms, wgs * 128, 65536>>>(10, cyc, sink);  // warm-up
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0);
    k<<<sms, wgs * 128, 65536>>>(iters, cyc, sink);
    cudaEventRecord(e1);
    cudaError_t err = cudaDeviceSynchronize();
    float ms = 0; cudaEventElapsedTime(&ms, e0, e1);
    long long h[3 * 1024]; cudaMemcpy(h, cyc, sms * 3 * sizeof(long long), cudaMemcpyDeviceToHost);
    long long mx = 0;
    for (int i = 0; i < sms * 3; ++i) mx = h[i] > mx ? h[i] : mx;
    const double k_dim = kKind == 0 ? 16 : 32;
    const double macs_sm = double(iters) * kChain * kAccs * wgs * 64.0 * kN * k_dim;
    const double peak = kKind == 0 ? 2048 : 4096;
    const double per_clk = macs_sm / double(mx);
    printf("%-34s W=%d  %8.1f MAC/clk/SM  %5.1f %% of peak  %6.1f cycles/wgmma/WG  %.3f ms  %s\n",
           what, wgs, per_clk, 100.0 * per_clk / peak,
           double(mx) / (double(iters) * kChain * kAccs), ms, err == cudaSuccess ? "ok" : cudaGetErrorString(err));
    cudaFree(cyc); cudaFree(sink);
}

int main() {
    int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    printf("%s, %d SMs\n", p.name, sms);
    // The 64-row kernels: S^T chain of 36 k16 steps (RS, f16), value product 4 m-blocks x 4 k16
    // (RS, four accumulators), e4m3 scores 18 k32 steps (SS).
    run<0, 64, false, 36, 1>("f16 rs n64 chain36 (scores)", 1, sms);
    run<0, 64, false, 36, 1>("f16 rs n64 chain36 (scores)", 2, sms);
    run<0, 64, false, 36, 1>("f16 rs n64 chain36 (scores)", 3, sms);
    run<0, 64, false, 4, 4>("f16 rs n64 4x4 accs (values)", 1, sms);
    run<0, 64, false, 4, 4>("f16 rs n64 4x4 accs (values)", 2, sms);
    run<0, 64, false, 4, 4>("f16 rs n64 4x4 accs (values)", 3, sms);
    run<0, 64, true, 36, 1>("f16 ss n64 chain36", 1, sms);
    run<0, 64, true, 36, 1>("f16 ss n64 chain36", 2, sms);
    run<0, 64, false, 2, 2>("f16 rs n64 2x2 (short chains)", 2, sms);
    run<0, 128, false, 16, 1>("f16 rs n128 chain16", 1, sms);
    run<0, 128, false, 16, 1>("f16 rs n128 chain16", 2, sms);
    run<0, 128, true, 16, 1>("f16 ss n128 chain16", 2, sms);
    run<0, 256, false, 16, 1>("f16 rs n256 chain16", 1, sms);
    run<0, 256, false, 16, 1>("f16 rs n256 chain16", 2, sms);
    run<0, 256, true, 16, 1>("f16 ss n256 chain16", 2, sms);
    run<0, 32, false, 36, 1>("f16 rs n32 chain36 (32 rows)", 2, sms);
    run<0, 16, false, 36, 1>("f16 rs n16 chain36 (16 rows)", 2, sms);
    run<0, 16, false, 36, 1>("f16 rs n16 chain36 (16 rows)", 3, sms);
    run<1, 64, true, 18, 1>("e4m3 ss n64 chain18 (scores)", 1, sms);
    run<1, 64, true, 18, 1>("e4m3 ss n64 chain18 (scores)", 2, sms);
    run<1, 64, false, 18, 1>("e4m3 rs n64 chain18", 2, sms);
    run<1, 128, true, 16, 1>("e4m3 ss n128 chain16", 2, sms);
    run<1, 256, true, 16, 1>("e4m3 ss n256 chain16", 2, sms);
    run<1, 256, false, 16, 1>("e4m3 rs n256 chain16", 2, sms);
    return 0;
}
