// The cold-read floor kernel of the benchmark (floor_read.h): a plain read-reduction with
// 16-byte loads over one grid that fills the GPU. Nothing in it is specific to a vendor; it is
// compiled for the backend like the library's kernels (mla_gpu_sources).
#include "floor_read.h"

namespace mla_bench {
namespace {

constexpr unsigned kThreads = 256;
// Blocks resident per multiprocessor: 1024 threads on a Hopper SM (64 registers a thread
// allowed), 4 waves per SIMD of a CDNA compute unit (the second __launch_bounds__ argument is
// blocks per SM to nvcc and waves per SIMD to HIP's clang; 4 suits both).
constexpr unsigned kBlocksPerMultiprocessor = 4;
// Loads each thread issues before it uses any: with the grid above, 128 KiB in flight per
// multiprocessor (16 MiB on an H200), several times the memory's latency x bandwidth.
constexpr unsigned kLoadsInFlight = 8;

__global__ void __launch_bounds__(kThreads, kBlocksPerMultiprocessor)
    floor_read_kernel(const uint4* __restrict__ data, size_t vectors,
                      const unsigned char* __restrict__ tail, unsigned tail_bytes,
                      unsigned* sum) {
    // Grid-stride over the 16-byte vectors: consecutive threads read consecutive vectors.
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
    size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x;
    unsigned acc = 0;
    for (; i + (kLoadsInFlight - 1) * stride < vectors; i += kLoadsInFlight * stride) {
        uint4 v[kLoadsInFlight];
#pragma unroll
        for (unsigned k = 0; k < kLoadsInFlight; ++k) v[k] = data[i + k * stride];
#pragma unroll
        for (unsigned k = 0; k < kLoadsInFlight; ++k) acc += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < vectors; i += stride) {
        const uint4 v = data[i];
        acc += v.x + v.y + v.z + v.w;
    }
    // The last bytes % 16 bytes (MXFP4 rows are 306 bytes), one per thread of block 0.
    if (blockIdx.x == 0 && threadIdx.x < tail_bytes) acc += tail[threadIdx.x];

    __shared__ unsigned partial[kThreads];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

}  // namespace

mla::gpu::error_t launch_floor_read(const void* data, size_t bytes, unsigned* sum,
                                    int multiprocessors, mla::gpu::stream_t stream) {
    const size_t vectors = bytes / sizeof(uint4);
    const unsigned tail_bytes = static_cast<unsigned>(bytes % sizeof(uint4));
    // One full wave of blocks, fewer when the buffer has less than a vector per thread.
    const size_t fill = static_cast<size_t>(multiprocessors > 0 ? multiprocessors : 1) *
                        kBlocksPerMultiprocessor;
    const size_t needed = (vectors + kThreads - 1) / kThreads;
    const unsigned blocks = static_cast<unsigned>(needed < fill ? (needed > 0 ? needed : 1) : fill);
    floor_read_kernel<<<blocks, kThreads, 0, stream>>>(
        static_cast<const uint4*>(data), vectors,
        static_cast<const unsigned char*>(data) + vectors * sizeof(uint4), tail_bytes, sum);
    return mla::gpu::get_last_error();
}

}  // namespace mla_bench
