// Stage 1, variant mma16, MXFP4 caches: V from the MXFP4 rows, or from a separate fp8 cache
// (e4m3fn or e4m3fnuz).
#include "splitkv/stage1/mma16.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4>(const Params&, gpu::stream_t);
template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FN>(const Params&,
                                                                    gpu::stream_t);
template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FNUZ>(const Params&,
                                                                      gpu::stream_t);
}  // namespace mla::splitkv
