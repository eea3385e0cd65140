#include "plan.h"

#include <cstdio>

#include "error.h"
#include "planner.h"
#include "splitkv/launch.h"  // the stage-1 variants' shapes (GPU builds)
#include "validate.h"

namespace mla {

bool PlanKey::operator==(const PlanKey& o) const {
    return batch_size == o.batch_size && total_q == o.total_q && max_q_len == o.max_q_len &&
           max_kv_len == o.max_kv_len && num_heads == o.num_heads && q_dtype == o.q_dtype &&
           kv_dtype == o.kv_dtype && o_dtype == o.o_dtype && device == o.device;
}

PlanKey key_of(const mla_decode_params& p, int device) {
    PlanKey k;
    k.batch_size = p.batch_size;
    k.total_q = p.total_q;
    k.max_q_len = p.max_q_len;
    k.max_kv_len = p.max_kv_len;
    k.num_heads = p.num_heads;
    k.q_dtype = p.q_dtype;
    k.kv_dtype = p.kv_dtype;
    k.o_dtype = p.o_dtype;
    k.device = device;
    return k;
}

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace {

// The GPU paths of this release; anything else is UNSUPPORTED with the reason. MXFP4 names the
// key format only: whether V comes from the MXFP4 rows or an fp8 v_cache is decided per run
// (value_format), so that a plan made from host fields alone serves both.
mla_status gpu_kv_format(const mla_decode_params& p, splitkv::KvFormat* format) {
    if (p.o_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: o_dtype %s is not available (bf16 is)",
                    dtype_name(p.o_dtype));
    if (splitkv::kv_format_of(p.kv_dtype, static_cast<mla_dtype>(0), format))
        return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_UNSUPPORTED, "GPU path: kv_dtype %s has no kernel",
                dtype_name(p.kv_dtype));
}

// Stage-1 time per 64-token tile and CTA when latency bound, per kernel: measured on the H200
// (132 SMs) with bench/split_sweep.sh, where it is the same with 4 or 256 CTAs resident (fp8
// 2.4 us, bf16 3.25, MXFP4 3.3, MXFP4-K/fp8-V 4.3). Not yet measured on AMD: the same figures
// stand in there.
double tile_latency_us(splitkv::KvFormat f) {
    switch (f) {
        case splitkv::KvFormat::kBf16: return 3.25;
        case splitkv::KvFormat::kFp8E4M3FN:
        case splitkv::KvFormat::kFp8E4M3FNUZ: return 2.4;
        case splitkv::KvFormat::kMxfp4: return 3.3;
        default: return 4.3;
    }
}

void describe(DevicePlan* plan, splitkv::KvFormat format, const PlanOptions& options) {
    const PlanKey& k = plan->key;
    const char* kv = splitkv::kv_traits(format).name;
    const int64_t ctas = static_cast<int64_t>(k.batch_size) * plan->num_splits * plan->row_groups;
    if (plan->num_splits == 1) {
        std::snprintf(plan->description, sizeof(plan->description),
                      "route=single_split kv=%s batch=%d q_len<=%d heads=%d kv_len<=%d: stage 1 "
                      "writes O directly, %lld CTAs (%d row groups) on %d compute units; "
                      "splitting does not pay (cost model %.1f us%s)",
                      kv, k.batch_size, k.max_q_len, k.num_heads, k.max_kv_len,
                      static_cast<long long>(ctas), plan->row_groups, plan->multiprocessors,
                      plan->predicted_us,
                      options.forced_splits > 0 ? ", forced by MLA_DECODE_NUM_SPLITS" : "");
    } else {
        std::snprintf(plan->description, sizeof(plan->description),
                      "route=split_kv kv=%s batch=%d q_len<=%d heads=%d kv_len<=%d: metadata + "
                      "stage 1 (%d splits of %d tiles, %lld CTAs, %d row groups) + LSE reduce on "
                      "%d compute units (cost model %.1f us%s), workspace %zu B",
                      kv, k.batch_size, k.max_q_len, k.num_heads, k.max_kv_len,
                      plan->num_splits, plan->tiles_per_split, static_cast<long long>(ctas),
                      plan->row_groups, plan->multiprocessors, plan->predicted_us,
                      options.forced_splits > 0 ? ", forced by MLA_DECODE_NUM_SPLITS" : "",
                      plan->workspace_bytes);
    }
}

}  // namespace

mla_status plan_create(const mla_decode_params& p, const DeviceInfo& device,
                       const PlanOptions& options, DevicePlan* plan) {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    MLA_TRY(gpu_kv_format(p, &format));
    DevicePlan out;
    out.multiprocessors = device.multiprocessors;
    out.key = key_of(p, device.device);
    out.kv_format = static_cast<int>(format);
    const SplitKvShape shape{p.batch_size,
                             p.total_q,
                             p.max_q_len,
                             p.max_kv_len,
                             p.num_heads,
                             splitkv::kv_traits(format).streamed_bytes,
                             tile_latency_us(format),
                             splitkv::stage1_shape(splitkv::Stage1Variant::kMma16).tile_tokens,
                             out.multiprocessors};
    const SplitKvPlan sp = plan_split_kv(shape, options.forced_splits);
    const int64_t grid = static_cast<int64_t>(p.batch_size) * sp.num_splits * sp.row_groups;
    if (grid > 0x7fffffff)
        return fail(MLA_STATUS_UNSUPPORTED,
                    "GPU path: batch_size %d x max_q_len %d x num_heads/16 needs %lld CTAs, more "
                    "than one launch holds",
                    p.batch_size, p.max_q_len, static_cast<long long>(grid));
    out.num_splits = sp.num_splits;
    out.tiles_per_split = sp.tiles_per_split;
    out.row_groups = sp.row_groups;
    out.split_meta_offset = sp.split_meta_offset;
    out.row_meta_offset = sp.row_meta_offset;
    out.partial_o_offset = sp.partial_o_offset;
    out.partial_lse_offset = sp.partial_lse_offset;
    out.workspace_bytes = sp.workspace_bytes;
    out.predicted_us = sp.predicted_us;
    describe(&out, format, options);
    *plan = out;
    return MLA_STATUS_SUCCESS;
}

#endif

}  // namespace mla
