#include "plan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "error.h"
#include "planner.h"
#include "splitkv/launch.h"  // the stage-1 variants' shapes (GPU builds)
#include "validate.h"

namespace mla {

bool PlanKey::operator==(const PlanKey& o) const {
    return batch_size == o.batch_size && total_q == o.total_q && max_q_len == o.max_q_len &&
           max_kv_len == o.max_kv_len && num_heads == o.num_heads && q_dtype == o.q_dtype &&
           kv_dtype == o.kv_dtype && v_dtype == o.v_dtype && o_dtype == o.o_dtype &&
           rope_dtype == o.rope_dtype && flags == o.flags && device == o.device;
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
    k.rope_dtype = p.kpe_dtype != 0 ? p.kpe_dtype : p.kv_dtype;
    k.flags = p.flags;
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
    if (key.device != plan.key.device) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "the plan was made on device %d but device %d is current: a plan serves the "
                    "device it was made on; make one per device",
                    plan.key.device, key.device);
    }
    const char* run_v = v_dtype_text(key.v_dtype);
    const char* plan_v = v_dtype_text(plan.key.v_dtype);
    // Validated params read V from v_cache exactly when v_dtype is FP8 (v_cache may be NULL
    // only in an empty pool, num_slots 0, where nothing is read).
    const bool run_v_cache = key.v_dtype != 0, plan_v_cache = plan.key.v_dtype != 0;
    if (run_v_cache != plan_v_cache) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "the V source is fixed when the plan is made: this run reads V from %s "
                    "(v_dtype %s) but the plan reads V from %s (made with v_dtype %s); make the "
                    "plan with the v_dtype of the runs",
                    run_v_cache ? "v_cache" : "the latent rows", run_v,
                    plan_v_cache ? "v_cache" : "the latent rows", plan_v);
    }
    if (key.v_dtype != plan.key.v_dtype) {
        return fail(MLA_STATUS_INVALID_VALUE, "v_dtype %s differs from the plan's %s", run_v,
                    plan_v);
    }
    if (key.rope_dtype != plan.key.rope_dtype && key.kv_dtype == plan.key.kv_dtype) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "the rope's dtype is fixed when the plan is made (it picks the kernel): this "
                    "run's rope dims are %s (kpe_dtype %s) but the plan's are %s; make the plan "
                    "with the kpe_dtype of the runs",
                    dtype_name(static_cast<mla_dtype>(key.rope_dtype)),
                    key.rope_dtype == key.kv_dtype ? "0 or kv_dtype" : "BF16",
                    dtype_name(static_cast<mla_dtype>(plan.key.rope_dtype)));
    }
    if (key.flags != plan.key.flags) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "flags 0x%x differ from the plan's 0x%x: the mode (batch-invariant, fp8 MMA) "
                    "is fixed when the plan is made; make the plan with the flags of the runs",
                    key.flags, plan.key.flags);
    }
    return fail(MLA_STATUS_INVALID_VALUE,
                "params do not have the plan's shape (batch_size, total_q, max_q_len, max_kv_len, "
                "num_heads, q/kv/v/o and rope dtypes, flags and device must match the "
                "mla_decode_plan_create call)");
}

namespace {
// Whether the plan's stage-1 kernel is the wgmma variant's long-CTA kernel (variants.h).
bool long_cta_kernel(const DevicePlan& plan) {
    return plan.variant == static_cast<int>(splitkv::Stage1Variant::kWgmma) &&
           splitkv::wgmma_long_cta(static_cast<splitkv::KvFormat>(plan.kv_format),
                                   plan.rows_per_cta, plan.tiles_per_split);
}
// Whether the plan's stage-1 kernel takes whole tiles by TMA where the cache allows it: it keeps
// its stages in wgmma's swizzle, and the 16-row seesaw's splits are long enough
// (splitkv::wgmma_tiles_by_tma).
bool takes_tma(const DevicePlan& plan) {
    return plan.variant == static_cast<int>(splitkv::Stage1Variant::kWgmma) &&
           splitkv::wgmma_tiles_by_tma(static_cast<splitkv::KvFormat>(plan.kv_format),
                                       plan.rows_per_cta, plan.tiles_per_split);
}
// Whether the plan's stage-1 kernel has a balanced-schedule form (variants.h, wgmma_balanced).
// (Unused in builds without a GPU backend: plan_create and plan_workspace_bound use it.)
[[maybe_unused]] bool balanced_kernel(splitkv::Stage1Variant variant, splitkv::KvFormat format) {
    return variant == splitkv::Stage1Variant::kWgmma && splitkv::wgmma_balanced(format);
}
}  // namespace

