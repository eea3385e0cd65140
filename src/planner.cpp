#include "planner.h"

#include <algorithm>
#include <cmath>

namespace mla {
namespace {

// The cost model, in microseconds, for batch elements of max_kv_len tokens each.
//
// Stage 1 runs batch * splits * row_groups CTAs, one resident per multiprocessor, in waves.
// Every CTA streams ceil(tiles / splits) tiles; a tile costs its bytes over one
// multiprocessor's share of the memory bandwidth, but never less than the kernel's latency per
// tile (SplitKvShape::tile_latency_us: on the H200 every format's stage 1 is latency bound,
// 2.4 us a tile for fp8 whether 4 or 256 CTAs run, so this term decides). (Row groups of one element and split read
// the same tiles, mostly from L2; the model charges them in full, which keeps it conservative
// for many heads or long q_len.) Each CTA also pays a fixed cost: launch ramp, loading Q,
// filling the copy pipeline, writing its output. Splitting (more than one split) adds the
// metadata kernel and the reduce: two launches, and the reduce reads every split's partial O
// once. Splitting more fills more multiprocessors for small batches and shortens each CTA's
// serial walk over long caches; wave quantization makes the choice non-obvious for mid batches
// (64 elements x 2 splits on 132 units is one wave, x 3 splits is two). A variant whose CTA works
// on several tiles at once (SplitKvShape::tile_parallelism: tile_latency_us is then its time per
// tile in steady state) takes as long for fewer tiles as for that many.
constexpr double kBandwidthBytesPerUs = 3.6e6;  // sustained HBM read rate, bytes per us
constexpr double kExtraLaunchUs = 2.5;          // metadata kernel, reduce kernel: each

size_t align_up(size_t v) { return (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

int64_t tiles_of(const SplitKvShape& s) {
    return std::max<int64_t>(1, (static_cast<int64_t>(s.max_kv_len) + s.tile_tokens - 1) / s.tile_tokens);
}

// The query rows of an element (max_q_len tokens x heads) over the rows one CTA serves.
int row_groups_of(const SplitKvShape& s) {
    const int64_t rows = static_cast<int64_t>(std::max(1, s.max_q_len)) * s.num_heads;
    const int64_t per_cta = std::max(1, s.rows_per_cta);
    return static_cast<int>(std::max<int64_t>(1, (rows + per_cta - 1) / per_cta));
}

// What the split-KV route adds to stage 1 with `splits` splits per element: the metadata and
// reduce launches, and the partial O written by stage 1 and read by the reduce.
double split_route_us(const SplitKvShape& s, int splits) {
    const double partial_bytes = static_cast<double>(s.total_q) * splits * s.num_heads * 512.0 * 4.0;
    return 2.0 * kExtraLaunchUs + 2.0 * partial_bytes / kBandwidthBytesPerUs;
}

// The workspace of plan->num_splits splits: none on the single-split path; otherwise the split
// metadata, then the partial O and LSE rows of every (query row, split).
void lay_out_workspace(const SplitKvShape& shape, SplitKvPlan* plan) {
    if (plan->num_splits == 1) return;  // single-split path: no workspace at all
    const size_t rows = static_cast<size_t>(shape.total_q) * plan->num_splits * shape.num_heads;
    plan->split_meta_offset = 0;
    plan->row_meta_offset = align_up(static_cast<size_t>(shape.batch_size) * kSplitMetaBytes);
    plan->partial_o_offset =
        plan->row_meta_offset + align_up(static_cast<size_t>(shape.total_q) * kRowMetaBytes);
    plan->partial_lse_offset = plan->partial_o_offset + align_up(rows * 512 * sizeof(float));
    plan->workspace_bytes = plan->partial_lse_offset + align_up(rows * sizeof(float));
}

}  // namespace

double predict_split_kv_us(const SplitKvShape& s, int splits) {
    const int64_t tiles = tiles_of(s);
    const int64_t tiles_per_cta = (tiles + splits - 1) / splits;
    const int64_t ctas = static_cast<int64_t>(s.batch_size) * splits * row_groups_of(s);
    const int64_t units = std::max(1, s.multiprocessors);
    const int64_t waves = (ctas + units - 1) / units;
    // One unit's bandwidth share when all are busy; a partly filled last wave is no faster
    // per CTA, which keeps the model conservative.
    const double unit_bytes_per_us = kBandwidthBytesPerUs / static_cast<double>(units);
    const double tile_us = std::max(
        static_cast<double>(s.tile_tokens) * s.kv_row_bytes / unit_bytes_per_us, s.tile_latency_us);
    const int64_t tiles_charged = std::max<int64_t>(tiles_per_cta, s.tile_parallelism);
    const double stage1_us = static_cast<double>(waves) *
                             (static_cast<double>(tiles_charged) * tile_us + s.cta_fixed_us);
    if (splits == 1) return stage1_us;
    return stage1_us + split_route_us(s, splits);
}

SplitKvPlan plan_split_kv(const SplitKvShape& shape, int forced_splits) {
    SplitKvPlan plan;
    const int64_t tiles = tiles_of(shape);
    if (forced_splits > 0) {
        plan.num_splits = std::min(forced_splits, kMaxSplits);
    } else {
        const int max_splits = static_cast<int>(std::min<int64_t>(tiles, kMaxSplits));
        double best = predict_split_kv_us(shape, 1);
        plan.num_splits = 1;
        for (int s = 2; s <= max_splits; ++s) {
            const double us = predict_split_kv_us(shape, s);
            if (us < best * 0.98) {  // a split must win clearly to be worth its overheads
                best = us;
                plan.num_splits = s;
            }
        }
    }
    plan.tiles_per_split = static_cast<int>((tiles + plan.num_splits - 1) / plan.num_splits);
    plan.row_groups = row_groups_of(shape);
    plan.predicted_us = predict_split_kv_us(shape, plan.num_splits);
    lay_out_workspace(shape, &plan);
    return plan;
}

// Why 1024 tokens. The cost model above (mma16 on the H200, fp8: 2.4 us a tile) against
// mma16's best split count per shape, geometric means over the 8 competition shapes / 7
// engine shapes (H128, q_len 2 and 4, 32k and 64k tokens): 256-token splits 1.28x / 1.29x,
// 512 1.34x / 1.10x, 1024 1.56x / 1.09x, 2048 1.65x / 1.14x. Short splits lose on large
// batches (more partial O to write and reduce), long ones on small batches (idle units, long
// serial walks: bs4 kv8192 46 vs 19 us with 1024). 1024 over 512: the same for large batches
// and long caches, and half the workspace of long caches, which grows with the splits (bs64
// H128 at 128k tokens: 2 GiB of partial O with 1024, 4 GiB with 512); 512 would be about 15%
// faster on the competition shapes' small batches. mla_bench --mla_batch_invariant measures
// the real cost; kInvariantSplitTokens is the one place to change it.
SplitKvPlan plan_split_kv_invariant(const SplitKvShape& shape) {
    SplitKvPlan plan;
    plan.tiles_per_split = std::max(1, kInvariantSplitTokens / std::max(1, shape.tile_tokens));
    const int splits = static_cast<int>((tiles_of(shape) + plan.tiles_per_split - 1) /
                                        plan.tiles_per_split);
    plan.num_splits = std::max(2, splits);  // the grid's bound; elements take what they need
    plan.row_groups = row_groups_of(shape);
    plan.predicted_us = predict_split_kv_us(shape, splits);
    if (splits == 1) plan.predicted_us += split_route_us(shape, 1);  // the reduce all the same
    lay_out_workspace(shape, &plan);
    return plan;
}

}  // namespace mla
