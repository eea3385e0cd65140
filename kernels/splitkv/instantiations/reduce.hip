// The split-KV reduce (launch.h): one warp per (query row, head, slice of the 512 dims).
#include "splitkv/launch.h"
#include "splitkv/reduce.h"
#include "splitkv/stage1/launcher.h"  // set_shared_bytes_once

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

int64_t reduce_ctas(int64_t rows) {
    return (rows * kReduceSlices + kReduceWarps - 1) / kReduceWarps;
}

gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream) {
    const unsigned grid =
        static_cast<unsigned>(reduce_ctas(static_cast<int64_t>(params.total_q) * params.num_heads));
    const unsigned block = kReduceWarps * arch::kWarpSize;
#if defined(MLA_BACKEND_CUDA)
    // Its launch then overlaps the tail of stage 1 (the kernel waits for stage 1 to complete),
    // its CTAs spread over the SMs by a shared-memory reservation (reduce_spread_shared_bytes).
    if (dependent) {
        static std::atomic<bool> raised[kMaxDevices];
        if (params.reduce_shared_bytes > 0) {
            const gpu::error_t e =
                set_shared_bytes_once(reduce_kernel, params.reduce_shared_limit, raised);
            if (e != gpu::kSuccess) return e;
        }
        return gpu::launch_dependent(reduce_kernel, grid, block,
                                     static_cast<size_t>(params.reduce_shared_bytes), stream,
                                     params);
    }
#endif
    reduce_kernel<<<grid, block, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace mla::splitkv
