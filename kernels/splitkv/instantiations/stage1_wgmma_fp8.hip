// Stage 1, variant wgmma (sm_90a only), fp8 caches (e4m3fn and e4m3fnuz): the kernels of 16, 32
// and 64 rows per CTA, scores on f16 (every Q on either cache) and, for e4m3fn Q on an e4m3fn
// cache, on e4m3 from the raw codes; and the launcher that picks one by Params::q_format and
// Params::rows_per_cta.
#include "splitkv/launch.h"
#include "splitkv/stage1/launcher.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
namespace {

template <KvFormat F, int kRows, arch::MmaType kScores>
gpu::error_t launch_rows(const Params& params, gpu::stream_t stream) {
    using Cfg = WgmmaConfig<F, kRows, kScores>;
    static std::atomic<bool> done[kMaxDevices];
    const gpu::error_t e =
        set_shared_bytes_once(stage1_wgmma_kernel<F, kRows, kScores>, Cfg::kSmemBytes, done);
    if (e != gpu::kSuccess) return e;
    stage1_wgmma_kernel<F, kRows, kScores>
        <<<stage1_grid(params), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
    return gpu::get_last_error();
}

template <KvFormat F, arch::MmaType kScores>
gpu::error_t launch_scores(const Params& params, gpu::stream_t stream) {
    switch (params.rows_per_cta) {
        case 16: return launch_rows<F, 16, kScores>(params, stream);
        case 32: return launch_rows<F, 32, kScores>(params, stream);
        case 64: return launch_rows<F, 64, kScores>(params, stream);
        default: return gpu::kErrorInvalidValue;
    }
}

}  // namespace

template <KvFormat F>
gpu::error_t launch_stage1_wgmma(const Params& params, gpu::stream_t stream) {
    // e4m3fn Q on an e4m3fn cache: the fp8 tensor core on the raw codes (SPEC's fp8-Q rule).
    if constexpr (F == KvFormat::kFp8E4M3FN) {
        if (params.q_format == QFormat::kFp8E4M3FN)
            return launch_scores<F, arch::MmaType::kE4M3>(params, stream);
    }
    return launch_scores<F, arch::MmaType::kF16>(params, stream);
}

template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN>(const Params&, gpu::stream_t);
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZ>(const Params&, gpu::stream_t);

}  // namespace mla::splitkv
