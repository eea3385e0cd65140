#include "planner.h"

#include <algorithm>
#include <cmath>

namespace mla {
namespace {

// The cost model, in microseconds, for batch elements of max_kv_len tokens each.
//
// Stage 1 runs batch * splits CTAs, one resident per multiprocessor, in waves. Every CTA
// streams ceil(tiles / splits) tiles; a tile costs its bytes over one multiprocessor's share of
// the memory bandwidth (the kernel is built to be bandwidth bound when the GPU is full). Each
// CTA also pays a fixed cost: launch ramp, loading Q, filling the copy pipeline, writing its
// partial O. The reduce then reads every split's partial O once, and a second launch costs a
// few microseconds on its own. Splitting more fills more multiprocessors for small batches and
// shortens each CTA's serial walk over long caches; it costs fixed overhead per CTA and reduce
// traffic per split. Wave quantization is what makes the choice non-obvious for mid batches:
// 64 elements x 2 splits on 132 units is one wave, x 3 splits is two.
constexpr double kBandwidthBytesPerUs = 3.6e6;  // sustained HBM read rate, bytes per us
constexpr double kCtaFixedUs = 2.0;             // per-CTA prologue + epilogue
constexpr double kReduceLaunchUs = 3.0;

double predict_us(const SplitKvShape& s, int splits) {
    const int64_t tiles = std::max<int64_t>(1, (static_cast<int64_t>(s.max_kv_len) +
                                                s.tile_tokens - 1) / s.tile_tokens);
    const int64_t tiles_per_cta = (tiles + splits - 1) / splits;
    const int64_t ctas = static_cast<int64_t>(s.batch_size) * splits;
    const int64_t units = std::max(1, s.multiprocessors);
    const int64_t waves = (ctas + units - 1) / units;
    // One unit's bandwidth share when all are busy; a partly filled last wave is no faster
    // per CTA, which keeps the model conservative.
    const double unit_bytes_per_us = kBandwidthBytesPerUs / static_cast<double>(units);
    const double tile_us = static_cast<double>(s.tile_tokens) * s.kv_row_bytes / unit_bytes_per_us;
    const double stage1_us = static_cast<double>(waves) *
                             (static_cast<double>(tiles_per_cta) * tile_us + kCtaFixedUs);
    const double partial_bytes = static_cast<double>(s.total_q) * splits * s.num_heads * 512.0 * 4.0;
    const double reduce_us = kReduceLaunchUs + 2.0 * partial_bytes / kBandwidthBytesPerUs;
    return stage1_us + reduce_us;
}

size_t align_up(size_t v) { return (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

}  // namespace

SplitKvPlan plan_split_kv(const SplitKvShape& shape, int forced_splits) {
    SplitKvPlan plan;
    const int64_t tiles = std::max<int64_t>(1, (static_cast<int64_t>(shape.max_kv_len) +
                                                shape.tile_tokens - 1) / shape.tile_tokens);
    if (forced_splits > 0) {
        plan.num_splits = std::min(forced_splits, kMaxSplits);
    } else {
        const int max_splits = static_cast<int>(std::min<int64_t>(tiles, kMaxSplits));
        double best = predict_us(shape, 1);
        plan.num_splits = 1;
        for (int s = 2; s <= max_splits; ++s) {
            const double us = predict_us(shape, s);
            if (us < best * 0.98) {  // a split must win clearly to be worth its overheads
                best = us;
                plan.num_splits = s;
            }
        }
    }
    plan.predicted_us = predict_us(shape, plan.num_splits);
    const size_t rows = static_cast<size_t>(shape.total_q) * plan.num_splits * shape.num_heads;
    plan.partial_o_offset = 0;
    plan.partial_lse_offset = align_up(rows * 512 * sizeof(float));
    plan.workspace_bytes = plan.partial_lse_offset + align_up(rows * sizeof(float));
    return plan;
}

}  // namespace mla
