// Stage 1, variant wgmma (sm_90a only), bf16 caches: the kernels of 16 and 32 rows per CTA (no
// 64: two bf16 stages do not fit beside 64 rows' Q^T), through the launcher in
// splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kBf16, false>(const Params&, gpu::stream_t);
}  // namespace mla::splitkv
