// The split-KV reduce (launch.h): one warp per (query row, head, slice of the 512 dims).
#include "splitkv/launch.h"
#include "splitkv/reduce.h"

namespace mla::splitkv {

gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream) {
    const int64_t units = static_cast<int64_t>(params.total_q) * params.num_heads * kReduceSlices;
    const unsigned grid = static_cast<unsigned>((units + kReduceWarps - 1) / kReduceWarps);
    const unsigned block = kReduceWarps * arch::kWarpSize;
    // Its launch then overlaps the tail of stage 1 (the kernel waits for stage 1 to complete).
    if (dependent) return gpu::launch_dependent(reduce_kernel, grid, block, 0, stream, params);
    reduce_kernel<<<grid, block, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace mla::splitkv
