// Does compute-sanitizer's racecheck order shared-memory accesses across a named barrier of part
// of a CTA whose other warps have exited? The wgmma kernels' epilogue has this shape (notes,
// "Eighth session"). 384 threads: warps 8-11 leave at once (the producer); threads 0-255 sync on
// barrier 1 (256 threads), threads 0-15 write, sync, everyone reads.
//   nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o /tmp/rc racecheck_named_barrier.cu
//   compute-sanitizer --tool racecheck /tmp/rc [exit|regs]   ("exit": producers exit first;
//   "regs": they also give registers back with setmaxnreg first and the consumers take them, as
//   in the wgmma kernels; neither: producers stay and wait on __syncthreads at the end)
#include <cstdio>
#include <cstring>

__device__ __forceinline__ void bar1() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

__global__ void __launch_bounds__(384, 1) kernel(unsigned long long* out, int producers_exit,
                                                  int regs) {
    __shared__ unsigned long long slot[16];
    const int t = threadIdx.x;
    if (t >= 256) {
        if (regs) asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        if (producers_exit) return;
    } else {
        if (regs) asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
        bar1();
        if (t < 16) slot[t] = 1000ull + t;
        bar1();
        out[t] = slot[t % 16];
    }
    if (!producers_exit) __syncthreads();
}

int main(int argc, char** argv) {
    const int regs = argc > 1 && std::strcmp(argv[1], "regs") == 0;
    const int producers_exit = regs || (argc > 1 && std::strcmp(argv[1], "exit") == 0);
    unsigned long long* out;
    cudaMalloc(&out, 256 * sizeof(unsigned long long));
    kernel<<<2, 384>>>(out, producers_exit, regs);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned long long h[256];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < 256; ++t) bad += h[t] != 1000ull + t % 16;
    std::printf("producers_exit=%d regs=%d: %s, %d wrong\n", producers_exit, regs,
                cudaGetErrorString(e), bad);
    return bad != 0;
}
