// Stage 1, variant wgmma (sm_90a only), fp8 caches (e4m3fn and e4m3fnuz): the kernels of 16, 32
// and 64 rows per CTA, through the launcher in splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN, false>(const Params&,
                                                                       gpu::stream_t);
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZ, false>(const Params&,
                                                                         gpu::stream_t);
}  // namespace mla::splitkv