void describe_plan(DevicePlan* plan, const PlanOptions& options, const char* stage1_note) {
    const PlanKey& k = plan->key;
    const char* kv = splitkv::kv_traits(static_cast<splitkv::KvFormat>(plan->kv_format)).name;
    const char* variant =
        splitkv::stage1_variant_name(static_cast<splitkv::Stage1Variant>(plan->variant));
    const int64_t ctas = static_cast<int64_t>(k.batch_size) * plan->num_splits * plan->row_groups;
    const bool invariant = (k.flags & MLA_DECODE_FLAG_BATCH_INVARIANT) != 0;
    // What the environment forced (plan_create: the rows where a candidate has them).
    char forced[192] = "";
    if (!invariant && options.forced_rows > 0) {
        if (plan->rows_per_cta == options.forced_rows)
            std::snprintf(forced, sizeof(forced), ", rows forced by MLA_DECODE_ROWS");
        else
            std::snprintf(forced, sizeof(forced), ", MLA_DECODE_ROWS=%d: no candidate has them",
                          options.forced_rows);
    }
    if (!invariant && options.forced_splits > 0 && !plan->balanced)
        std::snprintf(forced + std::strlen(forced), sizeof(forced) - std::strlen(forced),
                      ", forced by MLA_DECODE_NUM_SPLITS");
    if (!invariant && options.balanced && !plan->balanced)
        std::snprintf(forced + std::strlen(forced), sizeof(forced) - std::strlen(forced),
                      ", MLA_DECODE_SCHEDULE=balanced: not for this kernel (wgmma, e4m3fn)");
    if (invariant) {  // the environment's switches do not apply (stage1_note is not used)
        stage1_note = options.forced_splits > 0 || options.forced_rows > 0 ||
                              options.stage1.forced
                          ? "batch-invariant mode: fixed split boundaries, split-KV route and "
                            "mma16 whatever the batch (MLA_DECODE_NUM_SPLITS, MLA_DECODE_ROWS "
                            "and MLA_DECODE_STAGE1 do not apply)"
                          : "batch-invariant mode: fixed split boundaries, split-KV route and "
                            "mma16 whatever the batch";
    }
    const bool note = stage1_note != nullptr && stage1_note[0] != '\0';
    // Plans whose kernel would take whole tiles by TMA, with TMA turned off.
    const char* tma_off =
        !options.tma && takes_tma(*plan) ? ", every tile copied (MLA_DECODE_TMA=0)" : "";
    const bool long_cta = long_cta_kernel(*plan);
    // mma16 plans of a build whose mma16 copies are not the backend's default (MLA_MMA16_COPIES).
    const bool copies = plan->variant == static_cast<int>(splitkv::Stage1Variant::kMma16) &&
                        splitkv::kMma16Copies != splitkv::kMma16CopiesDefault;
    char head[256];
    std::snprintf(head, sizeof(head),
                  "route=%s variant=%s%s%s rows/cta=%d tile=%d splits=%d kv=%s batch=%d "
                  "q_len<=%d heads=%d kv_len<=%d%s%s",
                  plan->balanced ? "balanced" : plan->num_splits == 1 ? "single_split" : "split_kv",
                  variant,
                  plan->fp8_mma ? " (e4m3 scores)" : "",
                  long_cta ? " (long CTAs: three consumers)" : "", plan->rows_per_cta,
                  plan->tile_tokens, plan->num_splits, kv, k.batch_size,
                  k.max_q_len, k.num_heads, k.max_kv_len, copies ? " copies=" : "",
                  copies ? splitkv::mma16_copies_name(splitkv::kMma16Copies) : "");
    if (plan->balanced) {
        std::snprintf(plan->description, sizeof(plan->description),
                      "%s: stage 1 (balanced, MLA_DECODE_SCHEDULE: %d CTAs in gangs of %d row "
                      "groups, up to %d tiles each) + LSE reduce%s on %d compute units (cost model "
                      "%.1f us, not fitted), workspace %zu B%s%s%s",
                      head, plan->balanced_ctas, plan->row_groups, plan->tiles_per_split,
                      plan->dependent_launch ? " (PDL)" : "", plan->multiprocessors,
                      plan->predicted_us, plan->workspace_bytes, tma_off, note ? "; " : "",
                      note ? stage1_note : "");
    } else if (plan->num_splits == 1) {
        std::snprintf(plan->description, sizeof(plan->description),
                      "%s: stage 1 writes O directly, %lld CTAs (%d row groups) on %d compute "
                      "units; splitting does not pay (cost model %.1f us%s)%s%s%s",
                      head, static_cast<long long>(ctas), plan->row_groups,
                      plan->multiprocessors, plan->predicted_us, forced, tma_off,
                      note ? "; " : "",
                      note ? stage1_note : "");
    } else {
        std::snprintf(plan->description, sizeof(plan->description),
                      "%s: stage 1 (%d splits of %d tiles, %lld CTAs, %d row groups) "
                      "+ LSE reduce%s on %d compute units (cost model %.1f us%s), workspace %zu "
                      "B%s%s%s",
                      head, plan->num_splits, plan->tiles_per_split,
                      static_cast<long long>(ctas), plan->row_groups,
                      plan->dependent_launch ? " (PDL)" : "", plan->multiprocessors,
                      plan->predicted_us, forced, plan->workspace_bytes, tma_off,
                      note ? "; " : "",
                      note ? stage1_note : "");
    }
}

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace {

// The GPU paths of this release; anything else is UNSUPPORTED with the reason. The format
// includes where V comes from (v_dtype) and the rope's dtype (kpe_dtype: a BF16 rope beside an
// FP8 latent has kernels of its own), so a plan's kernels are fixed when it is made.
mla_status gpu_kv_format(const mla_decode_params& p, splitkv::KvFormat* format) {
    if (p.o_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: o_dtype %s is not available (bf16 is)",
                    dtype_name(p.o_dtype));
    if (splitkv::kv_format_of(p.kv_dtype, p.v_dtype, p.kpe_dtype, format))
        return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_UNSUPPORTED,
                "GPU path: kv_dtype %s with v_dtype %s and kpe_dtype %s has no kernel",
                dtype_name(p.kv_dtype), v_dtype_text(p.v_dtype), v_dtype_text(p.kpe_dtype));
}

