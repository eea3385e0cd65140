// Host-side entry points of the split-KV family, implemented in splitkv_launch.hip.
// Includable from plain C++ (no device code).
#pragma once

#include "arch/runtime.h"
#include "splitkv/params.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla::splitkv {

// Cache tokens per stage-1 tile on this build's architecture (the split granularity).
int stage1_tile_tokens();

// Queues the split-metadata kernel (params.split_meta != nullptr), which fills split_meta and
// row_meta from the device-resident indptrs.
gpu::error_t launch_split_metadata(const Params& params, gpu::stream_t stream);

// Queues stage 1 (batch * max_splits * row_groups CTAs) and, on the split path
// (split_meta != nullptr), the reduce. Returns the runtime's error for the launches.
gpu::error_t launch_attention(const Params& params, KvFormat format, gpu::stream_t stream);

}  // namespace mla::splitkv
#endif
