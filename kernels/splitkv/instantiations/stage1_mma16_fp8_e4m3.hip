// Stage 1, variant mma16, fp8 caches (e4m3fn and e4m3fnuz) with the score product on e4m3 codes
// (Params::fp8_mma; arch::mma_scores_e4m3: mma.sync m16n8k32 .e4m3 on NVIDIA sm_89+, MFMA
// 16x16x32 fp8 on AMD CDNA3 (e4m3fnuz) and CDNA4 (e4m3fn)).
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FN, true>(const Params&,
                                                                      gpu::stream_t);
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ, true>(const Params&,
                                                                        gpu::stream_t);
}  // namespace mla::splitkv