// The cost table of stage 1 per (variant, format, rows per CTA): time per 64-token tile and CTA
// when not bandwidth bound, the tiles a CTA works on at once, the per-CTA fixed cost, and what a
// wave of CTAs costs more when it splits (split_cta_us; since the twenty-fourth session).
// Measured on the H200 (132 SMs, the only GPU this project runs on; AMD uses the same figures):
//   mma16: bench/split_sweep.sh, the same with 4 or 256 CTAs resident: fp8 2.4 us, bf16 3.25,
//     MXFP4 3.3, MXFP4-K/fp8-V 4.3 per tile.
//   wgmma (fp8): whole-GPU single-split runs of stage 1 alone (cold cache, 21 calls, scratch
//     harness, 2026-12-01, seesaw version): 16 rows 1.37 us per tile (bs4 kv8192 H16: 175 us
//     for 128 tiles per CTA; bs256 kv8192 H16: 362 us), 32 rows 2.0 us (bs128 kv4096 H16 q_len
//     2: 129 us for 64 tiles), 64 rows 3.0 us (bs64 kv4096 H128: 189 us; bs128 kv4096 H16
//     q_len 4: 195 us); its two consumer warpgroups work on two tiles at once. Its fixed cost
//     (Q^T prologue, pipeline fill) on fp8 caches: 2.0 us, as mma16's (bf16 caches keep the
//     estimate of 3.0: not measured). Evidence: the twelfth session's split sweep had bs4
//     kv1024 H16 at 13.6 us on wgmma with 2 tiles a CTA (8 splits) against 14.7 on mma16 with
//     1 (16 splits), where 3.0 chose mma16; in the thirteenth session's A/Bs (bench/ab.py on the
//     shapes a table change moves) every move from mma16 to wgmma at 16 rows won (0.61-0.91x
//     the time; 6 shapes, bf16 and fp8 Q). (Thirteenth session: with the long-CTA tile times
//     of 32 / 64 rows, 1.75 / 2.55 us, the planner moved small batches from 16 rows to 32 or
//     64 with more splits, and those moves lost, 1.02-1.11x: a short CTA of many rows costs
//     more than its tiles when it splits. The twenty-fourth session's split_cta_us, below,
//     charges that, and the table takes the measured tile times since.)
//   wgmma, bf16 cache (16 and 32 rows only; the H200, eighth session, bench/ab.py): 32 rows
//     3.25 us a tile (bs64 kv4096 H128: 412 us for two waves of 64 tiles; bs128 kv4096 H16
//     q_len 2: 212 us for one wave). 16 rows 2.05 us, a guess at 1.5x e4m3fn's: the shapes it
//     serves are bound by bandwidth (bs256 kv8192 H16: 703 us, 1.29x its floor). A tile is
//     twice fp8's bytes (no decode), P^T a bf16 pair (the value products twice) and only two
//     stages fit.
//   wgmma, MXFP4 cache (the H200, fourteenth session, bench/ab.py, the first version: the e2m1
//     decode in the consumers): 16 rows 4.1 us a tile (bs64 kv8192 H16: 270 us for one wave
//     of 64 tiles; bs256 kv8192 H16: 1026 us for two waves of 128), 32 rows 4.3 (bs128 kv4096
//     H16 q_len 2: 281 us for 64 tiles), 64 rows 4.9 (bs64 kv4096 H128 and bs128 kv4096 H16
//     q_len 4: 322 us for 64 tiles). The decode sets the pace whatever the rows, so 16 rows stay
//     on mma16 (3.3; its 16-row shapes ran 1.03-1.17x slower on wgmma) and more rows per
//     element go to wgmma (0.36-0.62x the time of mma16's row groups). With the scale tables
//     built branch-free (same session): 32 rows 3.6 (233 us), 64 rows 4.4 (286 us); 16 rows
//     not measured again (the same 0.85x would give ~3.5, still above mma16's 3.3).
//     Since the fifteenth session 16 rows decode each tile once, in two decoder warpgroups,
//     into a bf16 tile the consumers read as a bf16 cache's: 3.2 us a tile (H200 A/B: bs64
//     kv8192 H16 213 us for 64 tiles; bs256 kv8192 802 for two waves of 128). The sixteenth
//     session's front barrier and producer unroll took ~3.5 % off (~3.1), the seventeenth's
//     shared addresses another ~5 % (~2.9: bs256 kv8192 714 us). Re-fitted in the eighteenth
//     session (docs/perf/h200_2026-12-03_s18, split sweeps forced to each variant): 2.8 us a
//     tile in long CTAs (bs4 / bs32 / bs64 kv8192 single split: 361-367 us for 128 tiles), and
//     tile parallelism 1, not 2: its decoders take one tile after the other, so a CTA's second
//     tile costs ~1.8 us more (bs4 kv1024: 15.5 us with 1 tile a CTA, 17.3 with 2). mma16 was
//     slower than it at every (shape, split count) of the sweep (1.19-1.41x at equal splits),
//     and with 2 the model sent bs4 kv1024 to mma16 (19.5 us against 15.5). The re-fit moves
//     458 of 4,320 grid shapes (docs/notes/experiments/planner_choice_diff.cpp --mxfp4), 451
//     from mma16 to wgmma; the 12 of them A/B-timed ran 0.69-0.98x (geomean 0.77).
//     Since the twentieth session (0.7.4) the decoders write e4m3fn codes with a power of two
//     per token, and 32 rows are staged too (one decoder warpgroup): 16 rows 2.0 us a tile
//     (bs256 kv8192 H16: 498 us for two waves of 128 tiles, 1.94 a tile), 32 rows 2.25 (bs128
//     kv4096 H16 q_len 2: 145 us for 64 tiles), both one tile after the other; 32 rows' fixed
//     cost 4.0, not 2.0: at 2.0 the planner sent bs1 kv4096 H16 q_len 3 from 16 rows (32
//     splits, 17.3 us) to 32 rows of one tile a CTA (64 splits, 22.7 us). A/B of the table
//     (docs/perf/h200_2026-12-03_s20): 64-row shapes moved to 32 rows 0.60-0.85x the time of
//     0.7.3's 64 rows (bs1 kv8192 H128 41.8 -> 25.3 us), bs48 kv2048 H16 16 rows at 2 splits
//     instead of 8 0.85x the staged kernel's time at 8; bs32 kv200 H16 at 1 split instead of
//     4 1.11x (16.4 against 14.8 us: short caches, kept as a known loss). 1,091 of 4,320 grid
//     shapes move (planner_choice_diff --mxfp4), 864 of them from 64 rows to 32.
//     Since 0.7.5 (shorter decoders) 16 rows run ~1.88 us a tile (bs256 kv8192 H16 466 us); the
//     table keeps 2.0: at 1.9 the planner halves the split count of 262 grid shapes' small
//     batches (bs1 kv1024 H16 16 -> 8 splits), i.e. two tiles a CTA where the eighteenth
//     session measured one as faster (bs4 kv1024 15.5 against 17.3 us): the tile time and the
//     fixed cost want re-fitting together, from a split sweep.
//   wgmma, re-fitted in the twenty-fourth session (docs/perf/h200_2026-12-03_s24; the fit:
//     docs/notes/experiments/cost_table_fit_s24.py over the split sweeps of the twenty-second
//     and twenty-third sessions and three A/Bs, choosing among measured plans): short CTAs of
//     32 or 64 rows cost more when they split than the table said (fp8 bs4 kv16384 H16 q_len 4:
//     46.7 us at 64 rows and 32 splits of 8 tiles, 40.7 at 32 rows and 16 splits of 16), but
//     not on the single-split route (bs192 kv64 H16 q_len 3: 38.3 us at 64 rows, 50.6 on
//     mma16). So a split CTA pays split_cta_us more per wave: fp8 1 / 3 / 12 us at 16 / 32 / 64
//     rows, MXFP4 2 / 4 / 12 (mma16 takes wgmma's 16-row figure of its format, fp8 1 and
//     MXFP4 2: the same partial O epilogue, not measured; its other formats and wgmma's bf16
//     0); and the long-CTA tile times of fp8 at 32 / 64 rows are measured ones (1.75 / 2.55,
//     bs128 kv4096 H16 q_len 2 / bs64 kv4096 H128; e4m3fnuz's 2.2 / 2.9 keep the ratios above,
//     not measured again), MXFP4's 32 rows 2.0 (bs32 kv8192 H128: 259 us for 128 tiles in the
//     twenty-first session; 64 rows took 4.27 a tile, so 32 rows now serve bs64 kv4096 H128,
//     267 against 274 us). Among the plans timed per shape, the table's choice is within 2 %
//     of the fastest for fp8 on 77 of 84 shapes (0.7.7's: 61; sum of log regret 1.76 -> 0.30)
//     and MXFP4 on 104 of 106 (83; 1.65 -> 0.08), in sample; the worst left are fp8 small
//     batches of short caches at 16 rows where 32 won by 3-5 % (bs8 kv1024 H128, bs4 kv1024
//     H64 q_len 4). Out of sample (22 moved shapes no fit used): 0.90-1.04x the time of 0.7.7's
//     plans, geomean 0.96.
//   Solo consumers (0.7.9, twenty-fifth session; docs/perf/h200_2026-12-03_s25): wgmma's 32
//     rows (fp8, bf16) and bf16's 16 rows now run 0.95x (fp8 bs128 kv4096 H16 q_len 2: 108.5
//     us, ~1.66 a tile) and 0.78-0.87x (bf16 bs64 kv4096 H128: 319 us, ~2.5 a tile; bs256
//     kv8192 H16: 599) the times above; short split CTAs at 32 rows ~2 % slower (the merge).
//     The table is NOT re-fitted to them yet: its choices were not A/B-timed with new figures.
//   fp8 32 rows re-fitted in the fifty-third session (0.7.33; H100, docs/perf/
//     h100_2026-12-06_s53; the fit: docs/notes/experiments/cost_table_fit_s53.py over a rows x
//     splits sweep of 22 shapes, 314 timed plans): 1.75 -> 1.55 us a tile, split charge 3 -> 4
//     us a wave. Long 32-row CTAs ran 1.2-1.5 us a tile (bs50 kv3500 H32 q_len 2: 74.1 us for
//     55 tiles), so the table sent 64-row shapes to 64 rows where 32 were 5-14 % faster (11 of
//     the 22 shapes chose a plan over 2 % slower than the fastest timed; regret 0.85 -> 0 with
//     the new figures, in sample). 276 of 4,320 grid shapes move (planner_choice_diff
//     wgmma32=1.55,2.0,2,4), 262 from 64 rows to 32; 30 of them timed at both plans out of
//     sample (run_s53_moved_ab.sh): 0.77-1.03x the old plan's time, geomean 0.95.
//     The 16- and 64-row figures stay: the sweep is also right with them.
//     e4m3fnuz's 32 rows keep 2.2 (not timed; only the split charge follows fp8's).
//   mma16, bf16 (twenty-sixth session; docs/perf/h200_2026-12-03_s26): its fixed cost 2.0 ->
//     12.0 us a CTA. With 2.0 the table gave mma16 1,135 of 4,320 bf16 grid shapes (small
//     batches, short caches), and on 15 of them mma16 ran 1.22-1.92x the time of wgmma forced
//     at its own split count (bs4 kv1024 H16: 22.6 against 14.4 us; bs1 kv64 H8 16.0 against
//     10.7): single-tile mma16 CTAs take ~15 us, not ~5. At 12.0 those 15 plans are wgmma's
//     (timed: 0.53-0.84x, geomean 0.66), and no grid shape keeps mma16 where wgmma serves;
//     devices without wgmma (sm_80, AMD) keep mma16, their split counts from the new figure.
//   mma16, fp8 and fp8 latent + bf16 rope, fixed cost per CTA (sixty-eighth session, the H200,
//     docs/perf/h200_2026-12-07_s68; 0.7.41's table had 2.0 for both, and for the rope form a
//     guessed 2.6 us tile and no split charge). On the smallest shapes mma16 ran slower than
//     wgmma at every point timed: fp8 bs1 / bs2 kv1024 and bs4 kv512 H16, where the table chose
//     mma16 (one tile a CTA), 13.3-13.7 us against wgmma's 12.3-12.4 (two tiles a CTA); the rope
//     form 13.9-14.8 against 12.4-12.8 (bs4 kv1024: 14.8 against 12.8). A split sweep of the
//     rope form on mma16 (bs4 kv1024 H16: 21.4 / 16.6 / 14.8 us at 4 / 8 / 16 splits, i.e.
//     4 / 2 / 1 tiles a CTA) gives 2.4 us a tile, as fp8's (bs4 kv8192's sweep, 95.4 / 53.2 /
//     33.1 / 25.9 at 4-32 splits, implies 2.5-2.6 in longer CTAs: the fit uses kv1024 only).
//     With the split route the model charges (~6.2 us at bs4's 16 splits, 5.3-5.6 at bs1 / bs2)
//     and the 1.0 split charge, a single-tile CTA's fixed part is ~5 us for the rope form and
//     ~4-4.7 for fp8 (its 13.3-14.0 us single-tile runs). With 4.0 / 5.0 the 230 of 4,320 fp8
//     grid shapes that chose mma16 on sm_90 (batches of 1-4 with 1,000-4,096 tokens, and every
//     batch of 64-token caches) choose wgmma (docs/notes/experiments/planner_choice_diff.cpp).
//     Plans that only mma16 serves (sm_80, AMD, and e4m3fnuz codes beside a bf16 rope on
//     sm_90 until 0.7.43 gave them wgmma) move too, mostly to fewer splits: on 132 units 80
//     fp8 and 209 rope-form grid shapes change split count or rows. Five of the rope's, timed
//     with mma16 forced on an H100 (s69): 2 faster (bs48 kv2048 H16 2 splits 56.5 against 8's
//     70.5 us), 2 the same, bs16 kv200 H16 slower (1 split 20.6 against 4's 15.4: a 4-tile
//     cache still wants its splits); not re-fitted.
// mma16's tile at 32 and 64 rows (2 and 4 row groups meet each tile: K's loads and decode and
// V's loads once for all of them), against its tile at 16 rows; and the split charge of their
// larger partial rows (wgmma's fp8 figures at those rows). Measured on an H100 (sixty-fifth
// session, docs/perf/h100_2026-12-07_s65, mma16 forced at each row count; fp8 e4m3fn, bf16,
// MXFP4, fp8 + bf16 rope; bs64 kv4096 H128, bs128 kv4096 H16 q_len 2 / 4, bs32 kv8192 H32 / H16):
// 32 rows 1.48-1.62x the 16-row tile's time on shapes of 32+ rows an element (0.74-0.81x the
// time of 16 rows a CTA), 64 rows 2.7-3.0x (0.68-0.76x). Predicted 1.3x and 1.9x from ncu's
// instruction counts (s64: ~4,500 of the 16-row tile's ~6,500 warp instructions shared); missed:
// not measured why. At 64 rows the NVIDIA kernels of fp8, bf16 and the bf16 rope keep one tile in
// flight (Q's 72 KB in shared memory leave room for one); five 64-row kernels spill 72-220 bytes.
// AMD has 16 and 32 rows only (mma16_rows_fit) and takes the same factors, NOT measured there:
// its 32-row kernel has run only on the emulated gfx942 (MLA_DECODE_ROWS=16 keeps 16 rows).
double mma16_rows_factor(int rows) { return rows <= 16 ? 1.0 : (rows <= 32 ? 1.5 : 2.9); }
double mma16_rows_split_us(int rows, double split_us) {
    const double rows_split = rows <= 16 ? 0.0 : (rows <= 32 ? 4.0 : 12.0);
    return split_us > rows_split ? split_us : rows_split;
}

