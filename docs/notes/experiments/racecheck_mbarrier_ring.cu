// Does compute-sanitizer's racecheck order shared-memory accesses through an mbarrier ring? The
// wgmma kernels' stages have this shape (notes, "Twentieth session": racecheck reports the
// producer's copies into a stage against the consumers' earlier reads of it, and the decoders'
// writes against the consumers' reads, once a CTA reuses a stage). Two warps, a ring of 2
// stages of 32 words, 6 tiles: warp 1 (producer) waits "empty" of a stage before its second
// use, writes it and signals "full"; warp 0 (consumer) waits "full", reads, sums, arrives on
// "empty". Mode "st": plain stores then mbarrier.arrive (release); "cp": cp.async of 16 bytes
// per lane with cp.async.mbarrier.arrive.noinc (as the library's producer). Every word read is
// checked (out[0] = errors, out[1] = sum): correct ordering gives 0 errors.
//   nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o /tmp/rb racecheck_mbarrier_ring.cu
//   compute-sanitizer --tool racecheck /tmp/rb [st|cp]
// Twentieth session (H200, the device's compute-sanitizer): both modes 0 data errors, and
// racecheck reports 4 hazards each (the consumer's reads against the producer's refill of the
// stage, 496 a stage): it does not order accesses through mbarrier waits and arrivals, so its
// reports on the wgmma kernels' rings are of this class (docs/perf/h200_2026-12-03_s20).
#include <cstdio>
#include <cstring>

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(unsigned long long* b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(n));
}
__device__ __forceinline__ void bar_arrive(unsigned long long* b) {
    asm volatile("{\n.reg .b64 s;\nmbarrier.arrive.shared::cta.b64 s, [%0];\n}" ::"r"(
                     smem_addr(b))
                 : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long* b, unsigned parity) {
    asm volatile(
        "{\n.reg .pred p;\nW:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra W;\n}" ::"r"(smem_addr(b)),
        "r"(parity)
        : "memory");
}

constexpr int kStages = 2, kTiles = 6, kWords = 128;  // 128 words: 16 bytes per producer lane

__global__ void kernel(const unsigned* src, unsigned* out, int use_cp) {
    __shared__ alignas(16) unsigned ring[kStages][kWords];
    __shared__ unsigned long long full[kStages], empty[kStages];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (threadIdx.x == 0)
        for (int s = 0; s < kStages; ++s) {
            bar_init(&full[s], 32);  // the producer's lanes
            bar_init(&empty[s], 1);  // the consumer warp's lane 0
        }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
    unsigned errors = 0, sum = 0;
    for (int t = 0; t < kTiles; ++t) {
        const int s = t % kStages, use = t / kStages;
        if (warp == 1) {
            if (use > 0) bar_wait(&empty[s], (use - 1) & 1);
            const unsigned* g = src + t * kWords + 4 * lane;
            if (use_cp) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                                 smem_addr(&ring[s][4 * lane])),
                             "l"(g));
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(
                    smem_addr(&full[s])));
            } else {
                for (int k = 0; k < 4; ++k) ring[s][4 * lane + k] = g[k];
                bar_arrive(&full[s]);
            }
        } else {
            bar_wait(&full[s], use & 1);
            for (int k = 0; k < 4; ++k) {
                const unsigned v = ring[s][4 * lane + k];
                errors += v != static_cast<unsigned>(t * kWords + 4 * lane + k);
                sum += v;
            }
            __syncwarp();
            if (lane == 0) bar_arrive(&empty[s]);
        }
    }
    if (warp == 1 && use_cp) asm volatile("cp.async.wait_all;" ::: "memory");
    if (warp == 0) {
        atomicAdd(&out[0], errors);
        atomicAdd(&out[1], sum);
    }
}

int main(int argc, char** argv) {
    const int use_cp = argc > 1 && std::strcmp(argv[1], "cp") == 0;
    unsigned host[kTiles * kWords];
    for (int i = 0; i < kTiles * kWords; ++i) host[i] = i;
    unsigned *src, *out;
    cudaMalloc(&src, sizeof host);
    cudaMalloc(&out, 8);
    cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemset(out, 0, 8);
    kernel<<<1, 64>>>(src, out, use_cp);
    unsigned r[2];
    cudaMemcpy(r, out, 8, cudaMemcpyDeviceToHost);
    std::printf("mode %s: errors %u, sum %u (want 0, %u)\n", use_cp ? "cp" : "st", r[0], r[1],
                kTiles * kWords * (kTiles * kWords - 1) / 2);
    return r[0] != 0;
}
