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
           kv_dtype == o.kv_dtype && v_dtype == o.v_dtype && o_dtype == o.o_dtype &&
           device == o.device;
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
    k.v_dtype = p.v_dtype;
    k.o_dtype = p.o_dtype;
    k.device = device;
    return k;
}

namespace {
// A v_dtype for messages: "0" (V from the latent rows) or the dtype's name.
const char* v_dtype_text(int v) { return v == 0 ? "0" : dtype_name(static_cast<mla_dtype>(v)); }
}  // namespace

mla_status plan_accepts(const DevicePlan& plan, const mla_decode_params& p, int device) {
    const PlanKey key = key_of(p, device);
    if (key == plan.key) return MLA_STATUS_SUCCESS;
    const char* run_v = v_dtype_text(key.v_dtype);
    const char* plan_v = v_dtype_text(plan.key.v_dtype);
    if ((p.v_cache != nullptr) != (plan.key.v_dtype != 0)) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "the V source is fixed when the plan is made: this run %s a v_cache (v_dtype "
                    "%s) but the plan reads V from %s (made with v_dtype %s); make the plan with "
                    "the v_dtype of the runs",
                    p.v_cache != nullptr ? "passes" : "has no", run_v,
                    plan.key.v_dtype != 0 ? "v_cache" : "the latent rows", plan_v);
    }
    if (key.v_dtype != plan.key.v_dtype) {
        return fail(MLA_STATUS_INVALID_VALUE, "v_dtype %s differs from the plan's %s", run_v,
                    plan_v);
    }
    return fail(MLA_STATUS_INVALID_VALUE,
                "params do not have the plan's shape (batch_size, total_q, max_q_len, max_kv_len, "
                "num_heads, q/kv/v/o dtypes and device must match the mla_decode_plan_create "
                "call)");
}

void describe_plan(DevicePlan* plan, const PlanOptions& options, const char* stage1_note) {
    const PlanKey& k = plan->key;
    const char* kv = splitkv::kv_traits(static_cast<splitkv::KvFormat>(plan->kv_format)).name;
    const char* variant =
        splitkv::stage1_variant_name(static_cast<splitkv::Stage1Variant>(plan->variant));
    const int64_t ctas = static_cast<int64_t>(k.batch_size) * plan->num_splits * plan->row_groups;
    const char* forced = options.forced_splits > 0 ? ", forced by MLA_DECODE_NUM_SPLITS" : "";
    const bool note = stage1_note != nullptr && stage1_note[0] != '\0';
    char head[160];
    std::snprintf(head, sizeof(head),
                  "route=%s variant=%s rows/cta=%d tile=%d splits=%d kv=%s batch=%d q_len<=%d "
                  "heads=%d kv_len<=%d",
                  plan->num_splits == 1 ? "single_split" : "split_kv", variant,
                  plan->rows_per_cta, plan->tile_tokens, plan->num_splits, kv, k.batch_size,
                  k.max_q_len, k.num_heads, k.max_kv_len);
    if (plan->num_splits == 1) {
        std::snprintf(plan->description, sizeof(plan->description),
                      "%s: stage 1 writes O directly, %lld CTAs (%d row groups) on %d compute "
                      "units; splitting does not pay (cost model %.1f us%s)%s%s",
                      head, static_cast<long long>(ctas), plan->row_groups,
                      plan->multiprocessors, plan->predicted_us, forced, note ? "; " : "",
                      note ? stage1_note : "");
    } else {
        std::snprintf(plan->description, sizeof(plan->description),
                      "%s: metadata + stage 1 (%d splits of %d tiles, %lld CTAs, %d row groups) "
                      "+ LSE reduce on %d compute units (cost model %.1f us%s), workspace %zu "
                      "B%s%s",
                      head, plan->num_splits, plan->tiles_per_split,
                      static_cast<long long>(ctas), plan->row_groups, plan->multiprocessors,
                      plan->predicted_us, forced, plan->workspace_bytes, note ? "; " : "",
                      note ? stage1_note : "");
    }
}

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace {

// The GPU paths of this release; anything else is UNSUPPORTED with the reason. The format
// includes where V comes from (v_dtype), so a plan's kernels are fixed when it is made.
mla_status gpu_kv_format(const mla_decode_params& p, splitkv::KvFormat* format) {
    if (p.o_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: o_dtype %s is not available (bf16 is)",
                    dtype_name(p.o_dtype));
    if (splitkv::kv_format_of(p.kv_dtype, p.v_dtype, format)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_UNSUPPORTED, "GPU path: kv_dtype %s with v_dtype %s has no kernel",
                dtype_name(p.kv_dtype), v_dtype_text(p.v_dtype));
}

// Stage-1 time per 64-token tile and CTA when latency bound, per kernel: measured on the H200
// (132 SMs) with bench/split_sweep.sh for mma16, where it is the same with 4 or 256 CTAs
// resident (fp8 2.4 us, bf16 3.25, MXFP4 3.3, MXFP4-K/fp8-V 4.3). Not yet measured on AMD, nor
// for other variants: the same figures stand in there.
double tile_latency_us(splitkv::Stage1Variant variant, splitkv::KvFormat f) {
    (void)variant;
    switch (f) {
        case splitkv::KvFormat::kBf16: return 3.25;
        case splitkv::KvFormat::kFp8E4M3FN:
        case splitkv::KvFormat::kFp8E4M3FNUZ: return 2.4;
        case splitkv::KvFormat::kMxfp4: return 3.3;
        default: return 4.3;
    }
}

}  // namespace

