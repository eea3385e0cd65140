// The split-KV reduce (launch.h): one warp per (query row, head, slice of the 512 dims).
#include "splitkv/launch.h"
#include "splitkv/reduce.h"
#include "splitkv/stage1/launcher.h"  // set_shared_bytes_once

namespace mla::splitkv {

bool reduce_can_be_dependent() {
#if defined(MLA_BACKEND_CUDA)
    int ptx = 0, runtime = 0, driver = 0;
    const bool known = gpu::kernel_ptx_version(reduce_kernel<8, 1>, &ptx) == gpu::kSuccess &&
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

namespace {

template <int kOBatch, int kLseRegs>
gpu::error_t launch_reduce_with(const Params& params, bool dependent, gpu::stream_t stream) {
    // Only the widest kernel takes any split count (reduce.h); the others would leave splits out.
    if (kLseRegs < kReduceMaxLseRegs && params.max_splits > kLseRegs * arch::kWarpSize)
        return gpu::kErrorInvalidValue;
    const auto kernel = reduce_kernel<kOBatch, kLseRegs>;
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
                set_shared_bytes_once(kernel, params.reduce_shared_limit, raised);
            if (e != gpu::kSuccess) return e;
        }
        return gpu::launch_dependent(kernel, grid, block,
                                     static_cast<size_t>(params.reduce_shared_bytes), stream,
                                     params);
    }
#endif
    kernel<<<grid, block, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace

// Each batch of partial O rows a lane reads is a round trip to L2: elements of many splits
// read more at once (H200, fp8 and MXFP4, 32-64 splits: 16 or 32 rows in flight took 2-4 % off
// bs4 kv8192 and bs1 kv16384-65536 against 8; with 8 splits or fewer the registers, 72 against
// 168 and 215, would only cost occupancy), and past a warp's worth of splits the LSEs of up to
// 4 warps' worth stay in registers from the first read (before, each further warp's worth was
// read twice, one round trip more each time).
gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream) {
    if (params.max_splits <= 8) return launch_reduce_with<8, 1>(params, dependent, stream);
    if (params.max_splits <= arch::kWarpSize)
        return launch_reduce_with<16, 1>(params, dependent, stream);
    return launch_reduce_with<32, kReduceMaxLseRegs>(params, dependent, stream);
}

}  // namespace mla::splitkv
