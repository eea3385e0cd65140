// Instantiations and launchers of the split-KV family (stage 1 per cache format + reduce).
#include <atomic>

#include "arch/device.h"
#include "arch/runtime.h"
#include "splitkv/launch.h"
#include "splitkv/reduce.h"
#include "splitkv/stage1.h"

namespace mla::splitkv {
namespace {

constexpr int kMaxDevices = 64;

// Raise the kernel's dynamic shared memory limit once per device.
template <KvFormat F>
gpu::error_t prepare_stage1() {
    static std::atomic<bool> done[kMaxDevices];
    int dev = 0;
    gpu::error_t e = gpu::get_device(&dev);
    if (e != gpu::kSuccess) return e;
    if (dev >= 0 && dev < kMaxDevices && done[dev].load(std::memory_order_acquire))
        return gpu::kSuccess;
    e = gpu::set_max_dynamic_shared_bytes(stage1_kernel<F>, Stage1Config<F>::kSmemBytes);
    if (e == gpu::kSuccess && dev >= 0 && dev < kMaxDevices)
        done[dev].store(true, std::memory_order_release);
    return e;
}

template <KvFormat F>
gpu::error_t launch_stage1(const Params& params, gpu::stream_t stream) {
    using Cfg = Stage1Config<F>;
    gpu::error_t e = prepare_stage1<F>();
    if (e != gpu::kSuccess) return e;
    const unsigned grid = static_cast<unsigned>(params.batch) * static_cast<unsigned>(params.num_splits);
    stage1_kernel<F><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace

int stage1_tile_tokens() { return Stage1Config<KvFormat::kFp8E4M3FN>::kTileTokens; }

gpu::error_t launch_decode(const Params& params, KvFormat format, gpu::stream_t stream) {
    gpu::error_t e = gpu::kSuccess;
    switch (format) {
        case KvFormat::kBf16: e = launch_stage1<KvFormat::kBf16>(params, stream); break;
        case KvFormat::kFp8E4M3FN: e = launch_stage1<KvFormat::kFp8E4M3FN>(params, stream); break;
        case KvFormat::kFp8E4M3FNUZ:
            e = launch_stage1<KvFormat::kFp8E4M3FNUZ>(params, stream);
            break;
    }
    if (e != gpu::kSuccess) return e;
    const int64_t units = static_cast<int64_t>(params.total_q) * kHeadsPerCta;
    const unsigned grid = static_cast<unsigned>((units + kReduceWarps - 1) / kReduceWarps);
    reduce_kernel<<<grid, kReduceWarps * arch::kWarpSize, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace mla::splitkv
