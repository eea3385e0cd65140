// Stage 1, variant mma16, bf16 cache.
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_mma16<KvFormat::kBf16>(const Params&, gpu::stream_t);
}  // namespace mla::splitkv