mla_status plan_create(const mla_decode_params& p, const DeviceInfo& device,
                       const PlanOptions& options, DevicePlan* plan) {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    MLA_TRY(gpu_kv_format(p, &format));
    const Stage1Choice choice = choose_stage1_variant(
        options.stage1, Stage1Problem{format, p.num_heads, p.max_q_len, p.q_dtype}, device);
    const splitkv::Stage1Shape stage1 = splitkv::stage1_shape(choice.variant);
    if (stage1.rows_per_cta <= 0 || stage1.tile_tokens <= 0)
        return fail(MLA_STATUS_INTERNAL_ERROR,
                    "stage-1 variant %s was chosen but this build has no shape for it "
                    "(splitkv::stage1_shape)",
                    splitkv::stage1_variant_name(choice.variant));
    DevicePlan out;
    out.multiprocessors = device.multiprocessors;
    out.key = key_of(p, device.device);
    out.kv_format = static_cast<int>(format);
    out.variant = static_cast<int>(choice.variant);
    out.rows_per_cta = stage1.rows_per_cta;
    out.tile_tokens = stage1.tile_tokens;
    const SplitKvShape shape{p.batch_size,
                             p.total_q,
                             p.max_q_len,
                             p.max_kv_len,
                             p.num_heads,
                             splitkv::kv_traits(format).streamed_bytes,
                             tile_latency_us(choice.variant, format),
                             stage1.tile_tokens,
                             out.multiprocessors,
                             stage1.rows_per_cta};
    const SplitKvPlan sp = plan_split_kv(shape, options.forced_splits);
    const int64_t grid = static_cast<int64_t>(p.batch_size) * sp.num_splits * sp.row_groups;
    if (grid > 0x7fffffff)
        return fail(MLA_STATUS_UNSUPPORTED,
                    "GPU path: batch_size %d x max_q_len %d x num_heads / %d rows per CTA needs "
                    "%lld CTAs, more than one launch holds",
                    p.batch_size, p.max_q_len, stage1.rows_per_cta, static_cast<long long>(grid));
    out.num_splits = sp.num_splits;
    out.tiles_per_split = sp.tiles_per_split;
    out.row_groups = sp.row_groups;
    out.split_meta_offset = sp.split_meta_offset;
    out.row_meta_offset = sp.row_meta_offset;
    out.partial_o_offset = sp.partial_o_offset;
    out.partial_lse_offset = sp.partial_lse_offset;
    out.workspace_bytes = sp.workspace_bytes;
    out.predicted_us = sp.predicted_us;
    describe_plan(&out, options, choice.note);
    *plan = out;
    return MLA_STATUS_SUCCESS;
}

#endif

}  // namespace mla
