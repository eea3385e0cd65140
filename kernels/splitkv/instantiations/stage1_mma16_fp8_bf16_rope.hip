// Stage 1, variant mma16, fp8 latent caches (e4m3fn and e4m3fnuz) beside a bf16 rope cache
// (DeepSeek-V3.2).
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNBf16Rope>(const Params&,
                                                                       gpu::stream_t);
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZBf16Rope>(const Params&,
                                                                         gpu::stream_t);
}  // namespace mla::splitkv
