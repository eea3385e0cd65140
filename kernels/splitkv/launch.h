// Host-side entry points of the split-KV family, implemented in splitkv_launch.hip.
// Includable from plain C++ (no device code).
#pragma once

#include "arch/runtime.h"
#include "splitkv/params.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla::splitkv {

// Cache tokens per stage-1 tile on this build's architecture (the split granularity).
int stage1_tile_tokens();

// Launches stage 1 (batch * num_splits CTAs) then the reduce, on `stream`.
// Returns the runtime's error for the launches (kSuccess if both were queued).
gpu::error_t launch_decode(const Params& params, KvFormat format, gpu::stream_t stream);

}  // namespace mla::splitkv
#endif
