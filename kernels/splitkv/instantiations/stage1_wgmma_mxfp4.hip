// Stage 1, variant wgmma (sm_90a only), MXFP4 caches (K and V from the 306-byte rows): the
// kernels of 16, 32 and 64 rows per CTA, through the launcher in splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kMxfp4, false>(const Params&, gpu::stream_t);
}  // namespace mla::splitkv
