// Stage 1, variant wgmma (sm_90a only), e4m3fn Q on an e4m3fn cache with the score product on
// the e4m3 tensor core (Params::fp8_mma): the kernels of 16, 32 and 64 rows per CTA, through
// the launcher in splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN, true>(const Params&,
                                                                      gpu::stream_t);
}  // namespace mla::splitkv
