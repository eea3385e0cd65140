// Stage 1, variant wgmma (sm_90a only), MXFP4 keys beside a separate e4m3fn V cache (the design
// card's MXFP4-K / fp8-V path; WgmmaMxfp4Fp8VDecode<kE4M3FN>): the kernels of 16, 32 and 64 rows
// per CTA, through the launcher in splitkv/stage1/wgmma.h.
#include "splitkv/launch.h"
#include "splitkv/stage1/wgmma.h"

namespace mla::splitkv {
template gpu::error_t launch_stage1_wgmma<KvFormat::kMxfp4Fp8E4M3FN, false>(const Params&,
                                                                            gpu::stream_t);
}  // namespace mla::splitkv
