// Probe of the cluster primitives that the crossover (exp_rows64_crossover.patch,
// stage1/wgmma_rows64.h rows64_cross_producer / rows64_consumer<Cfg, true>) adds to
// arch/nvidia/sm90.h: cluster_ctarank, map_shared_rank (mapa), store_16_cluster
// (st.shared::cluster), mbarrier_arrive_cluster (remote arrive, release.cluster),
// mbarrier_wait_cluster (try_wait acquire.cluster), cluster_arrive / cluster_wait
// (barrier.cluster), fence_proxy_async_all; and the launch as clusters of 2 through
// cudaLaunchKernelEx with 227,904 bytes of dynamic shared memory a CTA (the kernel's).
// Index-coded data: word = (round << 20) | (writer rank << 19) | (cluster << 12) | index.
// Tests (one line each, "ok" or FAIL with counts):
//   1  rank:   cluster_ctarank() == blockIdx.x % 2 in every CTA.
//   2  dsmem:  each CTA stores 8 KB into the peer's shared memory (mapa to rank ^ 1) and 8 KB
//              into its own through mapa to its own rank, both by st.shared::cluster; after
//              the cluster barrier each CTA checks both regions (generic loads).
//   3  ring:   the crossover's protocol on a 2-stage ring of 8 KB stages, 64 rounds: warps 0..3
//              of CTA r (the producer) write half r of each stage into both CTAs
//              (st.shared local + st.shared::cluster remote), fence.proxy.async, arrive on the
//              local full barrier and the peer's (count 256); warps 4..7 (the consumer) wait
//              full (acquire.cluster), check the whole stage by generic loads, thread 256 copies
//              it to global by cp.async.bulk (an async-proxy read, as wgmma's) and waits for
//              the read, then each consumer warp arrives on both CTAs' empty barriers (count
//              8), except for the last 2 rounds (nobody waits for those: no remote arrival on
//              an exited CTA). Host checks the bulk copies; the device counts generic
//              mismatches.
//   4  stress: test 3 with 20000 rounds and no bulk copy, 66 clusters (all SMs, where they
//              fit): races show up as mismatches or a hang (the watchdog: 10 s).
//   5  occupancy: cudaOccupancyMaxActiveClusters of the probe kernel at 227,904 bytes (info;
//              FAIL if 0: clusters of 2 of the kernel's size cannot be resident).
// Build and run from the root of h-crossover (~5 s of nvcc, well under a second to run):
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -Ikernels
//   -o /tmp/cluster_probe docs/notes/experiments/cluster_dsmem_probe.cu && /tmp/cluster_probe
// From main (c531f48): apply the patch to a copy of kernels/ first, as wgmma_sw128_probe.cu.
// Exit status: 0 all ok, 1 any FAIL, 2 a CUDA error (the test after the last line printed).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "arch/device.h"

#if defined(MLA_ARCH_SM90)  // device pass: arch/nvidia/sm90.h
namespace hw = mla::arch::sm90;
#endif

constexpr int kThreads = 256;
constexpr int kStageBytes = 8192;
constexpr int kKernelSmem = 227904;  // Rows64Config<fp8>::kSmemBytes
constexpr int kRounds = 64;

static int g_fail = 0;
#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

__device__ __host__ inline uint32_t code(uint32_t round, uint32_t rank, uint32_t cluster,
                                         uint32_t idx) {
    return (round << 20) | (rank << 19) | ((cluster & 127u) << 12) | (idx & 4095u);
}

struct Out {
    int* ranks;        // [grid]
    int* errors;       // [4]: dsmem, ring generic, stress generic, reserved
    uint32_t* copies;  // [grid][kRounds][kStageBytes / 4]: ring bulk copies
};

#if defined(MLA_ARCH_SM90)
__device__ void bulk_s2g(void* dst, uint32_t src_smem, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 "cp.async.bulk.commit_group;\n"
                 "cp.async.bulk.wait_group.read 0;\n" ::"l"(dst),
                 "r"(src_smem), "r"(bytes)
                 : "memory");
}
#endif

