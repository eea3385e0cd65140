// Stage 1, variant wgmma (sm_90a only), bf16 caches: the kernels of 16 and 32 rows per CTA (two
// bf16 stages do not fit beside 64 rows' Q^T; the planner never asks for 64: stage1_shape),
// and the launcher that picks one by Params::rows_per_cta.
#include "splitkv/launch.h"
#include "splitkv/stage1/launcher.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
namespace {

template <int kRows>
gpu::error_t launch_rows(const Params& params, gpu::stream_t stream) {
    constexpr KvFormat F = KvFormat::kBf16;
    using Cfg = WgmmaConfig<F, kRows>;
    static std::atomic<bool> done[kMaxDevices];
    const gpu::error_t e =
        set_shared_bytes_once(stage1_wgmma_kernel<F, kRows>, Cfg::kSmemBytes, done);
    if (e != gpu::kSuccess) return e;
    stage1_wgmma_kernel<F, kRows>
        <<<stage1_grid(params), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace

template <>
gpu::error_t launch_stage1_wgmma<KvFormat::kBf16>(const Params& params, gpu::stream_t stream) {
    switch (params.rows_per_cta) {
        case 16: return launch_rows<16>(params, stream);
        case 32: return launch_rows<32>(params, stream);
        default: return gpu::kErrorInvalidValue;  // 64 rows: no bf16 kernel
    }
}

}  // namespace mla::splitkv
