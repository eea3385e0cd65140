// Plans: for one problem shape on one device, the GPU route (single split, or split-KV with
// metadata + reduce), the split layout, the workspace layout, and a one-line description of the
// choice. Made from host fields alone (plan.cpp), cached per process (plan_cache.h), run by
// device.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_info.h"
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

// What the caller's environment asks of plans (device.cpp reads it once).
struct PlanOptions {
    int forced_splits = 0;  // > 0: this split count (MLA_DECODE_NUM_SPLITS)
};

PlanKey key_of(const mla_decode_params& p, int device);

// A plan for `p` (validated with ValidateFor::kWorkspaceQuery) on `device`. GPU builds only.
mla_status plan_create(const mla_decode_params& p, const DeviceInfo& device,
                       const PlanOptions& options, DevicePlan* plan);

}  // namespace mla