// mode 0: tests 1 + 2; mode 1: test 3 (rounds, bulk copies); mode 2: test 4 (rounds, no copies)
__global__ void probe(Out out, int mode, int rounds) {
#if defined(MLA_ARCH_SM90)
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t rank = hw::cluster_ctarank();
    const uint32_t peer = rank ^ 1u;
    const uint32_t cl = blockIdx.x / 2;
    const int tid = threadIdx.x;
    if (mode == 0) {
        if (tid == 0) out.ranks[blockIdx.x] = static_cast<int>(rank);
        // [0, 8K): written by the peer; [8K, 16K): by this CTA through mapa to its own rank
        uint32_t* buf = reinterpret_cast<uint32_t*>(smem);
        for (int i = tid; i < 4096; i += kThreads) buf[i] = 0xdeadbeefu;
        hw::cluster_arrive();  // nobody writes into a CTA before its own fill above
        hw::cluster_wait();
        const uint32_t remote = hw::map_shared_rank(hw::smem_addr(smem), peer);
        const uint32_t self = hw::map_shared_rank(hw::smem_addr(smem), rank);
        for (int g = tid; g < 512; g += kThreads) {  // 16-byte granules
            const uint32_t w = 4 * g;
            hw::store_16_cluster(remote + 16 * g, code(1, rank, cl, w), code(1, rank, cl, w + 1),
                                 code(1, rank, cl, w + 2), code(1, rank, cl, w + 3));
            hw::store_16_cluster(self + 8192 + 16 * g, code(2, rank, cl, w),
                                 code(2, rank, cl, w + 1), code(2, rank, cl, w + 2),
                                 code(2, rank, cl, w + 3));
        }
        hw::cluster_arrive();
        hw::cluster_wait();
        int bad = 0;
        for (int i = tid; i < 2048; i += kThreads) {
            bad += buf[i] != code(1, peer, cl, i);
            bad += buf[2048 + i] != code(2, rank, cl, i);
        }
        if (bad) atomicAdd(&out.errors[0], bad);
        hw::cluster_arrive();  // no CTA exits while its peer may still read... (nothing remote)
        hw::cluster_wait();
        return;
    }
    // ring: stages at 0 and 8192; barriers after them
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + 2 * kStageBytes);
    uint64_t* empty = full + 2;
    if (tid == 0) {
        for (int s = 0; s < 2; ++s) {
            hw::mbarrier_init(&full[s], 2 * 128);
            hw::mbarrier_init(&empty[s], 2 * 4);
        }
        hw::mbarrier_init_fence();
    }
    hw::cluster_arrive();
    hw::cluster_wait();
    const uint32_t peer_stages = hw::map_shared_rank(hw::smem_addr(smem), peer);
    const uint32_t peer_full = hw::map_shared_rank(hw::smem_addr(full), peer);
    const uint32_t peer_empty = hw::map_shared_rank(hw::smem_addr(empty), peer);
    const int warp = tid / 32, lane = tid % 32;
    if (warp < 4) {  // producer: half `rank` of each stage (4 KB = 128 threads x 2 granules)
        for (int t = 0; t < rounds; ++t) {
            const int s = t % 2, use = t / 2;
            if (use > 0) hw::mbarrier_wait_cluster(&empty[s], (use - 1) & 1);
            for (int h = 0; h < 2; ++h) {
                const uint32_t g = 256 * rank + 2 * tid + h;  // granule of the stage
                const uint32_t w = 4 * g;
                const uint32_t a = code(t & 4095, rank, cl, w), b = code(t & 4095, rank, cl, w + 1);
                const uint32_t c = code(t & 4095, rank, cl, w + 2);
                const uint32_t d = code(t & 4095, rank, cl, w + 3);
                *reinterpret_cast<uint4*>(smem + s * kStageBytes + 16 * g) = make_uint4(a, b, c, d);
                hw::store_16_cluster(peer_stages + s * kStageBytes + 16 * g, a, b, c, d);
            }
            hw::fence_proxy_async_all();
            hw::mbarrier_arrive(&full[s]);
            hw::mbarrier_arrive_cluster(peer_full + 8 * s);
        }
        return;
    }
    const int ct = tid - 128;
    int bad = 0;
    for (int t = 0; t < rounds; ++t) {
        const int s = t % 2;
        hw::mbarrier_wait_cluster(&full[s], (t / 2) & 1);
        const uint32_t* st = reinterpret_cast<const uint32_t*>(smem + s * kStageBytes);
        for (int i = ct; i < 2048; i += 128) {
            const uint32_t writer = (i / 4) >= 256 ? 1u : 0u;
            bad += st[i] != code(t & 4095, writer, cl, i);
        }
        if (mode == 1 && ct == 0)
            bulk_s2g(out.copies + (static_cast<size_t>(blockIdx.x) * kRounds + t) * 2048,
                     hw::smem_addr(smem + s * kStageBytes), kStageBytes);
        if (t + 2 < rounds) {
            __syncwarp();
            if (lane == 0) {
                hw::mbarrier_arrive(&empty[s]);
                hw::mbarrier_arrive_cluster(peer_empty + 8 * s);
            }
        }
    }
    if (bad) atomicAdd(&out.errors[mode], bad);
