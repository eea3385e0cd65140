// The GPU side of the ABI: plans (path + split layout per shape and device), the workspace
// layout, and kernel dispatch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mla_decode.h"

namespace mla {

// What a plan is made for: the host-value fields of a problem that fix the route and the
// workspace, plus the device. Runs must match it exactly.
struct PlanKey {
    int32_t batch_size = 0, total_q = 0, max_q_len = 0, max_kv_len = 0, num_heads = 0;
    int32_t q_dtype = 0, kv_dtype = 0, o_dtype = 0;
    int32_t device = 0;
    bool operator==(const PlanKey& o) const;
};

struct DevicePlan {
    PlanKey key;
    int kv_format = 0;        // splitkv::KvFormat of the key stream (MXFP4: V per run)
    int multiprocessors = 0;
    int num_splits = 1;       // max splits per element; 1 = the single-split path
    int tiles_per_split = 1;
    int row_groups = 1;       // stage-1 CTAs per (element, split)
    size_t split_meta_offset = 0, row_meta_offset = 0, partial_o_offset = 0,
           partial_lse_offset = 0, workspace_bytes = 0;
    double predicted_us = 0.0;
    char description[320] = {};
};

// Expects `p` validated with ValidateFor::kWorkspaceQuery. NO_DEVICE without a GPU backend.
mla_status device_plan_create(const mla_decode_params& p, DevicePlan* plan);

// Expects `p` validated with ValidateFor::kDevice. Both check that p has the plan's shape and
// the workspace is large enough and aligned.
mla_status device_prepare(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                          size_t workspace_bytes, void* stream);
mla_status device_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                      size_t workspace_bytes, void* stream);

// mla_decode_workspace_size / mla_decode_fwd: a plan from the process-wide cache.
mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes);
mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream);

}  // namespace mla