struct Stage1Cost {
    double tile_us;
    int tile_parallelism;
    double cta_fixed_us;
    double split_cta_us = 0.0;  // SplitKvShape::split_cta_us
};
Stage1Cost stage1_cost(splitkv::Stage1Variant variant, splitkv::KvFormat f, int rows) {
    if (variant == splitkv::Stage1Variant::kWgmma) {
        // e4m3fnuz has no hardware conversion: its bit-operation decode costs 1.34x / 1.24x /
        // 1.14x per tile at 16 / 32 / 64 rows (bench, same session).
        const bool fnuz = f == splitkv::KvFormat::kFp8E4M3FNUZ;
        if (f == splitkv::KvFormat::kBf16) return {rows <= 16 ? 2.05 : 3.25, 2, 3.0};
        // e4m3fn codes beside a bf16 rope (WgmmaFp8Bf16RopeDecode; padded stages, copies, 640-byte
        // rows, the rope's steps waited for once a tile): e4m3fn's figures times the rope form's
        // time over e4m3fn's where stage 1 is compute-bound (H100, s67, rows forced: 1.30x at 16
        // rows, 1.16-1.19x at 32, 1.20x at 64 on bs64 kv4096 H128, bs128 kv4096 H16 q_len 2 / 4;
        // 1.05-1.19x on the memory-bound H16 q_len 1 shapes).
        // e4m3fnuz codes beside a bf16 rope (0.7.43, rope-last chain): those figures times the
        // e4m3fnuz form's time over e4m3fn's (H100, s69, wgmma forced at the planner's rows):
        // 1.005-1.067 at 16 rows on H16 q_len 1 (1.03 taken: with 1.07 the planner moved bs64 /
        // bs256 H16 to 32 rows, 1-3 % slower there), 1.02 at 32 (bs128 kv4096 H16 q_len 2),
        // 1.11-1.13 at 64 (bs64 kv4096 H128, H16 q_len 4).
        if (f == splitkv::KvFormat::kFp8E4M3FNBf16Rope ||
            f == splitkv::KvFormat::kFp8E4M3FNUZBf16Rope) {
            const bool rope_fnuz = f == splitkv::KvFormat::kFp8E4M3FNUZBf16Rope;
            if (rows <= 16) return {rope_fnuz ? 1.78 * 1.03 : 1.78, 2, 2.0, 1.0};
            if (rows <= 32) return {rope_fnuz ? 1.82 * 1.03 : 1.82, 2, 2.0, 4.0};
            return {rope_fnuz ? 3.06 * 1.12 : 3.06, 2, 2.0, 12.0};
        }
        // MXFP4 keys beside fp8 values (WgmmaMxfp4Fp8VDecode: K decoded in the consumers, V
        // as fp8's; seventieth session): a guess between fp8's figures and MXFP4's consumer-
        // decoded 64 rows, checked on an H100 (docs/perf/h100_2026-12-08_s70, e4m3fn V, rows
        // forced): the rows it picks were the fastest measured or within 5 % (bs256 kv8192
        // H16: 16 rows 628 us, 32 rows 598; H128 q1 64 rows 231, 32 rows 267; H16 q_len 2 32
        // rows 166, 64 rows 240; q_len 4 64 rows 244, 32 rows 280), and wgmma beat mma16 on
        // all 13 shapes timed, both V flavours (0.39-0.81x; competition geomean 100.1 -> 68.9
        // us, H128 q1 574.9 -> 231.3, e4m3fn V as planned).
        if (f == splitkv::KvFormat::kMxfp4Fp8E4M3FN || f == splitkv::KvFormat::kMxfp4Fp8E4M3FNUZ)
            return rows <= 16 ? Stage1Cost{2.2, 2, 2.0, 1.0}
                              : (rows <= 32 ? Stage1Cost{2.6, 2, 2.0, 4.0}
                                            : Stage1Cost{3.6, 2, 2.0, 12.0});
        if (f == splitkv::KvFormat::kMxfp4)
            return rows <= 16 ? Stage1Cost{2.0, 1, 2.0, 2.0}
                              : (rows <= 32 ? Stage1Cost{2.0, 1, 4.0, 4.0}
                                            : Stage1Cost{4.4, 2, 2.0, 12.0});
        if (rows <= 16) return {fnuz ? 1.84 : 1.37, 2, 2.0, 1.0};
        if (rows <= 32) return {fnuz ? 2.2 : 1.55, 2, 2.0, 4.0};
        return {fnuz ? 2.9 : 2.55, 2, 2.0, 12.0};
    }
    Stage1Cost c{4.3, 1, 2.0};
    switch (f) {
        case splitkv::KvFormat::kBf16: c = {3.25, 1, 12.0}; break;  // fixed cost: above
        // fp8 and the rope form: fixed costs 4.0 / 5.0 (sixty-eighth session, above).
        case splitkv::KvFormat::kFp8E4M3FN:
        case splitkv::KvFormat::kFp8E4M3FNUZ: c = {2.4, 1, 4.0, 1.0}; break;  // 16 rows' split cost
        case splitkv::KvFormat::kFp8E4M3FNBf16Rope:
        case splitkv::KvFormat::kFp8E4M3FNUZBf16Rope: c = {2.4, 1, 5.0, 1.0}; break;
        case splitkv::KvFormat::kMxfp4: c = {3.3, 1, 2.0, 2.0}; break;  // as wgmma's, 16 rows
        // MXFP4 keys beside fp8 values: the tile figure as fitted before (4.3; bs256 kv8192 H16
        // 1,049.7 us on an H100 in the seventieth session, 1,104.8 predicted), the fixed cost
        // fp8's 4.0 (it was 2.0: CTAs of 1-2 tiles took 1.3-1.4x the prediction there, bs4
        // kv1024 16 splits 19.7 us against 12.5, bs32 kv1024 36.6 against 26.5).
        case splitkv::KvFormat::kMxfp4Fp8E4M3FN:
        case splitkv::KvFormat::kMxfp4Fp8E4M3FNUZ: c = {4.3, 1, 4.0}; break;
        default: break;
    }
    c.tile_us *= mma16_rows_factor(rows);
    c.split_cta_us = mma16_rows_split_us(rows, c.split_cta_us);
    return c;
}

