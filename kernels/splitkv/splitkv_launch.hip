// Instantiations and launchers of the split-KV family (metadata, stage 1 per cache format,
// reduce).
#include <atomic>

#include "arch/device.h"
#include "arch/runtime.h"
#include "splitkv/launch.h"
#include "splitkv/metadata.h"
#include "splitkv/reduce.h"
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
namespace {

constexpr int kMaxDevices = 64;
constexpr int kTileTokens = Mma16Config<KvFormat::kFp8E4M3FN>::kTileTokens;

// Raise the kernel's dynamic shared memory limit once per device.
template <KvFormat F>
gpu::error_t prepare_stage1() {
    static std::atomic<bool> done[kMaxDevices];
    int dev = 0;
    gpu::error_t e = gpu::get_device(&dev);
    if (e != gpu::kSuccess) return e;
    if (dev >= 0 && dev < kMaxDevices && done[dev].load(std::memory_order_acquire))
        return gpu::kSuccess;
    e = gpu::set_max_dynamic_shared_bytes(stage1_mma16_kernel<F>, Mma16Config<F>::kSmemBytes);
    if (e == gpu::kSuccess && dev >= 0 && dev < kMaxDevices)
        done[dev].store(true, std::memory_order_release);
    return e;
}

template <KvFormat F>
gpu::error_t launch_stage1(const Params& params, gpu::stream_t stream) {
    using Cfg = Mma16Config<F>;
    static_assert(Cfg::kTileTokens == kTileTokens, "one split granularity for every format");
    gpu::error_t e = prepare_stage1<F>();
    if (e != gpu::kSuccess) return e;
    const unsigned grid = static_cast<unsigned>(params.batch) *
                          static_cast<unsigned>(params.max_splits) *
                          static_cast<unsigned>(params.row_groups);
    stage1_mma16_kernel<F><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace

int stage1_tile_tokens() { return kTileTokens; }

gpu::error_t launch_split_metadata(const Params& params, gpu::stream_t stream) {
    split_meta_kernel<kTileTokens><<<1, kMetaThreads, 0, stream>>>(params);
    return gpu::get_last_error();
}

gpu::error_t launch_attention(const Params& params, KvFormat format, gpu::stream_t stream) {
    gpu::error_t e = gpu::kSuccess;
    switch (format) {
        case KvFormat::kBf16: e = launch_stage1<KvFormat::kBf16>(params, stream); break;
        case KvFormat::kFp8E4M3FN: e = launch_stage1<KvFormat::kFp8E4M3FN>(params, stream); break;
        case KvFormat::kFp8E4M3FNUZ:
            e = launch_stage1<KvFormat::kFp8E4M3FNUZ>(params, stream);
            break;
        case KvFormat::kMxfp4: e = launch_stage1<KvFormat::kMxfp4>(params, stream); break;
        case KvFormat::kMxfp4Fp8E4M3FN:
            e = launch_stage1<KvFormat::kMxfp4Fp8E4M3FN>(params, stream);
            break;
        case KvFormat::kMxfp4Fp8E4M3FNUZ:
            e = launch_stage1<KvFormat::kMxfp4Fp8E4M3FNUZ>(params, stream);
            break;
    }
    if (e != gpu::kSuccess || params.split_meta == nullptr) return e;
    const int64_t units = static_cast<int64_t>(params.total_q) * params.num_heads * kReduceSlices;
    const unsigned grid = static_cast<unsigned>((units + kReduceWarps - 1) / kReduceWarps);
    reduce_kernel<<<grid, kReduceWarps * arch::kWarpSize, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace mla::splitkv
