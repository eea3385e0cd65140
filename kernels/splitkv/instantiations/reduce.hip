// The split-KV reduce (launch.h): reduce_kernel (one warp per (query row, head, slice of the 512
// dims)) or reduce_split_parallel_kernel (a CTA per unit), by split count and rows.
#include "splitkv/launch.h"
#include "splitkv/reduce.h"
#include "splitkv/stage1/launcher.h"  // set_shared_bytes_once

namespace mla::splitkv {

bool reduce_can_be_dependent() {
#if defined(MLA_BACKEND_CUDA)
    int ptx = 0, runtime = 0, driver = 0;
    const bool known = gpu::kernel_ptx_version(reduce_kernel<1>, &ptx) == gpu::kSuccess &&
                       gpu::runtime_version(&runtime) == gpu::kSuccess &&
                       gpu::driver_version(&driver) == gpu::kSuccess;
    if (!known) (void)gpu::get_last_error();  // no dependent launch, and no error left behind
    return known && ptx >= 90 && runtime >= 12030 && driver >= 12030;
#else
    return false;
#endif
}

namespace {

// Up to this many (row, head, slice) units, a reduce of 9 .. 32 splits takes a CTA per unit
// (reduce_split_parallel_kernel) rather than a warp (reduce_kernel): each warp then reads a
// quarter of the splits, and a few rows spread over more SMs. With more units the warps fill
// the GPU anyway, and the split-parallel kernel's idle warps and shared-memory hand-over cost
// more than they save (H200, 16 to 32 splits: 512 units 2 % faster, 1024 units 1.5-3 % slower).
constexpr int64_t kReduceSpreadUnits = 512;

bool split_parallel(int64_t rows, int max_splits) {
    return max_splits > kReduceGroupSplits ||
           (max_splits > kReduceChunk && rows * kReduceSlices <= kReduceSpreadUnits);
}

}  // namespace

int64_t reduce_ctas(int64_t rows, int max_splits) {
    if (split_parallel(rows, max_splits)) return rows * kReduceSlices;  // a CTA per unit
    return (rows * kReduceSlices + kReduceWarps - 1) / kReduceWarps;
}

namespace {

// Queues reduce kernel `kernel` (`raised`: its own flags, set_shared_bytes_once) on `grid` CTAs
// with `shared` bytes of its own shared memory; `dependent`: a programmatic dependent launch.
template <typename Kernel>
gpu::error_t launch_reduce_kernel(Kernel kernel, std::atomic<bool> (&raised)[kMaxDevices],
                                  unsigned grid, int shared, const Params& params,
                                  bool dependent, gpu::stream_t stream) {
    const unsigned block = kReduceWarps * arch::kWarpSize;
    (void)dependent;  // a CUDA launch's choice
    (void)raised;
#if defined(MLA_BACKEND_CUDA)
    // Its launch then overlaps the tail of stage 1 (the kernel waits for stage 1 to complete),
    // its CTAs spread over the SMs by a shared-memory reservation (reduce_spread_shared_bytes).
    // The reservation also holds the kernel's own shared memory; where it is smaller than that
    // (or 0), more CTAs than an SM can run would fit either way.
    if (dependent) {
        if (params.reduce_shared_bytes > 0) {
            const gpu::error_t e = set_shared_bytes_once(kernel, params.reduce_shared_limit, raised);
            if (e != gpu::kSuccess) return e;
        }
        const int bytes = params.reduce_shared_bytes > shared ? params.reduce_shared_bytes : shared;
        return gpu::launch_dependent(kernel, grid, block, static_cast<size_t>(bytes), stream,
                                     params);
    }
#endif
    MLA_LAUNCH(kernel, grid, block, static_cast<size_t>(shared), stream)(params);
    return gpu::get_last_error();
}

// kSplitParallel: reduce_split_parallel_kernel<kN> (kN groups of chunks in flight a warp: up
// to kN * kReduceGroupSplits splits, any count at kReduceMaxGroups); else reduce_kernel<kN> (kN
// chunks: up to kN * kReduceChunk splits). A launch for more splits than the kernel adds, or of
// the other kind than reduce_ctas counts CTAs for, is refused (launch_reduce asks for neither).
template <bool kSplitParallel, int kN>
gpu::error_t launch_reduce_with(const Params& params, bool dependent, gpu::stream_t stream) {
    const int64_t rows = static_cast<int64_t>(params.total_q) * params.num_heads;
    const int served = !kSplitParallel ? kN * kReduceChunk
                       : kN < kReduceMaxGroups ? kN * kReduceGroupSplits
                                               : params.max_splits;
    if (params.max_splits > served || split_parallel(rows, params.max_splits) != kSplitParallel)
        return gpu::kErrorInvalidValue;
    const auto kernel = [] {
        if constexpr (kSplitParallel) return reduce_split_parallel_kernel<kN>;
        else return reduce_kernel<kN>;
    }();
    static std::atomic<bool> raised[kMaxDevices];  // one per kernel
    const auto grid = static_cast<unsigned>(reduce_ctas(rows, params.max_splits));
    return launch_reduce_kernel(kernel, raised, grid, kSplitParallel ? kReduceCombineBytes : 0,
                                params, dependent, stream);
}

}  // namespace

// Each partial O row a lane reads waits on a round trip to L2; a lane of reduce_kernel has all
// of its unit's splits in flight at once (up to 32), and reduce_split_parallel_kernel spreads a
// unit's splits over a CTA's four warps: one round trip for up to 128 splits, where one warp
// needed one per 32 before (H200, ncu, one element of 16 heads: the reduce of 64 splits
// 10.3 us, of 128 16.7 us). The order of the sums, and so the result bit for bit, does not
// depend on the choice (reduce.h).
gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream) {
    if (params.balanced) {  // a warp per unit, whatever the splits
        static std::atomic<bool> raised[kMaxDevices];
        const int64_t rows = static_cast<int64_t>(params.total_q) * params.num_heads;
        return launch_reduce_kernel(reduce_balanced_kernel, raised,
                                    static_cast<unsigned>(reduce_ctas(rows, 1)), 0, params,
                                    dependent, stream);
    }
    const int s = params.max_splits;
    if (s <= kReduceChunk) return launch_reduce_with<false, 1>(params, dependent, stream);
    if (!split_parallel(static_cast<int64_t>(params.total_q) * params.num_heads, s)) {
        return s <= 2 * kReduceChunk ? launch_reduce_with<false, 2>(params, dependent, stream)
                                     : launch_reduce_with<false, 4>(params, dependent, stream);
    }
    if (s <= kReduceGroupSplits) return launch_reduce_with<true, 1>(params, dependent, stream);
    if (s <= 2 * kReduceGroupSplits) return launch_reduce_with<true, 2>(params, dependent, stream);
    return launch_reduce_with<true, kReduceMaxGroups>(params, dependent, stream);
}

}  // namespace mla::splitkv