// The planner's view of stage 1 of `variant` at `rows` query rows per CTA and its tile size
// for problem `p` in `format` on `device`.
SplitKvShape split_shape(const mla_decode_params& p, splitkv::KvFormat format,
                         const DeviceInfo& device, splitkv::Stage1Variant variant, int tile_tokens,
                         int rows) {
    const Stage1Cost cost = stage1_cost(variant, format, rows);
    return SplitKvShape{p.batch_size,
                        p.total_q,
                        p.max_q_len,
                        p.max_kv_len,
                        p.num_heads,
                        splitkv::kv_traits(format).streamed_bytes,
                        cost.tile_us,
                        tile_tokens,
                        device.multiprocessors,
                        rows,
                        cost.tile_parallelism,
                        cost.cta_fixed_us,
                        cost.split_cta_us};
}

// Batch-invariant mode (MLA_DECODE_FLAG_BATCH_INVARIANT): one variant, mma16, at its 16 rows
// per CTA (16 heads of one query token; each row's softmax and products use only its own Q row
// and the element's cache), always the split-KV route, splits every kInvariantSplitTokens tokens
// (planner.h): nothing that decides a row's arithmetic follows the batch, the device's units or
// the environment. invariant_shape: the planner's view of it; false when this build's mma16
// does not have that shape (never so today).
constexpr auto kInvariantVariant = splitkv::Stage1Variant::kMma16;
constexpr int kInvariantRows = 16;

