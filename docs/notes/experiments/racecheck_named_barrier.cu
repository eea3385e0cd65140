// Does compute-sanitizer's racecheck order shared-memory accesses across a named barrier of part
// of a CTA whose other warps have exited? The wgmma kernels' epilogue has this shape (notes,
// "Eighth session"). 384 threads: warps 8-11 leave at once (the producer); threads 0-255 sync on
// barrier 1 (256 threads), threads 0-15 write, sync, everyone reads.
//   nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o /tmp/rc racecheck_named_barrier.cu
//   compute-sanitizer --tool racecheck /tmp/rc [exit|regs|mbar]   ("exit": producers exit
//   first; "regs": they also give registers back with setmaxnreg first and the consumers take
//   them, as in the wgmma kernels; "mbar": as "regs", and the slots lie in dynamic shared memory
//   after an mbarrier that the producers arrive on before they exit and the consumers wait on
//   before the epilogue; none: producers stay and wait on __syncthreads at the end)
// Eighth session: 0 hazards for none, "exit" and "regs"; "mbar" not run yet.
#include <cstdio>
#include <cstring>

__device__ __forceinline__ void bar1() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__global__ void __launch_bounds__(384, 1) kernel(unsigned long long* out, int producers_exit,
                                                  int regs, int mbar) {
    extern __shared__ unsigned long long dyn[];  // [0]: the mbarrier, [1..16]: the slots
    __shared__ unsigned long long static_slot[16];
    unsigned long long* slot = mbar ? dyn + 1 : static_slot;
    const int t = threadIdx.x;
    if (mbar && t == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;" ::"r"(smem_addr(dyn)));
    if (mbar) __syncthreads();
    if (t >= 256) {
        if (regs) asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        if (mbar)
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(dyn)));
        if (producers_exit) return;
    } else {
        if (regs) asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
        if (mbar)
            asm volatile("{\n.reg .pred p;\n"
                         "W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
                         "@!p bra W;\n}" ::"r"(smem_addr(dyn)) : "memory");
        bar1();
        if (t < 16) slot[t] = 1000ull + t;
        bar1();
        out[t] = slot[t % 16];
    }
    if (!producers_exit) __syncthreads();
}

int main(int argc, char** argv) {
    const int mbar = argc > 1 && std::strcmp(argv[1], "mbar") == 0;
    const int regs = mbar || (argc > 1 && std::strcmp(argv[1], "regs") == 0);
    const int producers_exit = regs || (argc > 1 && std::strcmp(argv[1], "exit") == 0);
    unsigned long long* out;
    cudaMalloc(&out, 256 * sizeof(unsigned long long));
    kernel<<<2, 384, 17 * sizeof(unsigned long long)>>>(out, producers_exit, regs,
                                                         mbar);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned long long h[256];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < 256; ++t) bad += h[t] != 1000ull + t % 16;
    std::printf("producers_exit=%d regs=%d mbar=%d: %s, %d wrong\n", producers_exit, regs, mbar,
                cudaGetErrorString(e), bad);
    return bad != 0;
}
