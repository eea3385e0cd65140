// Stage 1, variant wgmma (sm_90a only), e4m3fn latent codes beside a bf16 rope (DeepSeek-V3.2's
// split cache; WgmmaFp8Bf16RopeDecode<kE4M3FN>): the kernels of 16, 32 and 64 rows per CTA,
// through the launcher in splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNBf16Rope, false>(const Params&,
                                                                               gpu::stream_t);
}  // namespace mla::splitkv
