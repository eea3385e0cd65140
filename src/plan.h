// Plans: for one problem shape on one device, the GPU route (single split, or split-KV with
// a reduce), the split layout, the workspace layout, and a one-line description of the
// choice. Made from host fields alone (plan.cpp), cached per process (plan_cache.h), run by
// device.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_info.h"
#include "mla_decode.h"
#include "stage1_select.h"

namespace mla {

// What a plan is made for: the host-value fields of a problem that fix the route, the kernels
// and the workspace, plus the device. Runs must match it exactly. v_dtype fixes where V comes
// from: 0 the latent rows, FP8_* a v_cache. rope_dtype: the dtype of K's rope dims (kpe_dtype,
// or kv_dtype for 576-wide rows), which picks the kernel of a BF16 rope beside an FP8 latent;
// 576-wide rows and a rope cache of the latent's dtype share a key (the same kernels read both).
// flags: MLA_DECODE_FLAG_* (batch-invariant mode).
struct PlanKey {
    int32_t batch_size = 0, total_q = 0, max_q_len = 0, max_kv_len = 0, num_heads = 0;
    int32_t q_dtype = 0, kv_dtype = 0, v_dtype = 0, o_dtype = 0, rope_dtype = 0;
    uint32_t flags = 0;
    int32_t device = 0;
    bool operator==(const PlanKey& o) const;
};

struct DevicePlan {
    PlanKey key;
    int kv_format = 0;        // splitkv::KvFormat: the cache format, V source included
    int variant = 0;          // splitkv::Stage1Variant of stage 1
    int rows_per_cta = 16;    // query rows one stage-1 CTA serves (the variant's)
    int tile_tokens = 64;     // cache tokens per stage-1 tile: the split granularity
    int multiprocessors = 0;
    int num_splits = 1;       // max splits per element; 1 = the single-split path
    int tiles_per_split = 1;
    int row_groups = 1;       // stage-1 CTAs per (element, split)
    bool fp8_mma = false;     // the score product on the e4m3 tensor core: MLA_DECODE_FLAG_
                              // FP8_MMA with e4m3fn Q and cache, variant wgmma
    bool tma = false;         // stage 1's kernel may take whole tiles by TMA where the cache
                              // allows it (splitkv::wgmma_tiles_by_tma: swizzled stages, at 16
                              // rows 8 tiles a split or more; NVIDIA builds), unless
                              // MLA_DECODE_TMA=0
    bool dependent_launch = false;  // the reduce as a programmatic dependent of stage 1 (PDL):
                                    // split path on NVIDIA sm_90+ (DeviceInfo::dependent_reduce)
                                    // unless MLA_DECODE_PDL=0
    int reduce_shared_bytes = 0;    // with dependent_launch: each reduce CTA's reservation, so
                                    // that the reduce spreads over the SMs
                                    // (splitkv::reduce_spread_shared_bytes); its device's
    int reduce_shared_limit = 0;    // largest (one CTA per SM), the reduce's raised limit
    bool balanced = false;    // the balanced schedule (kernels/splitkv/balanced.h): stage 1 on
    int balanced_ctas = 0;    // balanced_ctas CTAs that walk items across elements, then the
                              // reduce (num_splits 1: no uniform split); MLA_DECODE_SCHEDULE
    size_t partial_o_offset = 0, partial_lse_offset = 0, partial_meta_offset = 0;
    size_t workspace_bytes = 0;
    double predicted_us = 0.0;
    char description[640] = {};
};

// What the caller's environment asks of plans (device.cpp reads it once).
struct PlanOptions {
    int forced_splits = 0;  // > 0: this split count (MLA_DECODE_NUM_SPLITS)
    int forced_rows = 0;    // > 0: this many query rows per CTA, where a candidate variant has
                            // them; otherwise the planner's choice (MLA_DECODE_ROWS)
    Stage1Request stage1;   // a forced stage-1 variant (MLA_DECODE_STAGE1)
    bool dependent_launch = true;   // PDL where the device allows it; MLA_DECODE_PDL=0 turns
                                    // it off (on by default since measured on an H200)
    bool tma = true;  // whole tiles by TMA where a stage-1 kernel can (MLA_DECODE_TMA=0: the
                      // copies everywhere)
    bool balanced = false;  // the balanced schedule where the plan's kernel has it
                            // (MLA_DECODE_SCHEDULE=balanced; plan_create says where not)
};

PlanKey key_of(const mla_decode_params& p, int device);

// SUCCESS when a run with `p` (validated for a device call) on `device` has the plan's key;
// INVALID_VALUE otherwise, saying what differs (first: a run reading V from v_cache where the
// plan reads V from the latent rows, or the other way round, v_dtype saying which; then the
// rope's dtype; then the flags).
mla_status plan_accepts(const DevicePlan& plan, const mla_decode_params& p, int device);

// A plan for `p` (validated with ValidateFor::kWorkspaceQuery) on `device`; expects
// check_stage1_request(options.stage1) == SUCCESS. GPU builds only.
mla_status plan_create(const mla_decode_params& p, const DeviceInfo& device,
                       const PlanOptions& options, DevicePlan* plan);

// Bytes >= the workspace_bytes of plan_create(p, device, options) for every p under
// `max_shape` (validated with ValidateFor::kWorkspaceQuery) that plan_create accepts:
// batch_size, max_q_len, max_kv_len and total_q no larger (and total_q <= batch_size *
// max_q_len, as qo_indptr implies), num_heads, the dtypes and flags equal. The largest of the
// planner's bounds (planner.h) over the candidates plan_create picks from. GPU builds only.
mla_status plan_workspace_bound(const mla_decode_params& max_shape, const DeviceInfo& device,
                                const PlanOptions& options, size_t* bytes);

// Writes plan->description from the plan's fields: route, stage-1 variant, rows per CTA, tile,
// splits, format, shape, CTAs and compute units, "(PDL)" after the reduce where it is a
// programmatic dependent launch, the cost model's estimate and what the environment forced;
// `stage1_note` (choose_stage1_variant's, may be "") is appended. In batch-invariant mode
// (key.flags) the line says so, and that the environment does not apply.
void describe_plan(DevicePlan* plan, const PlanOptions& options, const char* stage1_note);

}  // namespace mla