bool invariant_shape(const mla_decode_params& p, splitkv::KvFormat format,
                     const DeviceInfo& device, SplitKvShape* shape) {
    const splitkv::Stage1Shape stage1 = splitkv::stage1_shape(kInvariantVariant, format);
    if (stage1.rows_per_cta[0] != kInvariantRows || stage1.tile_tokens <= 0 ||
        kInvariantSplitTokens % stage1.tile_tokens != 0)
        return false;
    *shape = split_shape(p, format, device, kInvariantVariant, stage1.tile_tokens, kInvariantRows);
    return true;
}

bool plan_batch_invariant(const mla_decode_params& p, splitkv::KvFormat format,
                          const DeviceInfo& device, DevicePlan* out, SplitKvPlan* sp) {
    SplitKvShape shape;
    if (!invariant_shape(p, format, device, &shape)) return false;
    *sp = plan_split_kv_invariant(shape);
    out->variant = static_cast<int>(kInvariantVariant);
    out->rows_per_cta = kInvariantRows;
    out->tile_tokens = shape.tile_tokens;
    return true;
}

// The default mode's candidates: visit(variant, tile_tokens, rows per CTA) for every
// (stage-1 variant, rows per CTA) that may serve `problem` on `device` (only the forced variant
// when `choice` forces one; only rows per CTA `forced_rows` when it is > 0 and one of them has
// it).
template <typename Visit>
void for_each_candidate(const Stage1Choice& choice, const Stage1Problem& problem,
                        const DeviceInfo& device, int forced_rows, Visit&& visit) {
    bool rows_apply = false;
    for (int pass = forced_rows > 0 ? 0 : 1; pass < 2; ++pass) {  // 0: is forced_rows there?
        for (int v = 0; v < splitkv::kStage1Variants; ++v) {
            const auto variant = static_cast<splitkv::Stage1Variant>(v);
            if (choice.forced ? variant != choice.variant
                              : !stage1_can_serve(variant, problem, device, nullptr, 0))
                continue;
            const splitkv::Stage1Shape stage1 = splitkv::stage1_shape(variant, problem.format);
            for (int rows : stage1.rows_per_cta) {
                if (rows <= 0 || stage1.tile_tokens <= 0) continue;
                if (pass == 0) rows_apply = rows_apply || rows == forced_rows;
                else if (!rows_apply || rows == forced_rows)
                    visit(variant, stage1.tile_tokens, rows);
            }
        }
    }
}

