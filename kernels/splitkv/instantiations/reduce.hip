// The split-KV reduce (launch.h): one warp per (query row, head, slice of the 512 dims).
#include "splitkv/launch.h"
#include "splitkv/reduce.h"

namespace mla::splitkv {

bool reduce_can_be_dependent() {
#if defined(MLA_BACKEND_CUDA)
    int ptx = 0, runtime = 0, driver = 0;
    const bool known = gpu::kernel_ptx_version(reduce_kernel, &ptx) == gpu::kSuccess &&
                       gpu::runtime_version(&runtime) == gpu::kSuccess &&
                       gpu::driver_version(&driver) == gpu::kSuccess;
    if (!known) (void)gpu::get_last_error();  // no dependent launch, and no error left behind
    return known && ptx >= 90 && runtime >= 12030 && driver >= 12030;
#else
    return false;
#endif
}

gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream) {
    const int64_t units = static_cast<int64_t>(params.total_q) * params.num_heads * kReduceSlices;
    const unsigned grid = static_cast<unsigned>((units + kReduceWarps - 1) / kReduceWarps);
    const unsigned block = kReduceWarps * arch::kWarpSize;
#if defined(MLA_BACKEND_CUDA)
    // Its launch then overlaps the tail of stage 1 (the kernel waits for stage 1 to complete).
    if (dependent) return gpu::launch_dependent(reduce_kernel, grid, block, 0, stream, params);
#endif
    reduce_kernel<<<grid, block, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace mla::splitkv