#endif
}

// A launch of `grid` CTAs of `threads` in clusters of 2, with the kernel's shared memory;
// `attr` must outlive the config.
static cudaLaunchConfig_t cluster_config(int grid, int threads, cudaLaunchAttribute (&attr)[1]) {
    attr[0] = {};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = kKernelSmem;
    cfg.stream = 0;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

static void launch(const Out& o, int mode, int rounds, int grid) {
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_config(grid, kThreads, attr);
    CK(cudaLaunchKernelEx(&cfg, probe, o, mode, rounds));
}

static bool sync_with_watchdog(double seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    while (cudaStreamQuery(0) == cudaErrorNotReady) {
        const double el =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (el > seconds) return false;
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return true;
}

static void report(const char* name, bool ok, const char* detail) {
    std::printf("%-10s %s %s\n", name, ok ? "ok" : "FAIL", detail);
    std::fflush(stdout);
    if (!ok) g_fail = 1;
}

int main() {
    CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kKernelSmem));
    const int grid = 16;  // 8 clusters
    Out o{};
    CK(cudaMalloc(&o.ranks, 1024 * sizeof(int)));
    CK(cudaMalloc(&o.errors, 4 * sizeof(int)));
    const size_t copy_words = static_cast<size_t>(grid) * kRounds * 2048;
    CK(cudaMalloc(&o.copies, copy_words * 4));
    CK(cudaMemset(o.errors, 0, 4 * sizeof(int)));
    CK(cudaMemset(o.copies, 0xff, copy_words * 4));
    char line[256];

    launch(o, 0, 0, grid);
    if (!sync_with_watchdog(10)) {
        report("1-2", false, "hang");
        return 1;
    }
    std::vector<int> ranks(grid), err(4);
    CK(cudaMemcpy(ranks.data(), o.ranks, grid * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(err.data(), o.errors, 4 * sizeof(int), cudaMemcpyDeviceToHost));
    int rank_bad = 0;
    for (int b = 0; b < grid; ++b) rank_bad += ranks[b] != b % 2;
    std::snprintf(line, sizeof line, "(%d of %d CTAs with a wrong rank)", rank_bad, grid);
    report("1 rank", rank_bad == 0, line);
    std::snprintf(line, sizeof line, "(%d wrong words of %d)", err[0], grid * 4096);
    report("2 dsmem", err[0] == 0, line);

    launch(o, 1, kRounds, grid);
    if (!sync_with_watchdog(10)) {
        report("3 ring", false, "hang (10 s)");
        return 1;
    }
    CK(cudaMemcpy(err.data(), o.errors, 4 * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<uint32_t> copies(copy_words);
    CK(cudaMemcpy(copies.data(), o.copies, copy_words * 4, cudaMemcpyDeviceToHost));
    size_t copy_bad = 0;
    for (int b = 0; b < grid; ++b)
        for (int t = 0; t < kRounds; ++t)
            for (int i = 0; i < 2048; ++i) {
                const uint32_t writer = (i / 4) >= 256 ? 1u : 0u;
                copy_bad += copies[(static_cast<size_t>(b) * kRounds + t) * 2048 + i] !=
                            code(t, writer, b / 2, i);
            }
    std::snprintf(line, sizeof line, "(generic mismatches %d, bulk-copy mismatches %zu of %zu)",
                  err[1], copy_bad, copy_words);
    report("3 ring", err[1] == 0 && copy_bad == 0, line);

    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int stress_grid = (sms / 2) * 2;
    launch(o, 2, 20000, stress_grid);
    if (!sync_with_watchdog(10)) {
        report("4 stress", false, "hang (10 s)");
        return 1;
    }
    CK(cudaMemcpy(err.data(), o.errors, 4 * sizeof(int), cudaMemcpyDeviceToHost));
    std::snprintf(line, sizeof line, "(%d CTAs x 20000 rounds: %d generic mismatches)",
                  stress_grid, err[2]);
    report("4 stress", err[2] == 0, line);

    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_config(stress_grid, 384, attr);  // the kernel's 384
    int clusters = 0;
    CK(cudaOccupancyMaxActiveClusters(&clusters, probe, &cfg));
    std::snprintf(line, sizeof line, "(%d clusters of 2 x 227,904 B resident of %d SMs)",
                  clusters, sms);
    report("5 occupancy", clusters > 0, line);

    std::printf("summary: %s\n", g_fail ? "FAILURES" : "all ok");
    return g_fail;
}
