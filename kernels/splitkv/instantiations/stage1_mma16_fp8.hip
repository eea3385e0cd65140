// Stage 1, variant mma16, fp8 caches (e4m3fn and e4m3fnuz).
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FN>(const Params&, gpu::stream_t);
template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ>(const Params&, gpu::stream_t);
}  // namespace mla::splitkv