mla_status no_variant(splitkv::KvFormat format) {
    return fail(MLA_STATUS_INTERNAL_ERROR,
                "no stage-1 variant of this build serves kv format %s (splitkv::stage1_shape)",
                splitkv::kv_traits(format).name);
}

}  // namespace

mla_status plan_create(const mla_decode_params& p, const DeviceInfo& device,
                       const PlanOptions& options, DevicePlan* plan) {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    MLA_TRY(gpu_kv_format(p, &format));
    const Stage1Problem problem{format, p.num_heads, p.max_q_len, p.q_dtype};
    const Stage1Choice choice = choose_stage1_variant(options.stage1, problem, device);
    // Every (variant, rows per CTA) that may serve, each with its best split count; the least
    // predicted time wins (ties: the earlier variant, the fewer rows per CTA). Batch-invariant
    // mode has one candidate, fixed.
    DevicePlan out;
    SplitKvPlan sp;
    const bool invariant = (p.flags & MLA_DECODE_FLAG_BATCH_INVARIANT) != 0;
    bool found = invariant && plan_batch_invariant(p, format, device, &out, &sp);
    if (!invariant) {
        for_each_candidate(choice, problem, device, options.forced_rows,
                           [&](splitkv::Stage1Variant variant, int tile_tokens, int rows) {
                               const SplitKvPlan plan_v = plan_split_kv(
                                   split_shape(p, format, device, variant, tile_tokens, rows),
                                   options.forced_splits);
                               if (found && plan_v.predicted_us >= sp.predicted_us) return;
                               found = true;
                               sp = plan_v;
                               out.variant = static_cast<int>(variant);
                               out.rows_per_cta = rows;
                               out.tile_tokens = tile_tokens;
                           });
    }
    if (!found) return no_variant(format);
    out.multiprocessors = device.multiprocessors;
    out.key = key_of(p, device.device);
    out.kv_format = static_cast<int>(format);
    // The balanced schedule where the environment asks for it and the plan's kernel has it:
    // the chosen (variant, rows), as many gangs of row_groups CTAs as the units hold (one at
    // least).
    const auto variant = static_cast<splitkv::Stage1Variant>(out.variant);
    out.balanced = options.balanced && !invariant && balanced_kernel(variant, format);
    if (out.balanced) {
        sp = plan_balanced(
            split_shape(p, format, device, variant, out.tile_tokens, out.rows_per_cta));
        out.balanced_ctas =
            balanced_gangs(sp.row_groups, device.multiprocessors) * sp.row_groups;
    }
    const int64_t grid = static_cast<int64_t>(p.batch_size) * sp.num_splits * sp.row_groups;
    if (grid > 0x7fffffff)
        return fail(MLA_STATUS_UNSUPPORTED,
                    "GPU path: batch_size %d x max_q_len %d x num_heads / %d rows per CTA needs "
                    "%lld CTAs, more than one launch holds",
                    p.batch_size, p.max_q_len, out.rows_per_cta, static_cast<long long>(grid));
    out.num_splits = sp.num_splits;
    out.tiles_per_split = sp.tiles_per_split;
    out.row_groups = sp.row_groups;
    out.fp8_mma = (p.flags & MLA_DECODE_FLAG_FP8_MMA) != 0 && !invariant &&
                  stage1_e4m3_scores(static_cast<splitkv::Stage1Variant>(out.variant), problem,
                                     device, choice.forced);
    // The reduce's launch may overlap the tail of stage 1 where the device, the loaded reduce
    // code and the runtime allow a programmatic dependent launch (DeviceInfo::dependent_reduce);
    // the single-split path has no reduce.
    out.dependent_launch = options.dependent_launch && device.dependent_reduce &&
                           (sp.num_splits > 1 || out.balanced);
    if (out.dependent_launch) {
        const int shared = device.shared_bytes_per_multiprocessor;
        const int reserved = device.reserved_shared_bytes_per_block;
        const int limit = device.max_shared_bytes_per_block;
        out.reduce_shared_limit =
            splitkv::reduce_spread_shared_bytes(1, 1, shared, reserved, limit);
        out.reduce_shared_bytes = splitkv::reduce_spread_shared_bytes(
            splitkv::reduce_ctas(static_cast<int64_t>(p.total_q) * p.num_heads,
                                 out.balanced ? 1 : sp.num_splits),  // balanced: a warp a unit
            device.multiprocessors, shared, reserved, limit);
    }
    // Whole tiles by TMA where the kernel takes them (variants.h: swizzled stages, and at 16
    // rows splits of 8 tiles or more), unless the environment turns it off (MLA_DECODE_TMA=0).
    out.tma = options.tma && takes_tma(out);
    out.partial_o_offset = sp.partial_o_offset;
    out.partial_lse_offset = sp.partial_lse_offset;
    out.partial_meta_offset = sp.partial_meta_offset;
    out.workspace_bytes = sp.workspace_bytes;
    out.predicted_us = sp.predicted_us;
    describe_plan(&out, options, choice.note);
    *plan = out;
    return MLA_STATUS_SUCCESS;
}

