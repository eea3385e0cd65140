// Stage 1, variant wgmma (sm_90a only), fp8 caches (e4m3fn and e4m3fnuz): the kernels of 16, 32
// and 64 rows per CTA, and the launcher that picks one by Params::rows_per_cta.
#include "splitkv/launch.h"
#include "splitkv/stage1/launcher.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
namespace {

template <KvFormat F, int kRows>
gpu::error_t launch_rows(const Params& params, gpu::stream_t stream) {
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

template <KvFormat F>
gpu::error_t launch_stage1_wgmma(const Params& params, gpu::stream_t stream) {
    switch (params.rows_per_cta) {
        case 16: return launch_rows<F, 16>(params, stream);
        case 32: return launch_rows<F, 32>(params, stream);
        case 64: return launch_rows<F, 64>(params, stream);
        default: return gpu::kErrorInvalidValue;
    }
}

template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN>(const Params&, gpu::stream_t);
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZ>(const Params&, gpu::stream_t);

}  // namespace mla::splitkv