mla_status plan_workspace_bound(const mla_decode_params& max_shape, const DeviceInfo& device,
                                const PlanOptions& options, size_t* bytes) {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    MLA_TRY(gpu_kv_format(max_shape, &format));
    size_t bound = 0;
    bool found = false;
    if ((max_shape.flags & MLA_DECODE_FLAG_BATCH_INVARIANT) != 0) {
        SplitKvShape shape;
        found = invariant_shape(max_shape, format, device, &shape);
        if (found) bound = split_kv_invariant_workspace_bound(shape);
    } else {
        // stage1_can_serve does not look at max_q_len (every variant serves any q_len), so the
        // largest shape's candidates are every smaller shape's.
        const Stage1Problem problem{format, max_shape.num_heads, max_shape.max_q_len,
                                    max_shape.q_dtype};
        const Stage1Choice choice = choose_stage1_variant(options.stage1, problem, device);
        for_each_candidate(choice, problem, device, options.forced_rows,
                           [&](splitkv::Stage1Variant variant, int tile_tokens, int rows) {
                               found = true;
                               const SplitKvShape shape = split_shape(
                                   max_shape, format, device, variant, tile_tokens, rows);
                               bound = std::max(
                                   bound, split_kv_workspace_bound(shape, options.forced_splits));
                               if (options.balanced && balanced_kernel(variant, format))
                                   bound = std::max(bound,
                                                    plan_balanced(shape).workspace_bytes);
                           });
    }
    if (!found) return no_variant(format);
    *bytes = bound;
    return MLA_STATUS_SUCCESS;
}

#endif

}  // namespace mla
